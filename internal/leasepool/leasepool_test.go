package leasepool

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestPositive(t *testing.T) {
	for _, tc := range []struct{ v, want time.Duration }{{5, 5}, {0, 9}, {-1, 9}} {
		d := time.Duration(9)
		Positive(&d, tc.v)
		if d != tc.want {
			t.Errorf("Positive(9, %v) = %v, want %v", tc.v, d, tc.want)
		}
	}
}

func TestWorkerName(t *testing.T) {
	if got := WorkerName("w1", "runner"); got != "w1" {
		t.Errorf("WorkerName(w1) = %q", got)
	}
	a, b := WorkerName("", "runner"), WorkerName("", "runner")
	if a == b || strings.Count(a, "-") < 2 {
		t.Errorf("WorkerName() = %q, %q: want distinct host-pid-suffix names", a, b)
	}
}

// TestHeartbeat: the heartbeat renews every interval, stops with its
// context unless that ended with the linger cause, and always at stop.
func TestHeartbeat(t *testing.T) {
	errLinger := errors.New("linger")
	for _, tc := range []struct {
		name   string
		linger error
		cause  error
		more   bool // renews after the context ends
	}{
		{"no linger", nil, errLinger, false},
		{"other cause", errLinger, errors.New("other"), false},
		{"linger", errLinger, errLinger, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancelCause(t.Context())
				var n atomic.Int32
				stop := Heartbeat(ctx, time.Second, tc.linger, func() { n.Add(1) })
				time.Sleep(2500 * time.Millisecond)
				if got := n.Load(); got != 2 {
					t.Fatalf("renewed %d times in 2.5 intervals, want 2", got)
				}
				cancel(tc.cause)
				synctest.Wait()
				time.Sleep(2 * time.Second)
				if got := n.Load() > 2; got != tc.more {
					t.Errorf("renewed after the context ended: %v, want %v", got, tc.more)
				}
				stop()
				stop()
				before := n.Load()
				time.Sleep(3 * time.Second)
				if n.Load() != before {
					t.Error("renewed after stop")
				}
			})
		})
	}
}
