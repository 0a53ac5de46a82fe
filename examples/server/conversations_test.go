package main

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/conversations"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/examples/internal/conversationflow"
	"github.com/gatewaykit/gatewaykit/gateway"
)

// TestConversationsOnSQLite drives a conversation with the official Go
// SDK against the server over its default store, a SQLite file; the
// conversation outlives the gateway that created it, as the file does.
func TestConversationsOnSQLite(t *testing.T) {
	ctx := context.Background()
	logger := slog.New(slog.DiscardHandler)
	path := filepath.Join(t.TempDir(), "gatewaykit.db")
	serve := func(t *testing.T) (openai.Client, func()) {
		st, err := openStores(ctx, "sqlite:"+path, logger)
		require.NoError(t, err)
		g, err := newGateway(gateway.DemoFile(), st, logger)
		require.NoError(t, err)
		srv := httptest.NewServer(g)
		return openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("sk-demo"), option.WithMaxRetries(0)),
			func() { srv.Close(); require.NoError(t, st.close()) }
	}

	client, stop := serve(t)
	conversationflow.Run(t, client, client)
	conv, err := client.Conversations.New(t.Context(), conversations.ConversationNewParams{})
	require.NoError(t, err)
	stop()

	client, stop = serve(t)
	defer stop()
	got, err := client.Conversations.Get(t.Context(), conv.ID)
	require.NoError(t, err, "the file keeps the conversation across restarts")
	require.Equal(t, conv.ID, got.ID)
}
