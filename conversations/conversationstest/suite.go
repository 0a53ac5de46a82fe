// Package conversationstest holds the conformance suite of the
// conversations package's [conversations.Store], for the implementations
// that ship with gatewaykit (in memory, SQLite, PostgreSQL) and for
// embedders' own.
package conversationstest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/conversations"
	"github.com/gatewaykit/gatewaykit/responses"
)

// itemsJSON are items of every kind a conversation holds, as a request
// sends them: messages (string and array content, an image), a function
// call and its output, a reasoning item with encrypted_content, and an
// item of a type the kit does not model.
const itemsJSON = `[
	{"type":"message","role":"user","content":"What is the weather in Paris?"},
	{"type":"message","role":"user","content":[{"type":"input_text","text":"and this?"},{"type":"input_image","image_url":"https://example.com/a.png","detail":"low"}]},
	{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Think about the weather."}],"encrypted_content":"gAAAAB-opaque"},
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}","status":"completed"},
	{"type":"function_call_output","call_id":"call_1","output":"{\"temperature\":21}"},
	{"type":"message","role":"assistant","content":[{"type":"output_text","text":"It is 21°C.","annotations":[]}],"phase":"final_answer"},
	{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"Paris weather"}}
]`

// Items returns items of every kind a conversation holds (see
// itemsJSON), each with an id, as the handlers store them
// (responses.StoredItems).
func Items(t testing.TB) []responses.Item {
	t.Helper()
	var items []responses.Item
	require.NoError(t, json.Unmarshal([]byte(itemsJSON), &items))
	return responses.StoredItems(items)
}

// Messages returns n user messages with the ids prefix_0, prefix_1, ….
func Messages(prefix string, n int) []responses.Item {
	items := make([]responses.Item, n)
	for i := range items {
		items[i] = responses.Item{Type: responses.ItemMessage, ID: fmt.Sprintf("%s_%d", prefix, i), Status: "completed",
			Role: responses.RoleUser, Content: responses.PartsContent(responses.ContentPart{Type: responses.PartInputText, Text: fmt.Sprintf("message %d", i)})}
	}
	return items
}

// NewConversation returns a conversation with the given id, created at a
// fixed time, with metadata.
func NewConversation(id string) *conversations.Conversation {
	return &conversations.Conversation{ID: id, Object: conversations.ObjectConversation, CreatedAt: 1700000000,
		Metadata: map[string]string{"topic": "suite"}}
}

// itemsOpts compare items through their unexported members too, a nil
// map or slice as an empty one.
var itemsOpts = cmp.Options{cmp.AllowUnexported(responses.Content{}), cmpopts.EquateEmpty()}

// ids returns the ids of items.
func ids(items []responses.Item) []string {
	out := make([]string, len(items))
	for i := range items {
		out[i] = items[i].ID
	}
	return out
}

