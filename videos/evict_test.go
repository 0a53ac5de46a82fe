package videos_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/videostest"
)

// fakeClock is a clock that tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1748779200, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// storeBundle drives a MemoryStore by hand.
type storeBundle struct {
	store *videos.MemoryStore
	clock *fakeClock
	n     int
}

func newStoreBundle(o videos.MemoryStoreOptions) *storeBundle {
	clock := newFakeClock()
	o.Now = clock.Now
	return &storeBundle{store: videos.NewMemoryStore(&o), clock: clock}
}

// create stores a queued task with a prompt of the given length.
func (b *storeBundle) create(t *testing.T, promptLen int) string {
	t.Helper()
	b.n++
	id := fmt.Sprintf("task_%04d", b.n)
	require.NoError(t, b.store.Create(context.Background(), &videos.Task{
		ID: id, Owner: "alice", Model: "m", Status: videos.StatusQueued,
		CreatedAt: time.Unix(int64(b.n), 0),
		Request:   videos.Request{Create: &videos.CreateRequest{Model: "m", Prompt: strings.Repeat("p", promptLen)}},
	}))
	return id
}

// claim claims the oldest queued task.
func (b *storeBundle) claim(t *testing.T) *videos.Task {
	t.Helper()
	task, err := b.store.Claim(context.Background(), videos.ClaimParams{Worker: "w", Now: b.clock.Now()})
	require.NoError(t, err)
	return task
}

// finish claims the oldest queued task and completes it.
func (b *storeBundle) finish(t *testing.T) string {
	t.Helper()
	task := b.claim(t)
	_, err := b.store.Update(context.Background(), videos.UpdateParams{ID: task.ID, Attempt: task.Attempts, Now: b.clock.Now(),
		Complete: &videos.Completion{}})
	require.NoError(t, err)
	return task.ID
}

func (b *storeBundle) has(id string) bool {
	_, err := b.store.Get(context.Background(), "alice", id)
	return err == nil
}

func TestMemoryStoreWithSmallBoundsPassesTheSuite(t *testing.T) {
	t.Parallel()
	videostest.TestTaskStore(t, func(*testing.T) videos.TaskStore {
		return videos.NewMemoryStore(&videos.MemoryStoreOptions{MaxTasks: 2, MaxAge: time.Hour, MaxBytes: 4096})
	})
}

func TestMemoryStoreEvictsFinishedTasksByCount(t *testing.T) {
	t.Parallel()
	b := newStoreBundle(videos.MemoryStoreOptions{MaxTasks: 3})
	first := b.create(t, 1)
	second := b.create(t, 1)
	b.finish(t)
	b.finish(t)
	queued := []string{b.create(t, 1), b.create(t, 1), b.create(t, 1)}
	running := b.claim(t).ID

	require.False(t, b.has(first), "the earliest finished task is evicted first")
	require.False(t, b.has(second))
	for _, id := range queued {
		require.True(t, b.has(id), "queued and running tasks are never evicted, even over MaxTasks")
	}
	require.Equal(t, queued[0], running)
	require.Equal(t, 3, b.store.Len())

	// Over the bound with nothing finished: the store grows rather than
	// drop a live task.
	b.create(t, 1)
	require.Equal(t, 4, b.store.Len())
	tasks, _, err := b.store.List(context.Background(), videos.ListParams{Owner: "alice"})
	require.NoError(t, err)
	require.Len(t, tasks, 4)
}

func TestMemoryStoreEvictsFinishedTasksByAge(t *testing.T) {
	t.Parallel()
	b := newStoreBundle(videos.MemoryStoreOptions{MaxAge: time.Hour})
	done := b.create(t, 1)
	b.finish(t)
	queued := b.create(t, 1)
	b.create(t, 1)
	running := b.claim(t).ID
	require.Equal(t, queued, running)

	b.clock.Advance(59 * time.Minute)
	require.True(t, b.has(done))
	b.clock.Advance(time.Minute)
	require.False(t, b.has(done), "Get no longer finds a finished task past MaxAge")
	require.True(t, b.has(running), "a running task is kept however old")
	require.Equal(t, 3, b.store.Len(), "dropped at the next write")
	b.create(t, 1)
	require.Equal(t, 3, b.store.Len())
	_, err := b.store.Get(context.Background(), "alice", done)
	require.True(t, errors.Is(err, videos.ErrNotFound))
}

