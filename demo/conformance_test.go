package demo_test

import (
	"testing"

	"github.com/gatewaykit/gatewaykit/chat/chattest"
	"github.com/gatewaykit/gatewaykit/completions/completionstest"
	"github.com/gatewaykit/gatewaykit/demo"
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
		})
	}
}