// TestStore checks the [conversations.Store] contract. newStore is called
// once per subtest and must return an empty store; subtests run in
// parallel.
func TestStore(t *testing.T, newStore func(t *testing.T) conversations.Store) {
	ctx := context.Background()
	setup := func(t *testing.T) conversations.Store {
		t.Helper()
		t.Parallel()
		return newStore(t)
	}
	create := func(t *testing.T, s conversations.Store, owner, id string, items []responses.Item) {
		t.Helper()
		require.NoError(t, s.Create(ctx, owner, NewConversation(id), items))
	}
	all := func(t *testing.T, s conversations.Store, owner, id string) []responses.Item {
		t.Helper()
		items, err := s.ConversationItems(ctx, owner, id, 1000)
		require.NoError(t, err)
		return items
	}

	t.Run("GetReturnsWhatCreateStored", func(t *testing.T) {
		s := setup(t)
		create(t, s, "owner:a", "conv_1", nil)
		got, err := s.Get(ctx, "owner:a", "conv_1")
		require.NoError(t, err)
		require.Equal(t, NewConversation("conv_1"), got)
	})

	t.Run("CreateKeepsEveryKindOfItemWhole", func(t *testing.T) {
		s := setup(t)
		want := Items(t)
		create(t, s, "owner:a", "conv_1", want)
		got := all(t, s, "owner:a", "conv_1")
		if diff := cmp.Diff(want, got, itemsOpts); diff != "" {
			t.Errorf("items (-want +got):\n%s", diff)
		}
		require.Equal(t, "gAAAAB-opaque", got[2].EncryptedContent, "encrypted reasoning is kept intact")
	})

	t.Run("CreateRefusesItemsThatShareAnID", func(t *testing.T) {
		s := setup(t)
		items := Messages("msg", 3)
		items[2].ID = items[0].ID
		err := s.Create(ctx, "owner:a", NewConversation("conv_1"), items)
		var dup *responses.DuplicateItemError
		require.ErrorAs(t, err, &dup)
		require.Equal(t, items[0].ID, dup.ID)
		_, err = s.Get(ctx, "owner:a", "conv_1")
		require.ErrorIs(t, err, conversations.ErrNotFound, "nothing is stored")
	})

	t.Run("CreateRefusesAnIDOfTheSameOwnerTwice", func(t *testing.T) {
		s := setup(t)
		create(t, s, "owner:a", "conv_1", Messages("msg", 1))
		require.Error(t, s.Create(ctx, "owner:a", NewConversation("conv_1"), nil))
		require.Len(t, all(t, s, "owner:a", "conv_1"), 1, "the first conversation is left as it was")
	})

	t.Run("EveryMethodReturnsErrNotFoundIfConversationDoesNotExist", func(t *testing.T) {
		s := setup(t)
		_, err := s.Get(ctx, "owner:a", "conv_missing")
		require.ErrorIs(t, err, conversations.ErrNotFound)
		_, err = s.Update(ctx, "owner:a", "conv_missing", map[string]string{})
		require.ErrorIs(t, err, conversations.ErrNotFound)
		require.ErrorIs(t, s.Delete(ctx, "owner:a", "conv_missing"), conversations.ErrNotFound)
		require.ErrorIs(t, s.AppendItems(ctx, "owner:a", "conv_missing", Messages("msg", 1)), conversations.ErrNotFound)
		_, err = s.ConversationItems(ctx, "owner:a", "conv_missing", 10)
		require.ErrorIs(t, err, conversations.ErrNotFound)
		_, _, err = s.ListItems(ctx, "owner:a", "conv_missing", conversations.ItemQuery{Limit: 10, Order: conversations.OrderAsc})
		require.ErrorIs(t, err, conversations.ErrNotFound)
		_, err = s.GetItem(ctx, "owner:a", "conv_missing", "msg_0")
		require.ErrorIs(t, err, conversations.ErrNotFound)
		_, err = s.DeleteItem(ctx, "owner:a", "conv_missing", "msg_0")
		require.ErrorIs(t, err, conversations.ErrNotFound)
	})

	t.Run("AnotherOwnerSeesNothing", func(t *testing.T) {
		s := setup(t)
		create(t, s, "owner:a", "conv_1", Messages("msg", 2))
		for _, owner := range []string{"owner:b", ""} {
			_, err := s.Get(ctx, owner, "conv_1")
			require.ErrorIs(t, err, conversations.ErrNotFound)
			_, err = s.Update(ctx, owner, "conv_1", map[string]string{"x": "y"})
			require.ErrorIs(t, err, conversations.ErrNotFound)
			require.ErrorIs(t, s.AppendItems(ctx, owner, "conv_1", Messages("other", 1)), conversations.ErrNotFound)
			_, err = s.GetItem(ctx, owner, "conv_1", "msg_0")
			require.ErrorIs(t, err, conversations.ErrNotFound)
			_, err = s.DeleteItem(ctx, owner, "conv_1", "msg_0")
			require.ErrorIs(t, err, conversations.ErrNotFound)
			_, _, err = s.ListItems(ctx, owner, "conv_1", conversations.ItemQuery{Limit: 10, Order: conversations.OrderAsc})
			require.ErrorIs(t, err, conversations.ErrNotFound)
			require.ErrorIs(t, s.Delete(ctx, owner, "conv_1"), conversations.ErrNotFound)
		}
		got, err := s.Get(ctx, "owner:a", "conv_1")
		require.NoError(t, err, "the owner's conversation is left as it was")
		require.Equal(t, NewConversation("conv_1"), got)
		require.Equal(t, []string{"msg_0", "msg_1"}, ids(all(t, s, "owner:a", "conv_1")))
	})

	t.Run("EmptyOwnerIsAnOwnerOfItsOwn", func(t *testing.T) {
		s := setup(t)
		create(t, s, "", "conv_1", nil)
		_, err := s.Get(ctx, "", "conv_1")
		require.NoError(t, err)
		_, err = s.Get(ctx, "owner:a", "conv_1")
		require.ErrorIs(t, err, conversations.ErrNotFound)
	})

	t.Run("UpdateReplacesTheMetadata", func(t *testing.T) {
		s := setup(t)
		create(t, s, "owner:a", "conv_1", nil)
		got, err := s.Update(ctx, "owner:a", "conv_1", map[string]string{"status": "resolved"})
		require.NoError(t, err)
		want := NewConversation("conv_1")
		want.Metadata = map[string]string{"status": "resolved"}
		require.Equal(t, want, got)
		got, err = s.Get(ctx, "owner:a", "conv_1")
		require.NoError(t, err)
		require.Equal(t, want, got)
		got, err = s.Update(ctx, "owner:a", "conv_1", map[string]string{})
		require.NoError(t, err)
		require.Empty(t, got.Metadata, "{} removes every pair")
	})

	t.Run("DeleteRemovesTheConversationAndItsItems", func(t *testing.T) {
		s := setup(t)
		create(t, s, "owner:a", "conv_1", Messages("msg", 2))
		create(t, s, "owner:a", "conv_2", Messages("msg", 2))
		require.NoError(t, s.Delete(ctx, "owner:a", "conv_1"))
		_, err := s.Get(ctx, "owner:a", "conv_1")
		require.ErrorIs(t, err, conversations.ErrNotFound)
		_, err = s.GetItem(ctx, "owner:a", "conv_1", "msg_0")
		require.ErrorIs(t, err, conversations.ErrNotFound)
		require.ErrorIs(t, s.Delete(ctx, "owner:a", "conv_1"), conversations.ErrNotFound, "a second delete finds nothing")
		require.Equal(t, []string{"msg_0", "msg_1"}, ids(all(t, s, "owner:a", "conv_2")), "the other conversation keeps its items")
		create(t, s, "owner:a", "conv_1", Messages("msg", 1))
		require.Equal(t, []string{"msg_0"}, ids(all(t, s, "owner:a", "conv_1")), "a new conversation of the same id starts empty")
	})

	t.Run("AppendItemsAddsAtTheEnd", func(t *testing.T) {
		s := setup(t)
		create(t, s, "owner:a", "conv_1", Messages("first", 2))
		require.NoError(t, s.AppendItems(ctx, "owner:a", "conv_1", Messages("second", 3)))
		kinds := Items(t)
		require.NoError(t, s.AppendItems(ctx, "owner:a", "conv_1", kinds))
		got := all(t, s, "owner:a", "conv_1")
		want := append(append(Messages("first", 2), Messages("second", 3)...), kinds...)
		if diff := cmp.Diff(want, got, itemsOpts); diff != "" {
			t.Errorf("appended items (-want +got):\n%s", diff)
		}
	})

	t.Run("AppendItemsRefusesAnIDTheConversationHolds", func(t *testing.T) {
		s := setup(t)
		create(t, s, "owner:a", "conv_1", Messages("msg", 2))
		batch := append(Messages("new", 2), Messages("msg", 2)[1])
		err := s.AppendItems(ctx, "owner:a", "conv_1", batch)
		var dup *responses.DuplicateItemError
		require.ErrorAs(t, err, &dup)
		require.Equal(t, "msg_1", dup.ID)
		require.Equal(t, []string{"msg_0", "msg_1"}, ids(all(t, s, "owner:a", "conv_1")), "none of the items is added")
	})

	t.Run("AppendItemsRefusesItemsThatShareAnID", func(t *testing.T) {
		s := setup(t)
		create(t, s, "owner:a", "conv_1", nil)
		batch := append(Messages("new", 2), Messages("new", 1)...)
		var dup *responses.DuplicateItemError
		require.ErrorAs(t, s.AppendItems(ctx, "owner:a", "conv_1", batch), &dup)
		require.Equal(t, "new_0", dup.ID)
		require.Empty(t, all(t, s, "owner:a", "conv_1"))
	})

	t.Run("AnItemIDMayBeInTwoConversations", func(t *testing.T) {
		s := setup(t)
		create(t, s, "owner:a", "conv_1", Messages("msg", 1))
		create(t, s, "owner:a", "conv_2", Messages("msg", 1))
		require.NoError(t, s.AppendItems(ctx, "owner:a", "conv_2", Messages("new", 1)))
		for _, id := range []string{"conv_1", "conv_2"} {
			got, err := s.GetItem(ctx, "owner:a", id, "msg_0")
			require.NoError(t, err, id)
			require.Equal(t, "msg_0", got.ID)
		}
		_, err := s.DeleteItem(ctx, "owner:a", "conv_1", "msg_0")
		require.NoError(t, err)
		_, err = s.GetItem(ctx, "owner:a", "conv_2", "msg_0")
		require.NoError(t, err, "deleting the item of one conversation leaves the other's")
	})

	t.Run("ConversationItemsReturnsTheNewestOldestFirst", func(t *testing.T) {
		s := setup(t)
		create(t, s, "owner:a", "conv_1", Messages("msg", 5))
		got, err := s.ConversationItems(ctx, "owner:a", "conv_1", 3)
		require.NoError(t, err)
		require.Equal(t, []string{"msg_2", "msg_3", "msg_4"}, ids(got))
		got, err = s.ConversationItems(ctx, "owner:a", "conv_1", 10)
		require.NoError(t, err)
		require.Equal(t, []string{"msg_0", "msg_1", "msg_2", "msg_3", "msg_4"}, ids(got))
	})

	t.Run("ListItemsPagesInEitherOrder", func(t *testing.T) {
		s := setup(t)
		create(t, s, "owner:a", "conv_1", Messages("msg", 5))
		cases := []struct {
			q    conversations.ItemQuery
			want []string
			more bool
		}{
			{conversations.ItemQuery{Limit: 2, Order: conversations.OrderAsc}, []string{"msg_0", "msg_1"}, true},
			{conversations.ItemQuery{Limit: 2, Order: conversations.OrderAsc, After: "msg_1"}, []string{"msg_2", "msg_3"}, true},
			{conversations.ItemQuery{Limit: 2, Order: conversations.OrderAsc, After: "msg_3"}, []string{"msg_4"}, false},
			{conversations.ItemQuery{Limit: 2, Order: conversations.OrderAsc, After: "msg_4"}, []string{}, false},
			{conversations.ItemQuery{Limit: 5, Order: conversations.OrderAsc}, []string{"msg_0", "msg_1", "msg_2", "msg_3", "msg_4"}, false},
			{conversations.ItemQuery{Limit: 2, Order: conversations.OrderDesc}, []string{"msg_4", "msg_3"}, true},
			{conversations.ItemQuery{Limit: 2, Order: conversations.OrderDesc, After: "msg_3"}, []string{"msg_2", "msg_1"}, true},
			{conversations.ItemQuery{Limit: 2, Order: conversations.OrderDesc, After: "msg_1"}, []string{"msg_0"}, false},
			{conversations.ItemQuery{Limit: 100, Order: conversations.OrderDesc}, []string{"msg_4", "msg_3", "msg_2", "msg_1", "msg_0"}, false},
		}
		for _, tc := range cases {
			got, more, err := s.ListItems(ctx, "owner:a", "conv_1", tc.q)
			require.NoError(t, err, "%+v", tc.q)
			require.Equal(t, tc.want, ids(got), "%+v", tc.q)
			require.Equal(t, tc.more, more, "%+v", tc.q)
		}
	})

	t.Run("ListItemsOfAnEmptyConversationIsEmpty", func(t *testing.T) {
		s := setup(t)
		create(t, s, "owner:a", "conv_1", nil)
		got, more, err := s.ListItems(ctx, "owner:a", "conv_1", conversations.ItemQuery{Limit: 20, Order: conversations.OrderDesc})
		require.NoError(t, err)
		require.Empty(t, got)
		require.False(t, more)
	})

	t.Run("ListItemsReturnsErrItemNotFoundForAnUnknownAfter", func(t *testing.T) {
		s := setup(t)
		create(t, s, "owner:a", "conv_1", Messages("msg", 2))
		create(t, s, "owner:a", "conv_2", Messages("other", 2))
		for _, after := range []string{"msg_missing", "other_0"} {
			_, _, err := s.ListItems(ctx, "owner:a", "conv_1", conversations.ItemQuery{Limit: 20, Order: conversations.OrderAsc, After: after})
			require.ErrorIs(t, err, conversations.ErrItemNotFound, after)
		}
	})

	t.Run("GetItemReturnsTheItem", func(t *testing.T) {
		s := setup(t)
		items := Items(t)
		create(t, s, "owner:a", "conv_1", items)
		for i := range items {
			got, err := s.GetItem(ctx, "owner:a", "conv_1", items[i].ID)
			require.NoError(t, err)
			if diff := cmp.Diff(&items[i], got, itemsOpts); diff != "" {
				t.Errorf("item %d (-want +got):\n%s", i, diff)
			}
		}
		_, err := s.GetItem(ctx, "owner:a", "conv_1", "msg_missing")
		require.ErrorIs(t, err, conversations.ErrItemNotFound)
	})

	t.Run("DeleteItemRemovesItAndReturnsTheConversation", func(t *testing.T) {
		s := setup(t)
		create(t, s, "owner:a", "conv_1", Messages("msg", 3))
		got, err := s.DeleteItem(ctx, "owner:a", "conv_1", "msg_1")
		require.NoError(t, err)
		require.Equal(t, NewConversation("conv_1"), got)
		require.Equal(t, []string{"msg_0", "msg_2"}, ids(all(t, s, "owner:a", "conv_1")))
		_, err = s.GetItem(ctx, "owner:a", "conv_1", "msg_1")
		require.ErrorIs(t, err, conversations.ErrItemNotFound)
		_, err = s.DeleteItem(ctx, "owner:a", "conv_1", "msg_1")
		require.ErrorIs(t, err, conversations.ErrItemNotFound, "a second delete finds nothing")
		page, more, err := s.ListItems(ctx, "owner:a", "conv_1", conversations.ItemQuery{Limit: 1, Order: conversations.OrderAsc, After: "msg_0"})
		require.NoError(t, err)
		require.Equal(t, []string{"msg_2"}, ids(page), "pages skip the deleted item")
		require.False(t, more)
		require.NoError(t, s.AppendItems(ctx, "owner:a", "conv_1", Messages("new", 1)))
		require.Equal(t, []string{"msg_0", "msg_2", "new_0"}, ids(all(t, s, "owner:a", "conv_1")), "items added later come last")
	})

	t.Run("IsSafeForConcurrentUse", func(t *testing.T) {
		s := setup(t)
		create(t, s, "owner:a", "conv_shared", nil)
		const workers, batches = 8, 10
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for b := range batches {
					batch := Messages(fmt.Sprintf("w%d_b%d", w, b), 2)
					if err := s.AppendItems(ctx, "owner:a", "conv_shared", batch); err != nil {
						t.Errorf("AppendItems: %v", err)
						return
					}
					if _, err := s.ConversationItems(ctx, "owner:a", "conv_shared", 5); err != nil {
						t.Errorf("ConversationItems: %v", err)
					}
					own := fmt.Sprintf("conv_%d_%d", w, b)
					if err := s.Create(ctx, "owner:b", NewConversation(own), batch); err != nil {
						t.Errorf("Create %s: %v", own, err)
					}
				}
			})
		}
		wg.Wait()
		got := all(t, s, "owner:a", "conv_shared")
		require.Len(t, got, workers*batches*2)
		for i := 0; i < len(got); i += 2 {
			require.Equal(t, got[i].ID[:len(got[i].ID)-1], got[i+1].ID[:len(got[i+1].ID)-1], "a batch is added whole, its items together")
		}
	})
}
