package responses

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// MemoryRunStore is the in-memory [RunStore], for one process: its runs
// live as long as the process (a restart loses them) or until
// [RunStore.PruneRuns] removes the ended ones (a [Background] prunes
// those older than its retention). Each run's event log holds at most
// [MaxRunEvents] events. It is safe for concurrent use.
type MemoryRunStore struct {
	mu   sync.Mutex
	runs map[string]*memRun
}

type memRun struct {
	r      *Run
	events []Event // the newest MaxRunEvents
}

var _ RunStore = (*MemoryRunStore)(nil)

// NewMemoryRunStore returns an empty store.
func NewMemoryRunStore() *MemoryRunStore {
	return &MemoryRunStore{runs: map[string]*memRun{}}
}

// CreateRun implements [RunStore].
func (s *MemoryRunStore) CreateRun(_ context.Context, r *Run) error {
	if err := CheckNewRun(r); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.runs[r.ID]; ok {
		return fmt.Errorf("%w: %q", ErrRunExists, r.ID)
	}
	s.runs[r.ID] = &memRun{r: r.Clone()}
	return nil
}

// GetRun implements [RunStore].
func (s *MemoryRunStore) GetRun(_ context.Context, owner, id string) (*Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.runs[id]
	if !ok || m.r.Owner != owner {
		return nil, fmt.Errorf("%w: run %q", ErrNotFound, id)
	}
	return m.r.Clone(), nil
}

// ClaimRun implements [RunStore].
func (s *MemoryRunStore) ClaimRun(_ context.Context, p RunClaim) (*Run, []*Run, error) {
	if p.Worker == "" {
		return nil, nil, fmt.Errorf("responses: ClaimRun needs a worker name")
	}
	p.Now = nowOr(p.Now)
	s.mu.Lock()
	defer s.mu.Unlock()
	all := make([]*Run, 0, len(s.runs))
	for _, m := range s.runs {
		if !m.r.Done {
			all = append(all, m.r)
		}
	}
	slices.SortFunc(all, func(a, b *Run) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	var reaped []*Run
	for _, r := range all {
		if !RunExpired(r, p.Now) {
			continue
		}
		if ApplyRunExpiry(r, p) {
			ApplyRunClaim(r, p)
			return r.Clone(), reaped, nil
		}
		reaped = append(reaped, r.Clone())
	}
	for _, r := range all {
		if r.Status() == StatusQueued {
			ApplyRunClaim(r, p)
			return r.Clone(), reaped, nil
		}
	}
	return nil, reaped, ErrNoRun
}

// UpdateRun implements [RunStore].
func (s *MemoryRunStore) UpdateRun(_ context.Context, p RunUpdate) (*Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.runs[p.ID]
	if !ok {
		return nil, fmt.Errorf("%w: run %q", ErrNotFound, p.ID)
	}
	r := m.r.Clone()
	err := ApplyRunUpdate(r, p)
	if err != nil && err != ErrRunCancelled {
		return nil, err
	}
	m.r = r
	return r.Clone(), err
}

// CancelRun implements [RunStore].
func (s *MemoryRunStore) CancelRun(_ context.Context, owner, id string, now time.Time) (*Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.runs[id]
	if !ok || m.r.Owner != owner {
		return nil, fmt.Errorf("%w: run %q", ErrNotFound, id)
	}
	r := m.r.Clone()
	if err := ApplyRunCancel(r, now); err != nil {
		return r, err
	}
	m.r = r
	return r.Clone(), nil
}

// AppendEvents implements [RunStore].
func (s *MemoryRunStore) AppendEvents(_ context.Context, id string, attempt int, events []Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.runs[id]
	switch {
	case !ok:
		return fmt.Errorf("%w: run %q", ErrNotFound, id)
	case m.r.Done:
		return ErrRunEnded
	case m.r.Attempts != attempt:
		return ErrLeaseLost
	}
	if err := CheckEvents(m.r.Events, events); err != nil {
		return err
	}
	for _, e := range events {
		e.Data = slices.Clone(e.Data)
		m.events = append(m.events, e)
	}
	if n := len(m.events) - MaxRunEvents; n > 0 {
		m.events = slices.Delete(m.events, 0, n)
	}
	r := m.r.Clone()
	r.Events += len(events)
	m.r = r
	return nil
}

// Events implements [RunStore].
func (s *MemoryRunStore) Events(_ context.Context, id string, after, limit int) ([]Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.runs[id]
	if !ok {
		return nil, fmt.Errorf("%w: run %q", ErrNotFound, id)
	}
	if len(m.events) > 0 && m.events[0].Seq > after+1 {
		return nil, fmt.Errorf("%w: the oldest kept is %d", ErrEventsDropped, m.events[0].Seq)
	}
	i, _ := slices.BinarySearchFunc(m.events, after+1, func(e Event, seq int) int { return cmp.Compare(e.Seq, seq) })
	out := m.events[i:]
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return slices.Clone(out), nil
}

// DeleteRun implements [RunStore].
func (s *MemoryRunStore) DeleteRun(_ context.Context, owner, id string) (*Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.runs[id]
	if !ok || m.r.Owner != owner {
		return nil, fmt.Errorf("%w: run %q", ErrNotFound, id)
	}
	delete(s.runs, id)
	return m.r.Clone(), nil
}

// PruneRuns implements [RunStore].
func (s *MemoryRunStore) PruneRuns(_ context.Context, before time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, m := range s.runs {
		if m.r.Done && m.r.EndedAt.Before(before) {
			delete(s.runs, id)
			n++
		}
	}
	return n, nil
}
