package embeddings_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/embeddings"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
)

// blockingBackend waits for its request's context to end, and reports
// that it saw it end.
type blockingBackend struct {
	started chan struct{}
	ended   chan error
}

func (b blockingBackend) Embed(ctx context.Context, _ *embeddings.Params) (*embeddings.Result, error) {
	close(b.started)
	<-ctx.Done()
	b.ended <- ctx.Err()
	return nil, ctx.Err()
}

// TestClientGoneCancelsTheBackend checks that a client that goes away
// cancels the backend's call, gets nothing written, and is charged
// nothing.
func TestClientGoneCancelsTheBackend(t *testing.T) {
	t.Parallel()
	b := blockingBackend{started: make(chan struct{}), ended: make(chan error, 1)}
	h, keys := servedtest.Keyed(t, embeddings.NewHandler(catalog(), b), auth.LimitedQuota(1000))
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, "POST", "/v1/embeddings", strings.NewReader(`{"model":"demo-embedding","input":"x"}`))
	w := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { h.ServeHTTP(w, req); close(done) }()
	<-b.started
	cancel()
	require.ErrorIs(t, <-b.ended, context.Canceled)
	<-done
	require.Empty(t, w.Body.String(), "nothing is written to a client that has gone")
	require.Equal(t, auth.Quota{Remaining: 1000}, keys.Quota(t), "the reservation is released, nothing charged")
}