func TestMemoryStoreEvictsFinishedTasksBySize(t *testing.T) {
	t.Parallel()
	b := newStoreBundle(videos.MemoryStoreOptions{MaxBytes: 10 << 10})
	big := b.create(t, 4<<10)
	b.finish(t)
	live := []string{b.create(t, 4<<10), b.create(t, 4<<10)}
	require.False(t, b.has(big), "the finished task goes when the requests pass MaxBytes")
	b.create(t, 4<<10)
	for _, id := range live {
		require.True(t, b.has(id), "queued tasks stay over MaxBytes")
	}
}

func TestMemoryStoreFailedByAnExpiredLeaseIsEvictedToo(t *testing.T) {
	t.Parallel()
	b := newStoreBundle(videos.MemoryStoreOptions{MaxAge: time.Hour})
	id := b.create(t, 1)
	task, err := b.store.Claim(context.Background(), videos.ClaimParams{Worker: "w", Now: b.clock.Now(), Lease: time.Second, MaxAttempts: 1})
	require.NoError(t, err)
	_, err = b.store.Claim(context.Background(), videos.ClaimParams{Worker: "w", Now: b.clock.Now().Add(time.Minute), MaxAttempts: 1})
	require.ErrorIs(t, err, videos.ErrNoTask)
	got, err := b.store.Get(context.Background(), "alice", task.ID)
	require.NoError(t, err)
	require.Equal(t, videos.StatusFailed, got.Status)
	b.clock.Advance(time.Hour)
	require.False(t, b.has(id))
}

func TestMemoryContentStoreWithSmallBoundsPassesTheSuite(t *testing.T) {
	t.Parallel()
	videostest.TestContentStore(t, func(*testing.T) videos.ContentStore {
		return videos.NewMemoryContentStore(&videos.MemoryContentStoreOptions{MaxTasks: 4, MaxAge: time.Hour, MaxBytes: 1 << 20})
	})
}

func TestMemoryContentStoreEvicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	put := func(t *testing.T, s *videos.MemoryContentStore, id string, n int) error {
		t.Helper()
		return s.Put(ctx, videos.PutParams{TaskID: id, Variant: videos.VariantVideo, ContentType: "video/mp4", Data: make([]byte, n)})
	}
	has := func(s *videos.MemoryContentStore, id string) bool {
		c, err := s.Open(ctx, id, videos.VariantVideo)
		if err != nil {
			return false
		}
		_ = c.Body.Close()
		return true
	}

	t.Run("ByCount", func(t *testing.T) {
		t.Parallel()
		s := videos.NewMemoryContentStore(&videos.MemoryContentStoreOptions{MaxTasks: 2})
		for _, id := range []string{"task_a", "task_b", "task_c"} {
			require.NoError(t, put(t, s, id, 10))
		}
		require.False(t, has(s, "task_a"))
		require.True(t, has(s, "task_b"))
		require.True(t, has(s, "task_c"))
	})
	t.Run("ByAge", func(t *testing.T) {
		t.Parallel()
		clock := newFakeClock()
		s := videos.NewMemoryContentStore(&videos.MemoryContentStoreOptions{MaxAge: time.Hour, Now: clock.Now})
		require.NoError(t, put(t, s, "task_a", 10))
		clock.Advance(30 * time.Minute)
		require.NoError(t, put(t, s, "task_b", 10))
		clock.Advance(30 * time.Minute)
		require.False(t, has(s, "task_a"))
		require.True(t, has(s, "task_b"))
	})
	t.Run("BySize", func(t *testing.T) {
		t.Parallel()
		s := videos.NewMemoryContentStore(&videos.MemoryContentStoreOptions{MaxBytes: 100})
		require.NoError(t, put(t, s, "task_a", 60))
		require.NoError(t, put(t, s, "task_b", 30))
		require.NoError(t, s.Put(ctx, videos.PutParams{TaskID: "task_b", Variant: videos.VariantThumbnail, ContentType: "image/png", Data: make([]byte, 30)}))
		require.False(t, has(s, "task_a"), "the least recently put task goes first")
		require.True(t, has(s, "task_b"))
		require.Error(t, put(t, s, "task_c", 101), "content larger than MaxBytes alone is refused")
		require.True(t, has(s, "task_b"))
	})
}
