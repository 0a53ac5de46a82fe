package conversations_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/conversations"
	"github.com/gatewaykit/gatewaykit/conversations/conversationstest"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/internal/hanguptest"
	"github.com/gatewaykit/gatewaykit/responses"
)

// TestClientDisconnectAddsNothing hangs up in the middle of a response
// that names a conversation: the backend sees the cancellation, and the
// conversation is left as it was. It does not run in parallel: it counts
// goroutines.
func TestClientDisconnectAddsNothing(t *testing.T) {
	for _, stream := range []string{"true", "false"} {
		t.Run("stream="+stream, func(t *testing.T) {
			ctx := context.Background()
			store := conversations.NewMemoryStore(nil)
			require.NoError(t, store.Create(ctx, "anonymous", conversationstest.NewConversation("conv_1"), conversationstest.Messages("msg", 1)))
			b := endpointtest.NewBlockingBackend[responses.Params, responses.Result](responses.Delta{Text: "first"})
			hanguptest.Run(t, hanguptest.Case{
				Handler: responses.NewHandler(endpointtest.Catalog(), b, responses.WithConversations(store)),
				Path:    "/v1/responses",
				Body:    `{"model":"demo-chat","input":"Hi","conversation":"conv_1","stream":` + stream + `}`,
				Stream:  stream == "true",
				FirstLine: func(line string) bool {
					return line == "event: response.created\n"
				},
				Blocked:  b.Blocked,
				Returned: b.Returned,
			})
			items, err := store.ConversationItems(ctx, "anonymous", "conv_1", 10)
			require.NoError(t, err)
			require.Len(t, items, 1, "a response whose client went away adds nothing")
		})
	}
}
