package responses_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/internal/golden"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
	"github.com/gatewaykit/gatewaykit/responses"
)

// fullStore is a store whose disk is full: Get and Delete work, Put
// fails.
type fullStore struct {
	*responses.MemoryStore
	puts atomic.Int32
}

func (s *fullStore) Put(context.Context, *responses.StoredResponse) error {
	s.puts.Add(1)
	return errors.New("sqlite: storing response: database or disk is full (13)")
}

// notStoredMessage is the message of a response that could not be stored.
const notStoredMessage = "The response was generated and charged, but it could not be stored: " +
	"it cannot be retrieved, nor continued with previous_response_id. Sending the request again generates and charges a new response."

// TestAResponseThatCannotBeStoredIsNotReportedAsStored: when the store
// fails, the client learns that its response is not stored (a 500 that
// the SDKs do not retry on their own, or a stream that ends with
// response.failed rather than response.completed), and the response it
// was generated is charged.
func TestAResponseThatCannotBeStoredIsNotReportedAsStored(t *testing.T) {
	t.Parallel()
	const input = `"input":"Keep this for later."`
	// What the same request uses, with a store that works.
	w := post(t, newTestHandler(), `{"model":"demo-chat",`+input+`}`)
	require.Equal(t, 200, w.Code)
	want := int64(decode(t, w.Body.String())["usage"].(map[string]any)["total_tokens"].(float64))

	t.Run("JSON", func(t *testing.T) {
		t.Parallel()
		store := &fullStore{MemoryStore: responses.NewMemoryStore(nil)}
		h, keys := servedtest.Keyed(t, newTestHandler(responses.WithStore(store)), auth.LimitedQuota(10000))
		w := post(t, h, `{"model":"demo-chat",`+input+`}`)
		require.Equal(t, http.StatusInternalServerError, w.Code)
		require.Equal(t, "false", w.Header().Get("X-Should-Retry"), "the SDKs must not send it again on their own: it would be charged again")
		golden.JSON(t, golden.Path("store_failure", ".error.json"), []byte(normalizeIDs(w.Body.String())))
		require.Equal(t, notStoredMessage, decode(t, w.Body.String())["error"].(map[string]any)["message"])
		require.NotContains(t, w.Body.String(), "disk is full", "the cause is logged, not sent")
		require.Equal(t, int32(1), store.puts.Load())
		require.Equal(t, 10000-want, keys.Quota(t).Remaining, "the response was generated: it is charged")
	})
	t.Run("Stream", func(t *testing.T) {
		t.Parallel()
		store := &fullStore{MemoryStore: responses.NewMemoryStore(nil)}
		h, keys := servedtest.Keyed(t, newTestHandler(responses.WithStore(store)), auth.LimitedQuota(10000))
		w := post(t, h, `{"model":"demo-chat","stream":true,`+input+`}`)
		require.Equal(t, 200, w.Code)
		evs := readEvents(t, w.Body.String())
		final := checkStream(t, evs)
		for _, ev := range evs {
			require.NotEqual(t, responses.EventCompleted, ev.Name, "the response is not stored: it did not complete")
		}
		require.Equal(t, responses.EventFailed, evs[len(evs)-1].Name)
		require.Equal(t, "failed", final["status"])
		require.Nil(t, final["completed_at"])
		require.Equal(t, notStoredMessage, final["error"].(map[string]any)["message"])
		require.Equal(t, "internal_server_error", final["error"].(map[string]any)["code"])
		require.Equal(t, float64(want), final["usage"].(map[string]any)["total_tokens"])
		golden.Compare(t, golden.Path("store_failure", ".stream.txt"), normalizeIDs(w.Body.String()), func(s string) any { return readEvents(t, s) })
		require.Equal(t, int32(1), store.puts.Load(), "the failed response is not stored again")
		require.Equal(t, 10000-want, keys.Quota(t).Remaining, "the response was generated: it is charged")
	})
}
