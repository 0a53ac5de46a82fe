package responses_test

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

	"github.com/gatewaykit/gatewaykit/responses"
)

// blockingBackend sends one delta (when streaming), then blocks until its
// context ends, and reports that it has returned.
type blockingBackend struct {
	blocked  chan struct{} // closed when the backend blocks
	returned chan struct{} // closed when it returns
}

func newBlockingBackend() *blockingBackend {
	return &blockingBackend{blocked: make(chan struct{}), returned: make(chan struct{})}
}

func (b *blockingBackend) Complete(ctx context.Context, _ *responses.Params) (*responses.Result, error) {
	defer close(b.returned)
	close(b.blocked)
	<-ctx.Done()
	return nil, ctx.Err()
}

func (b *blockingBackend) Stream(ctx context.Context, _ *responses.Params) iter.Seq2[responses.Delta, error] {
	return func(yield func(responses.Delta, error) bool) {
		defer close(b.returned)
		if !yield(responses.Delta{Text: "first"}, nil) {
			return
		}
		close(b.blocked)
		<-ctx.Done()
		yield(responses.Delta{}, ctx.Err())
	}
}

// TestClientDisconnect hangs up in the middle of a request and checks that
// the backend sees the cancellation, the handler returns without storing
// the response, and the number of goroutines comes back to what it was.
// It does not run in parallel: it counts goroutines.
func TestClientDisconnect(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(map[bool]string{true: "Stream", false: "JSON"}[stream], func(t *testing.T) {
			b := newBlockingBackend()
			store := responses.NewMemoryStore(nil)
			h := newHandlerWith(b, responses.WithStore(store))
			served := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer close(served)
				h.ServeHTTP(w, r)
			}))
			defer srv.Close()
			client := srv.Client()
			baseline := runtime.NumGoroutine()

			ctx, hangUp := context.WithCancel(t.Context())
			body := `{"model":"demo-chat","input":"Hi","stream":` + map[bool]string{true: "true", false: "false"}[stream] + `}`
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/responses", strings.NewReader(body))
			require.NoError(t, err)
			done := make(chan struct{})
			read := make(chan struct{}) // closed once the first event is read
			go func() {
				defer close(done)
				res, err := client.Do(req)
				if err != nil {
					return // hung up before the reply
				}
				defer res.Body.Close()
				// Read the first event, then wait to be hung up on.
				line, _ := bufio.NewReader(res.Body).ReadString('\n')
				if line != "event: response.created\n" {
					t.Errorf("first line %q, want the created event", line)
				}
				close(read)
				<-ctx.Done()
			}()

			<-b.blocked
			if stream {
				<-read
			}
			hangUp()
			<-b.returned // the backend saw the cancellation
			<-served     // and the handler returned
			<-done
			client.CloseIdleConnections()
			require.Zero(t, store.Len(), "a response whose client went away is not stored")

			// Bounded polling, no assertion on time: the connection's
			// goroutines wind down asynchronously.
			n := runtime.NumGoroutine()
			for i := 0; i < 500 && n > baseline; i++ {
				time.Sleep(10 * time.Millisecond)
				n = runtime.NumGoroutine()
			}
			require.LessOrEqual(t, n, baseline, "goroutines leaked")
		})
	}
}
