package videos

import (
	"cmp"
	"container/heap"
	"context"
	"slices"
	"sync"
)

// MemoryStore is the in-memory [TaskStore]. It is safe for concurrent use
// and keeps everything until deleted: it suits tests, demos and single
// process gateways whose tasks may be lost on restart.
//
// Claim costs O(log n) in the number of queued tasks plus O(r) in the
// number of running ones; List costs O(log n + limit) in the owner's tasks.
type MemoryStore struct {
	mu      sync.RWMutex
	tasks   map[string]*Task
	owners  map[string][]*Task // each sorted by (CreatedAt, ID)
	queue   taskHeap           // queued tasks; deleted ones are skipped lazily
	running map[string]*Task   // in_progress tasks
}

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{
		tasks:   make(map[string]*Task),
		owners:  make(map[string][]*Task),
		running: make(map[string]*Task),
	}
}

var _ TaskStore = (*MemoryStore)(nil)

// Len returns the number of stored tasks.
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
	list := s.owners[c.Owner]
	i, _ := slices.BinarySearchFunc(list, c, compareTasks)
	s.owners[c.Owner] = slices.Insert(list, i, c)
	heap.Push(&s.queue, c)
	return nil
}

// Get implements [TaskStore].
func (s *MemoryStore) Get(_ context.Context, owner, id string) (*Task, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.tasks[id]
	if !ok || t.Owner != owner {
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
			continue
		}
		if retry == nil || compareTasks(t, retry) < 0 {
			retry = t
		}
	}
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
	}
	return t.Clone(), nil
}

// List implements [TaskStore].
func (s *MemoryStore) List(_ context.Context, p ListParams) ([]*Task, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	list := s.owners[p.Owner]
	desc := p.Order != OrderAsc
	// [lo, hi) is the window of candidates in ascending order.
	lo, hi := 0, len(list)
	if p.After != "" {
		a, ok := s.tasks[p.After]
		if !ok || a.Owner != p.Owner {
			return nil, false, errorf(ErrNotFound, "%s", p.After)
		}
		i, _ := slices.BinarySearchFunc(list, a, compareTasks)
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
			out = append(out, list[hi-1-k].Clone())
		} else {
			out = append(out, list[lo+k].Clone())
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
	delete(s.tasks, id)
	delete(s.running, id)
	list := s.owners[owner]
	if i, found := slices.BinarySearchFunc(list, t, compareTasks); found {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		delete(s.owners, owner)
	} else {
		s.owners[owner] = list
	}
	// A queued task stays in the heap until Claim skips it.
	return nil
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
