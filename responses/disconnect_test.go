package responses_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/internal/hanguptest"
	"github.com/gatewaykit/gatewaykit/responses"
)

// TestClientDisconnect hangs up in the middle of a request and checks that
// the backend sees the cancellation, the handler returns without storing
// the response, and the number of goroutines comes back to what it was.
// It does not run in parallel: it counts goroutines.
func TestClientDisconnect(t *testing.T) {
	for _, stream := range []string{"true", "false"} {
		t.Run("stream="+stream, func(t *testing.T) {
			b := endpointtest.NewBlockingBackend[responses.Params, responses.Result](responses.Delta{Text: "first"})
			store := responses.NewMemoryStore(nil)
			hanguptest.Run(t, hanguptest.Case{
				Handler: newHandlerWith(b, responses.WithStore(store)),
				Path:    "/v1/responses",
				Body:    `{"model":"demo-chat","input":"Hi","stream":` + stream + `}`,
				Stream:  stream == "true",
				FirstLine: func(line string) bool {
					return line == "event: response.created\n"
				},
				Blocked:  b.Blocked,
				Returned: b.Returned,
			})
			require.Zero(t, store.Len(), "a response whose client went away is not stored")
		})
	}
}
