// Package conversationflow is the conversation that the example
// programs' tests drive with the official OpenAI Go SDK, against the
// example server (SQLite, PostgreSQL replicas) and through the example
// relay: a conversation created with items, read and continued by a
// response, added to, listed page by page, an item read and deleted, its
// metadata updated, and the conversation deleted.
package conversationflow

import (
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/conversations"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/require"
)

// Run runs the flow with the demo's model demo-chat: a creates the
// conversation, b reads it and continues it, a adds items and lists
// them, b reads, then deletes, an item, a updates the metadata and b
// deletes the conversation, which a then no longer finds. a and b may be
// one client, or clients of two replicas of one gateway (of one key).
func Run(t *testing.T, a, b openai.Client) {
	t.Helper()
	ctx := t.Context()
	conv, err := a.Conversations.New(ctx, conversations.ConversationNewParams{
		Items:    []responses.ResponseInputItemUnionParam{responses.ResponseInputItemParamOfMessage("My name is Ada.", responses.EasyInputMessageRoleUser)},
		Metadata: shared.Metadata{"topic": "names"},
	})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(conv.ID, "conv_"), conv.ID)

	got, err := b.Conversations.Get(ctx, conv.ID)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"topic": "names"}, got.Metadata)

	resp, err := b.Responses.New(ctx, responses.ResponseNewParams{
		Model:        "demo-chat",
		Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String("What is my name?")},
		Conversation: responses.ResponseNewParamsConversationUnion{OfString: openai.String(conv.ID)},
	})
	require.NoError(t, err)
	require.Equal(t, conv.ID, resp.Conversation.ID)
	require.True(t, strings.HasPrefix(resp.OutputText(), `Earlier you said: "My name is Ada."`),
		"the backend was sent the conversation's items: %s", resp.OutputText())

	added, err := a.Conversations.Items.New(ctx, conv.ID, conversations.ItemNewParams{Items: []responses.ResponseInputItemUnionParam{
		responses.ResponseInputItemParamOfMessage("I live in Paris.", responses.EasyInputMessageRoleUser),
	}})
	require.NoError(t, err)
	require.Len(t, added.Data, 1)

	var items []conversations.ConversationItemUnion
	pager := a.Conversations.Items.ListAutoPaging(ctx, conv.ID, conversations.ItemListParams{Order: conversations.ItemListParamsOrderAsc, Limit: openai.Int(2)})
	for pager.Next() {
		items = append(items, pager.Current())
	}
	require.NoError(t, pager.Err())
	var texts []string
	for _, it := range items {
		require.Equal(t, "message", it.Type)
		texts = append(texts, it.Role+": "+it.AsMessage().Content[0].Text)
	}
	require.Equal(t, []string{"user: My name is Ada.", "user: What is my name?", "assistant: " + resp.OutputText(), "user: I live in Paris."}, texts)
	require.Equal(t, resp.Output[0].ID, items[2].ID, "the output item keeps its id")

	item, err := b.Conversations.Items.Get(ctx, conv.ID, added.Data[0].ID, conversations.ItemGetParams{})
	require.NoError(t, err)
	require.Equal(t, "I live in Paris.", item.AsMessage().Content[0].Text)
	_, err = b.Conversations.Items.Delete(ctx, conv.ID, added.Data[0].ID)
	require.NoError(t, err)
	page, err := a.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{})
	require.NoError(t, err)
	require.Len(t, page.Data, 3)
	require.Equal(t, resp.Output[0].ID, page.Data[0].ID, "newest first")

	updated, err := a.Conversations.Update(ctx, conv.ID, conversations.ConversationUpdateParams{Metadata: shared.Metadata{"topic": "done"}})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"topic": "done"}, updated.Metadata)

	deleted, err := b.Conversations.Delete(ctx, conv.ID)
	require.NoError(t, err)
	require.True(t, deleted.Deleted)
	_, err = a.Conversations.Get(ctx, conv.ID)
	var apiErr *openai.Error
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusNotFound, apiErr.StatusCode)
}
