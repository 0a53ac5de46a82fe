// Package responsestest holds the conformance suites of the responses
// package's interfaces, for the implementations that ship with gatewaykit
// and for embedders' own: [TestStore] for a [responses.Store], and
// [TestBackend] for a [responses.Backend] (a backend that breaks its
// contract fails there, with the rule it broke, instead of answering
// clients with a 500).
package responsestest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/responses"
)

// NewStoredResponse returns a complete stored response of owner with the
// given id, continuing prev when prev is not empty: one user input item,
// one message and one function call in its output, usage, metadata.
func NewStoredResponse(owner, id, prev string) *responses.StoredResponse {
	text := "Hello from " + id
	sr := &responses.StoredResponse{
		Owner: owner,
		Input: []responses.Item{{Type: responses.ItemMessage, Role: responses.RoleUser, Content: responses.TextContent(text)}},
		Response: responses.Response{
			ID: id, Object: responses.ObjectResponse, CreatedAt: 1700000000, Status: responses.StatusCompleted,
			Model: "demo-chat", ParallelToolCalls: true, Store: true,
			ToolChoice: responses.ToolChoice{Mode: responses.ToolChoiceAuto},
			Tools:      []responses.Tool{},
			Metadata:   map[string]string{"topic": "suite"},
			Output: []responses.OutputItem{
				{Type: responses.ItemReasoning, ID: "rs_" + id, Status: responses.StatusCompleted,
					Summary:          []responses.SummaryText{{Type: responses.PartSummary, Text: "Thinking."}},
					EncryptedContent: "gAAAAB-" + id}, // kept, for previous_response_id (issue 26)
				{Type: responses.ItemMessage, ID: "msg_" + id, Status: responses.StatusCompleted, Role: responses.RoleAssistant,
					Content: []responses.OutputText{{Type: responses.PartOutputText, Text: "You said: " + text, Annotations: []json.RawMessage{}}}},
				{Type: responses.ItemFunctionCall, ID: "fc_" + id, Status: responses.StatusCompleted,
					CallID: "call_" + id, Name: "get_weather", Arguments: `{"city":"Paris"}`},
			},
			Usage: &responses.Usage{InputTokens: 3, OutputTokens: 5, TotalTokens: 8},
		},
	}
	if prev != "" {
		sr.Response.PreviousResponseID = &prev
	}
	return sr
}

