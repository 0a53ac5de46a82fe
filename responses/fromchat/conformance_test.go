package fromchat_test

import (
	"slices"
	"testing"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/responses/responsestest"
)

// TestBackend runs the responses backend conformance suite on the
// adapter over the demo's chat backend, streaming and not, for each demo
// model that serves responses.
func TestBackend(t *testing.T) {
	t.Parallel()
	for _, m := range demo.TextModels() {
		if !slices.Contains(m.EndpointTypes, models.CompatResponse) {
			continue
		}
		t.Run(m.ID, func(t *testing.T) {
			t.Parallel()
			t.Run("Streaming", func(t *testing.T) {
				t.Parallel()
				responsestest.TestBackend(t, over(demoChat()), m)
			})
			t.Run("NotStreaming", func(t *testing.T) {
				t.Parallel()
				responsestest.TestBackend(t, over(completeOnly{demoChat()}), m)
			})
		})
	}
}
