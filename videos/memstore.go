package videos

import (
	"cmp"
	"container/heap"
	"container/list"
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"
)

// Default bounds of a [MemoryStore] and a [MemoryContentStore].
const (
	// DefaultMaxTasks is the number of tasks a MemoryStore holds before
	// it evicts finished ones, and the number of tasks whose content a
	// MemoryContentStore keeps: 10 000.
	DefaultMaxTasks = 10000
	// DefaultMaxAge is how long a MemoryStore keeps a finished task
	// (since it finished), and a MemoryContentStore a task's content
	// (since it was put): 24 hours.
	DefaultMaxAge = 24 * time.Hour
	// DefaultMaxBytes bounds the estimated size of the requests of the
	// tasks a MemoryStore holds (reference images as data URIs, prompts,
	// unmodelled fields), and the bytes of the videos and thumbnails a
	// MemoryContentStore holds: 1 GiB.
	DefaultMaxBytes int64 = 1 << 30
)

// MemoryStoreOptions are the bounds of a [MemoryStore]. The zero value
// (and a nil *MemoryStoreOptions) means the defaults.
type MemoryStoreOptions struct {
	// MaxTasks is the number of tasks above which finished tasks are
	// evicted; 0 means DefaultMaxTasks, a negative value no limit.
	MaxTasks int
	// MaxAge is how long a finished task is kept after it finished; 0
	// means DefaultMaxAge, a negative value forever.
	MaxAge time.Duration
	// MaxBytes bounds the estimated size of the tasks' requests, above
	// which finished tasks are evicted; 0 means DefaultMaxBytes, a
	// negative value no limit.
	MaxBytes int64
	// Now is the clock that ages finished tasks; nil means time.Now.
	Now func() time.Time
}

// withDefaults returns o with the default of each zero field.
func (o MemoryStoreOptions) withDefaults() MemoryStoreOptions {
	o.MaxTasks = cmp.Or(o.MaxTasks, DefaultMaxTasks)
	o.MaxAge = cmp.Or(o.MaxAge, DefaultMaxAge)
	o.MaxBytes = cmp.Or(o.MaxBytes, DefaultMaxBytes)
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// MemoryStore is the in-memory [TaskStore]. It is safe for concurrent use.
// It suits tests, demos and single process gateways whose tasks may be
// lost on restart.
//
// Eviction policy: only finished (completed or failed) tasks are ever
// evicted, never a queued or in_progress one. A finished task is dropped
// once it finished more than MaxAge ago, and the earliest finished tasks are dropped while the
// store holds more than MaxTasks tasks or more than MaxBytes of requests
// (an estimate: the lengths of their strings and raw JSON). Age is
// measured with the store's clock from the moment the store saw the task
// finish, not from the callers' times. Evictions
// happen at Create, Claim and Update; Get answers ErrNotFound for a task
// past MaxAge at once, List may show it until the next of those. So the
// store holds at most MaxTasks tasks and MaxBytes of requests plus the
// tasks that are still queued or running, which the caller bounds (rate
// limits, quota, the runner's pace). Deleting a task, or its eviction,
// leaves its content to the [ContentStore]'s own bounds.
//
// Claim costs O(log n) in the number of queued tasks plus O(r) in the
// number of running ones; List costs O(log n + limit) in the owner's tasks.
type MemoryStore struct {
	maxN     int
	maxAge   time.Duration
	maxBytes int64
	now      func() time.Time

	mu       sync.RWMutex
	tasks    map[string]*Task
	owners   map[string][]*Task // each sorted by (CreatedAt, ID)
	queue    taskHeap           // queued tasks; deleted ones are skipped lazily
	running  map[string]*Task   // in_progress tasks
	finished *list.List         // of finishedTask, in the order they finished
	finEl    map[string]*list.Element
	sizes    map[string]int64 // estimated size of each task's request
	bytes    int64            // their sum
}

// NewMemoryStore returns an empty store with the bounds of opts; nil
// means the defaults ([DefaultMaxTasks], [DefaultMaxAge],
// [DefaultMaxBytes]).
func NewMemoryStore(opts *MemoryStoreOptions) *MemoryStore {
	var o MemoryStoreOptions
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	return &MemoryStore{
		maxN:     o.MaxTasks,
		maxAge:   o.MaxAge,
		maxBytes: o.MaxBytes,
		now:      o.Now,
		tasks:    make(map[string]*Task),
		owners:   make(map[string][]*Task),
		running:  make(map[string]*Task),
		finished: list.New(),
		finEl:    make(map[string]*list.Element),
		sizes:    make(map[string]int64),
	}
}

var _ TaskStore = (*MemoryStore)(nil)

// Len returns the number of stored tasks, finished tasks past MaxAge
// that are not dropped yet included.
func (s *MemoryStore) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.tasks)
}

