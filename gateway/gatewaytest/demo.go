package gatewaytest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
)

// NewDemo returns the gateway of gateway.DemoFile (its keys in memory)
// with the demo text backend, made with opts, as its chat backend; extra,
// when not nil, edits the Config before gateway.New. It fails t when the
// gateway cannot be assembled. It is the fixture of tests that need a
// whole gateway to talk to, through a client or a relay.
func NewDemo(t testing.TB, extra func(*gateway.Config), opts ...demo.TextOption) *gateway.Gateway {
	t.Helper()
	f := gateway.DemoFile()
	keys, err := gateway.NewKeyStore(context.Background(), f.Keys)
	require.NoError(t, err)
	c := gateway.Config{Keys: keys, Catalog: models.NewMemoryCatalog(f.Models...), Chat: demo.NewTextBackend(opts...).Chat()}
	if extra != nil {
		extra(&c)
	}
	g, err := gateway.New(c)
	require.NoError(t, err)
	return g
}
