package gatewaytest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
)

// NewDemo returns the gateway of gateway.DemoFile (its keys in memory)
// over the demo backends of every family, as the example server serves
// it without a configuration: chat, completions and responses from one
// demo text backend made with opts, videos from the demo generator
// (which finishes each task at once, instead of the demo's 3 seconds),
// and the demo's embeddings, moderations, rerank, image and audio
// backends. extra, when not nil, edits the Config before gateway.New
// (set a field to nil to leave its family out). NewDemo runs the video
// runner (Gateway.Run) until the test ends, and fails t when the gateway
// cannot be assembled. It is the fixture of tests that need a whole
// gateway to talk to, through a client or a relay.
func NewDemo(t testing.TB, extra func(*gateway.Config), opts ...demo.TextOption) *gateway.Gateway {
	t.Helper()
	f := gateway.DemoFile()
	keys, err := gateway.NewKeyStore(context.Background(), f.Keys)
	require.NoError(t, err)
	text := demo.NewTextBackend(opts...)
	c := gateway.Config{
		Keys:        keys,
		Catalog:     models.NewMemoryCatalog(f.Models...),
		Chat:        text.Chat(),
		Completions: text.Completions(),
		Responses:   text.Responses(),
		Videos:      demo.NewVideoGenerator(demo.WithVideoDuration(0)),
		Embeddings:  demo.NewEmbeddingBackend(),
		Moderations: demo.NewModerationBackend(),
		Rerank:      demo.NewRerankBackend(),
		Images:      demo.NewImageBackend(),
		Audio:       demo.NewAudioBackend(),
	}
	if extra != nil {
		extra(&c)
	}
	g, err := gateway.New(c)
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		_ = g.Run(ctx)
	}()
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = g.Shutdown(sctx)
		stop()
		<-ran
	})
	return g
}
