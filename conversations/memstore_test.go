package conversations_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/conversations"
	"github.com/gatewaykit/gatewaykit/conversations/conversationstest"
	"github.com/gatewaykit/gatewaykit/responses"
)

func TestMemoryStore(t *testing.T) {
	conversationstest.TestStore(t, func(*testing.T) conversations.Store { return conversations.NewMemoryStore(nil) })
}

// TestMemoryStoreBounds: the least recently changed conversations are
// evicted beyond MaxConversations or MaxBytes, and a conversation larger
// than MaxBytes alone is refused, the store unchanged.
func TestMemoryStoreBounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	create := func(t *testing.T, s *conversations.MemoryStore, id string, items []responses.Item) {
		t.Helper()
		require.NoError(t, s.Create(ctx, "owner", conversationstest.NewConversation(id), items))
	}
	has := func(s *conversations.MemoryStore, id string) bool {
		_, err := s.Get(ctx, "owner", id)
		return err == nil
	}

	t.Run("MaxConversations", func(t *testing.T) {
		t.Parallel()
		s := conversations.NewMemoryStore(&conversations.MemoryStoreOptions{MaxConversations: 2})
		create(t, s, "conv_1", nil)
		create(t, s, "conv_2", nil)
		require.NoError(t, s.AppendItems(ctx, "owner", "conv_1", conversationstest.Messages("msg", 1)), "conv_1 is now the most recent")
		create(t, s, "conv_3", nil)
		require.Equal(t, 2, s.Len())
		require.True(t, has(s, "conv_1"))
		require.False(t, has(s, "conv_2"), "the least recently changed is evicted")
		require.True(t, has(s, "conv_3"))
	})

	t.Run("MaxBytes", func(t *testing.T) {
		t.Parallel()
		s := conversations.NewMemoryStore(&conversations.MemoryStoreOptions{MaxBytes: 2500})
		create(t, s, "conv_1", conversationstest.Messages("a", 5))
		create(t, s, "conv_2", conversationstest.Messages("b", 5))
		require.True(t, has(s, "conv_1"))
		require.NoError(t, s.AppendItems(ctx, "owner", "conv_2", conversationstest.Messages("c", 5)))
		require.False(t, has(s, "conv_1"), "evicted for conv_2's new items")
		require.True(t, has(s, "conv_2"))

		err := s.AppendItems(ctx, "owner", "conv_2", conversationstest.Messages("d", 20))
		require.ErrorContains(t, err, "more than this gateway keeps")
		items, err := s.ConversationItems(ctx, "owner", "conv_2", 100)
		require.NoError(t, err)
		require.Len(t, items, 10, "a refused append adds nothing")
		require.Error(t, s.Create(ctx, "owner", conversationstest.NewConversation("conv_big"), conversationstest.Messages("e", 30)))
		require.False(t, has(s, "conv_big"))
	})

	t.Run("Unbounded", func(t *testing.T) {
		t.Parallel()
		s := conversations.NewMemoryStore(&conversations.MemoryStoreOptions{MaxConversations: -1, MaxBytes: -1})
		for i := range 50 {
			create(t, s, fmt.Sprintf("conv_%d", i), conversationstest.Messages("m", 3))
		}
		require.Equal(t, 50, s.Len())
	})
}
