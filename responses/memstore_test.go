package responses_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/responses/responsestest"
)

func TestMemoryStore(t *testing.T) {
	responsestest.TestStore(t, func(*testing.T) responses.Store { return responses.NewMemoryStore(nil) })
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestMemoryStoreEvictsTheLeastRecentlyPutAboveMaxResponses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := responses.NewMemoryStore(&responses.MemoryStoreOptions{MaxResponses: 3})
	for i := range 3 {
		require.NoError(t, s.Put(ctx, responsestest.NewStoredResponse("o", fmt.Sprint("resp_", i), "")))
	}
	// Putting resp_0 again makes resp_1 the least recently put.
	require.NoError(t, s.Put(ctx, responsestest.NewStoredResponse("o", "resp_0", "")))
	require.NoError(t, s.Put(ctx, responsestest.NewStoredResponse("o", "resp_3", "")))
	require.Equal(t, 3, s.Len())
	_, err := s.Get(ctx, "o", "resp_1")
	require.ErrorIs(t, err, responses.ErrNotFound)
	for _, id := range []string{"resp_0", "resp_2", "resp_3"} {
		_, err := s.Get(ctx, "o", id)
		require.NoError(t, err, id)
	}
}

func TestMemoryStoreForgetsResponsesOlderThanMaxAge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := &fakeClock{now: time.Unix(1700000000, 0)}
	s := responses.NewMemoryStore(&responses.MemoryStoreOptions{MaxAge: time.Hour, Now: clock.Now})
	require.NoError(t, s.Put(ctx, responsestest.NewStoredResponse("o", "resp_old", "")))
	clock.Add(30 * time.Minute)
	require.NoError(t, s.Put(ctx, responsestest.NewStoredResponse("o", "resp_new", "")))
	clock.Add(30 * time.Minute)

	_, err := s.Get(ctx, "o", "resp_old")
	require.ErrorIs(t, err, responses.ErrNotFound, "an hour old")
	require.ErrorIs(t, s.Delete(ctx, "o", "resp_old"), responses.ErrNotFound)
	_, err = s.Get(ctx, "o", "resp_new")
	require.NoError(t, err, "half an hour old")

	clock.Add(31 * time.Minute)
	require.NoError(t, s.Put(ctx, responsestest.NewStoredResponse("o", "resp_newest", "")))
	require.Equal(t, 1, s.Len(), "a Put drops the expired responses")
}

func TestMemoryStoreWithoutBounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := &fakeClock{now: time.Unix(1700000000, 0)}
	s := responses.NewMemoryStore(&responses.MemoryStoreOptions{MaxResponses: -1, MaxAge: -1, Now: clock.Now})
	for i := range responses.DefaultMaxResponses + 10 {
		require.NoError(t, s.Put(ctx, responsestest.NewStoredResponse("o", fmt.Sprint("resp_", i), "")))
	}
	clock.Add(10 * responses.DefaultMaxAge)
	require.Equal(t, responses.DefaultMaxResponses+10, s.Len())
	_, err := s.Get(ctx, "o", "resp_0")
	require.NoError(t, err)
}

func TestMemoryStoreBoundsTheEstimatedSize(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	big := func(id string) *responses.StoredResponse {
		sr := responsestest.NewStoredResponse("o", id, "")
		sr.Input = append(sr.Input, responses.Item{Type: responses.ItemMessage, Role: responses.RoleUser, Content: responses.PartsContent(
			responses.ContentPart{Type: responses.PartInputImage, ImageURL: "data:image/png;base64," + strings.Repeat("A", 4000)})})
		return sr
	}
	s := responses.NewMemoryStore(&responses.MemoryStoreOptions{MaxBytes: 10000})
	for i := range 3 {
		require.NoError(t, s.Put(ctx, big(fmt.Sprint("resp_", i))))
	}
	require.Equal(t, 2, s.Len(), "two 4 KB images fit in 10 KB, not three")
	_, err := s.Get(ctx, "o", "resp_0")
	require.ErrorIs(t, err, responses.ErrNotFound, "the least recently put went first")

	huge := big("resp_huge")
	huge.Input[1].Content.Parts[0].ImageURL += strings.Repeat("A", 10000)
	require.Error(t, s.Put(ctx, huge), "larger than MaxBytes on its own")
	require.Equal(t, 2, s.Len(), "a refused Put evicts nothing")
	require.NoError(t, s.Delete(ctx, "o", "resp_1"))
	require.NoError(t, s.Put(ctx, big("resp_3")))
	require.Equal(t, 2, s.Len(), "Delete gave its bytes back")
}
