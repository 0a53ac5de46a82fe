package demo_test

import (
	"testing"

	"github.com/gatewaykit/gatewaykit/chat/chattest"
	"github.com/gatewaykit/gatewaykit/completions/completionstest"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/responses/responsestest"
	"github.com/gatewaykit/gatewaykit/videos/videostest"
)

// The demo's backends keep the contracts of their interfaces, for each
// of its text models.
func TestTextBackendConformance(t *testing.T) {
	t.Parallel()
	tb := demo.NewTextBackend()
	for _, m := range demo.TextModels() {
		t.Run(m.ID, func(t *testing.T) {
			t.Parallel()
			t.Run("Chat", func(t *testing.T) { chattest.TestBackend(t, tb.Chat(), m) })
			t.Run("Completions", func(t *testing.T) { completionstest.TestBackend(t, tb.Completions(), m) })
			if m.Supports(models.CompatResponse) {
				t.Run("Responses", func(t *testing.T) { responsestest.TestBackend(t, tb.Responses(), m) })
			}
		})
	}
}

func TestVideoGeneratorConformance(t *testing.T) {
	t.Parallel()
	g := demo.NewVideoGenerator(demo.WithVideoDuration(0))
	for _, m := range demo.VideoModels() {
		t.Run(m.ID, func(t *testing.T) {
			t.Parallel()
			videostest.TestGenerator(t, g, videostest.TaskFor(m))
		})
	}
}
