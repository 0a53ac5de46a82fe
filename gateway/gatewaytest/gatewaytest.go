// Package gatewaytest holds the conformance suite of package gateway's
// [gateway.Pinger], the optional readiness capability of stores and
// other dependencies, and [NewDemo], the demo gateway as a test fixture.
// Every Pinger in this repository runs the suite; run it against your
// own:
//
//	func TestPing(t *testing.T) {
//		gatewaytest.TestPinger(t, func(t *testing.T) gateway.Pinger { return openMyStore(t) })
//	}
package gatewaytest

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/gateway"
)

// TestPinger checks the Pinger contract. newPinger is called once per
// subtest and must return a Pinger whose dependency answers.
func TestPinger(t *testing.T, newPinger func(t *testing.T) gateway.Pinger) {
	t.Run("AnswersNilWhileItsDependencyAnswers", func(t *testing.T) {
		t.Parallel()
		require.NoError(t, newPinger(t).Ping(context.Background()))
	})
	t.Run("FailsWhenTheContextIsDone", func(t *testing.T) {
		t.Parallel()
		p := newPinger(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.Error(t, p.Ping(ctx), "a readiness check bounds Ping with its context")
	})
	t.Run("IsSafeForConcurrentUse", func(t *testing.T) {
		t.Parallel()
		p := newPinger(t)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() { errs[i] = p.Ping(context.Background()) })
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
	})
}
