package completions_test

import (
	"strings"
	"testing"

	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/internal/hanguptest"
)

// TestClientDisconnect hangs up in the middle of a request and checks that
// the backend sees the cancellation, the handler returns, and the number
// of goroutines comes back to what it was (so it does not run in
// parallel).
func TestClientDisconnect(t *testing.T) {
	for _, stream := range []string{"true", "false"} {
		t.Run("stream="+stream, func(t *testing.T) {
			b := endpointtest.NewBlockingBackend[completions.Params, completions.Result](completions.Delta{Text: "first"})
			hanguptest.Run(t, hanguptest.Case{
				Handler: newHandlerWith(b),
				Path:    "/v1/completions",
				Body:    `{"model":"demo-chat","prompt":"x","stream":` + stream + `}`,
				Stream:  stream == "true",
				FirstLine: func(line string) bool {
					return strings.HasPrefix(line, "data: {")
				},
				Blocked:  b.Blocked,
				Returned: b.Returned,
			})
		})
	}
}
