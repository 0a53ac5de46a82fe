package conversations_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	oconversations "github.com/openai/openai-go/v3/conversations"
	oresponses "github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/conversations"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/sdk/internal/openaitest"
)

// newClients serves the conversations and responses handlers over one
// store (the demo backend), behind keys of two accounts, and returns an
// official SDK client of each.
func newClients(t *testing.T) (alice, bob openai.Client) {
	t.Helper()
	store := conversations.NewMemoryStore(nil)
	mux := http.NewServeMux()
	conversations.Register(mux, conversations.NewHandler(store))
	responses.Register(mux, responses.NewHandler(models.NewMemoryCatalog(demo.TextModels()...), demo.NewTextBackend().Responses(),
		responses.WithConversations(store)))
	srv, secrets := openaitest.SDKServer(t, mux,
		auth.Key{ID: "key_alice", Owner: "alice", Quota: auth.UnlimitedQuota()},
		auth.Key{ID: "key_bob", Owner: "bob", Quota: auth.UnlimitedQuota()})
	return openaitest.SDKClient(srv, secrets[0]), openaitest.SDKClient(srv, secrets[1])
}

func userMessage(text string) oresponses.ResponseInputItemUnionParam {
	return oresponses.ResponseInputItemParamOfMessage(text, oresponses.EasyInputMessageRoleUser)
}

// TestSDKConversationWithItems drives every method of the SDK's
// Conversations service: a conversation created with items and metadata,
// continued by two responses (the conversation named as an id, then as
// {"id"}), items added, listed page by page in both orders, read and
// deleted, its metadata updated, and the conversation deleted.
func TestSDKConversationWithItems(t *testing.T) {
	t.Parallel()
	client, _ := newClients(t)
	ctx := t.Context()

	conv, err := client.Conversations.New(ctx, oconversations.ConversationNewParams{
		Items:    []oresponses.ResponseInputItemUnionParam{userMessage("My name is Ada.")},
		Metadata: shared.Metadata{"topic": "names"},
	})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(conv.ID, conversations.IDPrefix), conv.ID)
	require.Equal(t, "conversation", string(conv.Object))
	require.Positive(t, conv.CreatedAt)
	require.Equal(t, map[string]any{"topic": "names"}, conv.Metadata)

	got, err := client.Conversations.Get(ctx, conv.ID)
	require.NoError(t, err)
	require.Equal(t, conv.ID, got.ID)

	first, err := client.Responses.New(ctx, oresponses.ResponseNewParams{
		Model:        demo.ChatModel,
		Input:        oresponses.ResponseNewParamsInputUnion{OfString: openai.String("What is my name?")},
		Conversation: oresponses.ResponseNewParamsConversationUnion{OfString: openai.String(conv.ID)},
	})
	require.NoError(t, err)
	require.Equal(t, conv.ID, first.Conversation.ID)
	require.True(t, strings.HasPrefix(first.OutputText(), `Earlier you said: "My name is Ada."`), first.OutputText())

	added, err := client.Conversations.Items.New(ctx, conv.ID, oconversations.ItemNewParams{Items: []oresponses.ResponseInputItemUnionParam{
		oresponses.ResponseInputItemParamOfFunctionCall(`{"city":"Paris"}`, "call_weather", "get_weather"),
		{OfFunctionCallOutput: &oresponses.ResponseInputItemFunctionCallOutputParam{CallID: openai.String("call_weather"),
			Output: oresponses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String(`{"temperature":21}`)}}},
	}})
	require.NoError(t, err)
	require.Len(t, added.Data, 2)
	require.Equal(t, "function_call", added.Data[0].Type)
	call := added.Data[0].AsFunctionCall()
	require.Equal(t, "get_weather", call.Name)
	require.True(t, strings.HasPrefix(call.ID, responses.FunctionIDPrefix), call.ID)
	require.Equal(t, added.Data[0].ID, added.FirstID)
	require.Equal(t, added.Data[1].ID, added.LastID)
	require.False(t, added.HasMore)

	second, err := client.Responses.New(ctx, oresponses.ResponseNewParams{
		Model:        demo.ChatModel,
		Input:        oresponses.ResponseNewParamsInputUnion{OfString: openai.String("Thanks.")},
		Conversation: oresponses.ResponseNewParamsConversationUnion{OfConversationObject: &oresponses.ResponseConversationParam{ID: conv.ID}},
	})
	require.NoError(t, err)
	require.Equal(t, conv.ID, second.Conversation.ID)

	// Every item, oldest first, two by two; then newest first, three by three.
	var asc []oconversations.ConversationItemUnion
	pager := client.Conversations.Items.ListAutoPaging(ctx, conv.ID, oconversations.ItemListParams{Order: oconversations.ItemListParamsOrderAsc, Limit: openai.Int(2),
		Include: []oresponses.ResponseIncludable{oresponses.ResponseIncludableReasoningEncryptedContent}})
	for pager.Next() {
		asc = append(asc, pager.Current())
	}
	require.NoError(t, pager.Err())
	var types []string
	for _, it := range asc {
		types = append(types, it.Type+":"+it.Role)
	}
	require.Equal(t, []string{"message:user", "message:user", "message:assistant", "function_call:", "function_call_output:", "message:user", "message:assistant"}, types)
	require.Equal(t, "My name is Ada.", asc[0].AsMessage().Content[0].Text)
	require.Equal(t, first.Output[0].ID, asc[2].ID, "the output item keeps its id")
	require.Equal(t, first.OutputText(), asc[2].AsMessage().Content[0].Text)
	require.Equal(t, second.Output[0].ID, asc[6].ID)

	var desc []string
	page, err := client.Conversations.Items.List(ctx, conv.ID, oconversations.ItemListParams{Limit: openai.Int(3)})
	require.NoError(t, err)
	for page != nil {
		for _, it := range page.Data {
			desc = append(desc, it.ID)
		}
		page, err = page.GetNextPage()
		require.NoError(t, err)
	}
	require.Len(t, desc, len(asc))
	for i := range desc {
		require.Equal(t, asc[len(asc)-1-i].ID, desc[i], "newest first by default")
	}

	item, err := client.Conversations.Items.Get(ctx, conv.ID, asc[3].ID, oconversations.ItemGetParams{})
	require.NoError(t, err)
	require.Equal(t, `{"city":"Paris"}`, item.AsFunctionCall().Arguments)

	after, err := client.Conversations.Items.Delete(ctx, conv.ID, asc[3].ID)
	require.NoError(t, err)
	require.Equal(t, conv.ID, after.ID, "deleting an item answers the conversation")
	_, err = client.Conversations.Items.Get(ctx, conv.ID, asc[3].ID, oconversations.ItemGetParams{})
	openaitest.RequireAPIError(t, err, http.StatusNotFound, "not_found", "")

	updated, err := client.Conversations.Update(ctx, conv.ID, oconversations.ConversationUpdateParams{Metadata: shared.Metadata{"topic": "names", "status": "done"}})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"topic": "names", "status": "done"}, updated.Metadata)

	deleted, err := client.Conversations.Delete(ctx, conv.ID)
	require.NoError(t, err)
	require.Equal(t, conv.ID, deleted.ID)
	require.True(t, deleted.Deleted)
	require.Equal(t, "conversation.deleted", string(deleted.Object))
	_, err = client.Conversations.Get(ctx, conv.ID)
	openaitest.RequireAPIError(t, err, http.StatusNotFound, "not_found", "")
}

