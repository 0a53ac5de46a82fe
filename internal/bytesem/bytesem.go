// Package bytesem is a semaphore on bytes that never waits: the bound of
// the request bodies in flight of package gateway (gateway.LimitBodies)
// and of the upstream replies that package relay buffers.
package bytesem

import "sync"

// A Sem bounds a count of bytes held at once. A nil *Sem bounds nothing:
// every TryAcquire succeeds. A Sem is safe for concurrent use.
type Sem struct {
	mu   sync.Mutex
	used int64
	max  int64
}

// New returns a Sem of max bytes, or nil (no bound) if max ≤ 0.
func New(max int64) *Sem {
	if max <= 0 {
		return nil
	}
	return &Sem{max: max}
}

// Max returns the bound, or -1 for a nil Sem.
func (s *Sem) Max() int64 {
	if s == nil {
		return -1
	}
	return s.max
}

// TryAcquire takes n bytes if they fit, and reports whether they did.
func (s *Sem) TryAcquire(n int64) bool {
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used+n > s.max {
		return false
	}
	s.used += n
	return true
}

// Release gives back n bytes taken with TryAcquire.
func (s *Sem) Release(n int64) {
	if s == nil || n == 0 {
		return
	}
	s.mu.Lock()
	s.used -= n
	s.mu.Unlock()
}

// Used returns the bytes held, for tests.
func (s *Sem) Used() int64 {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}