func compareTasks(a, b *Task) int {
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// Create implements [TaskStore].
func (s *MemoryStore) Create(_ context.Context, t *Task) error {
	switch {
	case t == nil:
		return errorf(ErrInvalidParams, "nil task")
	case t.ID == "" || t.Owner == "" || t.CreatedAt.IsZero():
		return errorf(ErrInvalidParams, "a new task needs an id, an owner and a creation time")
	case t.Status != StatusQueued:
		return errorf(ErrInvalidParams, "a new task must be queued, not %q", t.Status)
	}
	c := t.Clone()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tasks[c.ID]; ok {
		return errorf(ErrExists, "%s", c.ID)
	}
	s.tasks[c.ID] = c
	owned := s.owners[c.Owner]
	i, _ := slices.BinarySearchFunc(owned, c, compareTasks)
	s.owners[c.Owner] = slices.Insert(owned, i, c)
	heap.Push(&s.queue, c)
	size := requestSize(c)
	s.sizes[c.ID] = size
	s.bytes += size
	s.pruneLocked(s.now())
	return nil
}

// Get implements [TaskStore].
func (s *MemoryStore) Get(_ context.Context, owner, id string) (*Task, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.tasks[id]
	if !ok || t.Owner != owner || s.expired(id, s.now()) {
		return nil, errorf(ErrNotFound, "%s", id)
	}
	return t.Clone(), nil
}

// Claim implements [TaskStore].
func (s *MemoryStore) Claim(_ context.Context, p ClaimParams) (*Task, error) {
	if p.Worker == "" {
		return nil, errorf(ErrInvalidParams, "Claim needs a worker name")
	}
	now := nowOr(p.Now)
	p.Now = now
	s.mu.Lock()
	defer s.mu.Unlock()

	// Leases that ran out: retry the oldest, fail the exhausted.
	var retry *Task
	for id, t := range s.running {
		if !leaseExpired(t, now) {
			continue
		}
		if !expireLease(t, now, p.MaxAttempts) {
			delete(s.running, id)
			s.finishLocked(t)
			continue
		}
		if retry == nil || compareTasks(t, retry) < 0 {
			retry = t
		}
	}
	s.pruneLocked(s.now())
	if retry != nil {
		claimTask(retry, p)
		return retry.Clone(), nil
	}

	for s.queue.Len() > 0 {
		t := heap.Pop(&s.queue).(*Task)
		if s.tasks[t.ID] != t || t.Status != StatusQueued {
			continue // deleted
		}
		claimTask(t, p)
		s.running[t.ID] = t
		return t.Clone(), nil
	}
	return nil, ErrNoTask
}

// Update implements [TaskStore].
func (s *MemoryStore) Update(_ context.Context, p UpdateParams) (*Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[p.ID]
	if !ok {
		return nil, errorf(ErrNotFound, "%s", p.ID)
	}
	// Apply to a copy, so that a refused update changes nothing.
	c := t.Clone()
	if err := ApplyUpdate(c, p); err != nil {
		return nil, err
	}
	*t = *c
	if t.Status.Terminal() {
		delete(s.running, t.ID)
		s.finishLocked(t)
	}
	out := t.Clone()
	s.pruneLocked(s.now())
	return out, nil
}

// List implements [TaskStore].
func (s *MemoryStore) List(_ context.Context, p ListParams) ([]*Task, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	owned := s.owners[p.Owner]
	desc := p.Order != OrderAsc
	// [lo, hi) is the window of candidates in ascending order.
	lo, hi := 0, len(owned)
	if p.After != "" {
		a, ok := s.tasks[p.After]
		if !ok || a.Owner != p.Owner {
			return nil, false, errorf(ErrNotFound, "%s", p.After)
		}
		i, _ := slices.BinarySearchFunc(owned, a, compareTasks)
		if desc {
			hi = i
		} else {
			lo = i + 1
		}
	}
	n := hi - lo
	if p.Limit > 0 && p.Limit < n {
		n = p.Limit
	}
	out := make([]*Task, 0, n)
	for k := range n {
		if desc {
			out = append(out, owned[hi-1-k].Clone())
		} else {
			out = append(out, owned[lo+k].Clone())
		}
	}
	return out, n < hi-lo, nil
}

// Delete implements [TaskStore].
func (s *MemoryStore) Delete(_ context.Context, owner, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[id]
	if !ok || t.Owner != owner {
		return errorf(ErrNotFound, "%s", id)
	}
	s.removeLocked(t)
	return nil
}

// removeLocked forgets t. A queued task stays in the heap until Claim
// skips it.
func (s *MemoryStore) removeLocked(t *Task) {
	delete(s.tasks, t.ID)
	delete(s.running, t.ID)
	if el, ok := s.finEl[t.ID]; ok {
		s.finished.Remove(el)
		delete(s.finEl, t.ID)
	}
	s.bytes -= s.sizes[t.ID]
	delete(s.sizes, t.ID)
	owned := s.owners[t.Owner]
	if i, found := slices.BinarySearchFunc(owned, t, compareTasks); found {
		owned = slices.Delete(owned, i, i+1)
	}
	if len(owned) == 0 {
		delete(s.owners, t.Owner)
	} else {
		s.owners[t.Owner] = owned
	}
}

// finishedTask is a finished task and when, by the store's clock, it
// finished.
type finishedTask struct {
	t  *Task
	at time.Time
}

// finishLocked records that t, stored, has just finished.
func (s *MemoryStore) finishLocked(t *Task) {
	if _, ok := s.finEl[t.ID]; !ok {
		s.finEl[t.ID] = s.finished.PushBack(finishedTask{t, s.now()})
	}
}

// expired reports whether the task with the given id finished longer
// than MaxAge ago.
func (s *MemoryStore) expired(id string, now time.Time) bool {
	el, ok := s.finEl[id]
	return ok && s.maxAge >= 0 && now.Sub(el.Value.(finishedTask).at) >= s.maxAge
}

// pruneLocked evicts the finished tasks past MaxAge, then the earliest
// finished ones while the count or the size is over its bound. Queued
// and running tasks are never evicted.
func (s *MemoryStore) pruneLocked(now time.Time) {
	// The list is in the order of the store's clock: the expired ones
	// are at its front.
	for el := s.finished.Front(); el != nil && s.maxAge >= 0; el = s.finished.Front() {
		f := el.Value.(finishedTask)
		if now.Sub(f.at) < s.maxAge {
			break
		}
		s.removeLocked(f.t)
	}
	for el := s.finished.Front(); el != nil; el = s.finished.Front() {
		if (s.maxN < 0 || len(s.tasks) <= s.maxN) && (s.maxBytes < 0 || s.bytes <= s.maxBytes) {
			return
		}
		s.removeLocked(el.Value.(finishedTask).t)
	}
}

// requestSize estimates the memory that t's request holds: the bytes of
// its strings and raw JSON, plus a fixed overhead.
func requestSize(t *Task) int64 {
	const overhead = 256
	n := int64(overhead + len(t.ID) + len(t.Owner) + len(t.Model))
	raw := func(m map[string]json.RawMessage) {
		for k, v := range m {
			n += int64(len(k) + len(v))
		}
	}
	if c := t.Request.Create; c != nil {
		n += int64(len(c.Model) + len(c.Prompt) + len(c.Size) + len(c.Seconds))
		raw(c.Extra)
		if r := c.InputReference; r != nil {
			n += int64(len(r.ImageURL) + len(r.FileID))
			raw(r.Extra)
		}
	}
	if m := t.Request.Multimodal; m != nil {
		n += int64(len(m.Model) + len(m.Mode) + len(m.Prompt) + len(m.Resolution) + len(m.AspectRatio))
		raw(m.Extra)
		for _, a := range m.Assets {
			n += int64(32 + len(a.Role) + len(a.URL))
			raw(a.Extra)
		}
	}
	return n
}

// taskHeap orders queued tasks by (CreatedAt, ID).
type taskHeap []*Task

func (h taskHeap) Len() int           { return len(h) }
func (h taskHeap) Less(i, j int) bool { return compareTasks(h[i], h[j]) < 0 }
func (h taskHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *taskHeap) Push(x any)        { *h = append(*h, x.(*Task)) }
func (h *taskHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return t
}
