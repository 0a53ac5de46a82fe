package gemini_test

import (
	"testing"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/gateway/gatewaytest"
	"github.com/gatewaykit/gatewaykit/models"
)

// newGateway assembles the demo gateway of the examples, its stream in
// chunks of two tokens; extra edits the config before New.
func newGateway(t *testing.T, extra func(*gateway.Config)) *gateway.Gateway {
	return gatewaytest.NewDemo(t, extra, demo.WithTokensPerChunk(2))
}

func newCatalog() models.Catalog { return models.NewMemoryCatalog(demo.TextModels()...) }
