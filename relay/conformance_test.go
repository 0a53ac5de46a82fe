package relay_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat/chattest"
	"github.com/gatewaykit/gatewaykit/completions/completionstest"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/responses/responsestest"
	"github.com/gatewaykit/gatewaykit/videos/videostest"
)

// The relay's backends keep the contracts of their interfaces, relaying
// to a gatewaykit server on the demo backends.
func TestBackendConformance(t *testing.T) {
	t.Parallel()
	list := append(demo.TextModels(), demo.VideoModels()...)
	tb := demo.NewTextBackend()
	upstream := kitServer(t, upstreamKey, models.NewMemoryCatalog(list...), tb.Chat(), tb.Completions(), tb.Responses(), demo.NewVideoGenerator(demo.WithVideoDuration(0)))
	var routes []relay.Route
	for _, m := range list {
		routes = append(routes, relay.Route{Model: m.ID, Upstreams: []relay.Upstream{{BaseURL: upstream.URL + "/v1", Key: upstreamKey}}})
	}
	r, err := relay.New(routes, relay.WithPollInterval(5*time.Millisecond))
	require.NoError(t, err)
	for _, m := range list {
		t.Run(m.ID, func(t *testing.T) {
			t.Parallel()
			if m.Supports(models.CompatVideo) {
				t.Run("Videos", func(t *testing.T) { videostest.TestGenerator(t, r.Videos(), videostest.TaskFor(m)) })
				return
			}
			t.Run("Chat", func(t *testing.T) { chattest.TestBackend(t, r.Chat(), m) })
			t.Run("Completions", func(t *testing.T) { completionstest.TestBackend(t, r.Completions(), m) })
			if m.Supports(models.CompatResponse) {
				t.Run("Responses", func(t *testing.T) { responsestest.TestBackend(t, r.Responses(), m) })
			}
		})
	}
}
