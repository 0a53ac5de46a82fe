package gemini_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
)

// newGateway assembles the demo gateway of the examples; extra edits the
// config before New.
func newGateway(t *testing.T, extra func(*gateway.Config)) *gateway.Gateway {
	t.Helper()
	f := gateway.DemoFile()
	keys, err := gateway.NewKeyStore(context.Background(), f.Keys)
	require.NoError(t, err)
	text := demo.NewTextBackend(demo.WithTokensPerChunk(2))
	c := gateway.Config{Keys: keys, Catalog: models.NewMemoryCatalog(f.Models...), Chat: text.Chat()}
	if extra != nil {
		extra(&c)
	}
	g, err := gateway.New(c)
	require.NoError(t, err)
	return g
}

func newCatalog() models.Catalog { return models.NewMemoryCatalog(demo.TextModels()...) }
