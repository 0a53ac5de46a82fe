package completions_test

import (
	"bufio"
	"context"
	"iter"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/completions"
)

type blockingBackend struct {
	blocked, returned chan struct{}
}

func (b *blockingBackend) Complete(ctx context.Context, _ *completions.Params) (*completions.Result, error) {
	defer close(b.returned)
	close(b.blocked)
	<-ctx.Done()
	return nil, ctx.Err()
}

func (b *blockingBackend) Stream(ctx context.Context, _ *completions.Params) iter.Seq2[completions.Delta, error] {
	return func(yield func(completions.Delta, error) bool) {
		defer close(b.returned)
		if !yield(completions.Delta{Text: "first"}, nil) {
			return
		}
		close(b.blocked)
		<-ctx.Done()
		yield(completions.Delta{}, ctx.Err())
	}
}

// TestClientDisconnect hangs up in the middle of a request and checks that
// the backend sees the cancellation, the handler returns, and the number
// of goroutines comes back to what it was (so it does not run in
// parallel).
func TestClientDisconnect(t *testing.T) {
	for _, stream := range []string{"true", "false"} {
		t.Run("stream="+stream, func(t *testing.T) {
			b := &blockingBackend{blocked: make(chan struct{}), returned: make(chan struct{})}
			h := newHandlerWith(b)
			served := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer close(served)
				h.ServeHTTP(w, r)
			}))
			defer srv.Close()
			client := srv.Client()
			baseline := runtime.NumGoroutine()

			ctx, hangUp := context.WithCancel(t.Context())
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/completions",
				strings.NewReader(`{"model":"demo-chat","prompt":"x","stream":`+stream+`}`))
			require.NoError(t, err)
			done := make(chan struct{})
			read := make(chan struct{}) // closed once the first event is read
			go func() {
				defer close(done)
				res, err := client.Do(req)
				if err != nil {
					return
				}
				defer res.Body.Close()
				line, _ := bufio.NewReader(res.Body).ReadString('\n')
				if !strings.HasPrefix(line, "data: {") {
					t.Errorf("first line %q, want an event", line)
				}
				close(read)
				<-ctx.Done()
			}()
			<-b.blocked
			if stream == "true" {
				<-read
			}
			hangUp()
			<-b.returned
			<-served
			<-done
			client.CloseIdleConnections()
			n := runtime.NumGoroutine()
			for i := 0; i < 500 && n > baseline; i++ {
				time.Sleep(10 * time.Millisecond)
				n = runtime.NumGoroutine()
			}
			require.LessOrEqual(t, n, baseline, "goroutines leaked")
		})
	}
}