// TestSDKConversationErrors: the SDK surfaces the gateway's errors: another
// account's conversation is not found, on its routes and for a response;
// conversation and previous_response_id together are refused.
func TestSDKConversationErrors(t *testing.T) {
	t.Parallel()
	alice, bob := newClients(t)
	ctx := t.Context()
	conv, err := alice.Conversations.New(ctx, oconversations.ConversationNewParams{})
	require.NoError(t, err)

	_, err = bob.Conversations.Get(ctx, conv.ID)
	openaitest.RequireAPIError(t, err, http.StatusNotFound, "not_found", "")
	_, err = bob.Conversations.Items.List(ctx, conv.ID, oconversations.ItemListParams{})
	openaitest.RequireAPIError(t, err, http.StatusNotFound, "not_found", "")
	_, err = bob.Responses.New(ctx, oresponses.ResponseNewParams{
		Model:        demo.ChatModel,
		Input:        oresponses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
		Conversation: oresponses.ResponseNewParamsConversationUnion{OfString: openai.String(conv.ID)},
	})
	openaitest.RequireAPIError(t, err, http.StatusNotFound, "not_found", "conversation")

	_, err = alice.Responses.New(ctx, oresponses.ResponseNewParams{
		Model:              demo.ChatModel,
		Input:              oresponses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
		Conversation:       oresponses.ResponseNewParamsConversationUnion{OfString: openai.String(conv.ID)},
		PreviousResponseID: openai.String("resp_1"),
	})
	openaitest.RequireAPIError(t, err, http.StatusBadRequest, "invalid_request_error", "")

	_, err = alice.Conversations.Items.New(ctx, conv.ID, oconversations.ItemNewParams{})
	openaitest.RequireAPIError(t, err, http.StatusBadRequest, "invalid_request_error", "items")
}