// TestStore checks the [responses.Store] contract. newStore is called once
// per subtest and must return an empty store; subtests run in parallel.
func TestStore(t *testing.T, newStore func(t *testing.T) responses.Store) {
	ctx := context.Background()
	setup := func(t *testing.T) responses.Store {
		t.Helper()
		t.Parallel()
		return newStore(t)
	}
	put := func(t *testing.T, s responses.Store, sr *responses.StoredResponse) {
		t.Helper()
		require.NoError(t, s.Put(ctx, sr))
	}

	t.Run("GetReturnsWhatPutStored", func(t *testing.T) {
		s := setup(t)
		want := NewStoredResponse("owner:a", "resp_1", "resp_0")
		put(t, s, want)
		got, err := s.Get(ctx, "owner:a", "resp_1")
		require.NoError(t, err)
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(responses.Input{}, responses.Content{})); diff != "" {
			t.Errorf("Get mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("GetReturnsErrNotFoundIfResponseDoesNotExist", func(t *testing.T) {
		s := setup(t)
		_, err := s.Get(ctx, "owner:a", "resp_missing")
		require.ErrorIs(t, err, responses.ErrNotFound)
	})

	t.Run("GetReturnsErrNotFoundForAnotherOwner", func(t *testing.T) {
		s := setup(t)
		put(t, s, NewStoredResponse("owner:a", "resp_1", ""))
		_, err := s.Get(ctx, "owner:b", "resp_1")
		require.ErrorIs(t, err, responses.ErrNotFound)
		_, err = s.Get(ctx, "", "resp_1")
		require.ErrorIs(t, err, responses.ErrNotFound)
	})

	t.Run("EmptyOwnerIsAnOwnerOfItsOwn", func(t *testing.T) {
		s := setup(t)
		put(t, s, NewStoredResponse("", "resp_1", ""))
		got, err := s.Get(ctx, "", "resp_1")
		require.NoError(t, err)
		require.Equal(t, "resp_1", got.Response.ID)
		_, err = s.Get(ctx, "owner:a", "resp_1")
		require.ErrorIs(t, err, responses.ErrNotFound)
	})

	t.Run("PutRejectsAnEmptyID", func(t *testing.T) {
		s := setup(t)
		require.Error(t, s.Put(ctx, NewStoredResponse("owner:a", "", "")))
	})

	t.Run("PutReplacesTheSameID", func(t *testing.T) {
		s := setup(t)
		put(t, s, NewStoredResponse("owner:a", "resp_1", ""))
		second := NewStoredResponse("owner:a", "resp_1", "")
		second.Response.Status = responses.StatusFailed
		second.Response.Error = &responses.ResponseError{Code: "bad_gateway", Message: "upstream failed"}
		put(t, s, second)
		got, err := s.Get(ctx, "owner:a", "resp_1")
		require.NoError(t, err)
		require.Equal(t, responses.StatusFailed, got.Response.Status)
		require.Equal(t, "upstream failed", got.Response.Error.Message)
	})

	t.Run("DeleteRemovesTheResponse", func(t *testing.T) {
		s := setup(t)
		put(t, s, NewStoredResponse("owner:a", "resp_1", ""))
		put(t, s, NewStoredResponse("owner:a", "resp_2", "resp_1"))
		require.NoError(t, s.Delete(ctx, "owner:a", "resp_1"))
		_, err := s.Get(ctx, "owner:a", "resp_1")
		require.ErrorIs(t, err, responses.ErrNotFound)
		_, err = s.Get(ctx, "owner:a", "resp_2")
		require.NoError(t, err, "deleting one response leaves the others")
		require.ErrorIs(t, s.Delete(ctx, "owner:a", "resp_1"), responses.ErrNotFound, "a second delete finds nothing")
	})

	t.Run("DeleteReturnsErrNotFoundForAnotherOwner", func(t *testing.T) {
		s := setup(t)
		put(t, s, NewStoredResponse("owner:a", "resp_1", ""))
		require.ErrorIs(t, s.Delete(ctx, "owner:b", "resp_1"), responses.ErrNotFound)
		_, err := s.Get(ctx, "owner:a", "resp_1")
		require.NoError(t, err, "another owner's delete leaves the response")
	})

	t.Run("DeleteReturnsErrNotFoundIfResponseDoesNotExist", func(t *testing.T) {
		s := setup(t)
		require.ErrorIs(t, s.Delete(ctx, "owner:a", "resp_missing"), responses.ErrNotFound)
	})

	t.Run("IsSafeForConcurrentUse", func(t *testing.T) {
		s := setup(t)
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				owner := fmt.Sprintf("owner:%d", w%2)
				for i := range 25 {
					id := fmt.Sprintf("resp_%d_%d", w, i)
					if err := s.Put(ctx, NewStoredResponse(owner, id, "")); err != nil {
						t.Errorf("Put %s: %v", id, err)
						return
					}
					if _, err := s.Get(ctx, owner, id); err != nil {
						t.Errorf("Get %s: %v", id, err)
					}
					if i%2 == 0 {
						if err := s.Delete(ctx, owner, id); err != nil {
							t.Errorf("Delete %s: %v", id, err)
						}
					}
				}
			})
		}
		wg.Wait()
		for w := range 8 {
			for i := range 25 {
				_, err := s.Get(ctx, fmt.Sprintf("owner:%d", w%2), fmt.Sprintf("resp_%d_%d", w, i))
				if i%2 == 0 {
					require.ErrorIs(t, err, responses.ErrNotFound)
				} else {
					require.NoError(t, err)
				}
			}
		}
	})
}
