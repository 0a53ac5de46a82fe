package responses

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Default bounds of a [MemoryStore].
const (
	// DefaultMaxResponses is the number of responses a MemoryStore keeps.
	DefaultMaxResponses = 10000
	// DefaultMaxAge is how long a MemoryStore keeps a response: 30 days,
	// as OpenAI keeps stored responses.
	DefaultMaxAge = 30 * 24 * time.Hour
)

// MemoryStoreOptions are the bounds of a [MemoryStore]. The zero value
// (and a nil *MemoryStoreOptions) means the defaults.
type MemoryStoreOptions struct {
	// MaxResponses is the most responses kept; 0 means
	// DefaultMaxResponses, a negative value no limit.
	MaxResponses int
	// MaxAge is how long a response is kept after its last Put; 0 means
	// DefaultMaxAge, a negative value forever.
	MaxAge time.Duration
	// Now is the store's clock; nil means time.Now.
	Now func() time.Time
}

// MemoryStore is the in-memory [Store]. It is safe for concurrent use.
//
// Eviction policy: responses are kept in the order of their last Put.
// A Put that brings the count above MaxResponses evicts the least
// recently put response; a response older than MaxAge (since its last
// Put) is gone for Get and Delete, and is dropped at the next Put. So the
// store holds at most MaxResponses responses, none older than MaxAge, and
// a conversation continued through previous_response_id loses its oldest
// turns first (see the package documentation).
//
// It keeps the *StoredResponse it is given and returns it from Get, as
// the [Store] contract allows: records are immutable once stored.
type MemoryStore struct {
	maxN   int
	maxAge time.Duration
	now    func() time.Time

	mu    sync.Mutex
	order *list.List // of *memEntry, least recently put first
	byKey map[memKey]*list.Element
}

type memKey struct{ owner, id string }

type memEntry struct {
	key memKey
	r   *StoredResponse
	at  time.Time
}

// NewMemoryStore returns an empty store with the bounds of opts; nil
// means the defaults.
func NewMemoryStore(opts *MemoryStoreOptions) *MemoryStore {
	var o MemoryStoreOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxResponses == 0 {
		o.MaxResponses = DefaultMaxResponses
	}
	if o.MaxAge == 0 {
		o.MaxAge = DefaultMaxAge
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &MemoryStore{maxN: o.MaxResponses, maxAge: o.MaxAge, now: o.Now,
		order: list.New(), byKey: make(map[memKey]*list.Element)}
}

var errEmptyID = errors.New("responses: stored response has no id")

// Put implements [Store].
func (s *MemoryStore) Put(_ context.Context, r *StoredResponse) error {
	if r == nil || r.Response.ID == "" {
		return errEmptyID
	}
	now := s.now()
	k := memKey{r.Owner, r.Response.ID}
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.byKey[k]; ok {
		s.order.Remove(el)
	}
	s.byKey[k] = s.order.PushBack(&memEntry{key: k, r: r, at: now})
	s.pruneLocked(now)
	return nil
}

// pruneLocked drops the responses that are too old, then the least
// recently put ones above the count.
func (s *MemoryStore) pruneLocked(now time.Time) {
	for el := s.order.Front(); el != nil; el = s.order.Front() {
		e := el.Value.(*memEntry)
		if !s.expired(e, now) && (s.maxN < 0 || s.order.Len() <= s.maxN) {
			return
		}
		s.order.Remove(el)
		delete(s.byKey, e.key)
	}
}

func (s *MemoryStore) expired(e *memEntry, now time.Time) bool {
	return s.maxAge >= 0 && now.Sub(e.at) >= s.maxAge
}

// Get implements [Store].
func (s *MemoryStore) Get(_ context.Context, owner, id string) (*StoredResponse, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.byKey[memKey{owner, id}]
	if !ok || s.expired(el.Value.(*memEntry), now) {
		return nil, notFound(id)
	}
	return el.Value.(*memEntry).r, nil
}

// Delete implements [Store].
func (s *MemoryStore) Delete(_ context.Context, owner, id string) error {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	k := memKey{owner, id}
	el, ok := s.byKey[k]
	if !ok {
		return notFound(id)
	}
	s.order.Remove(el)
	delete(s.byKey, k)
	if s.expired(el.Value.(*memEntry), now) {
		return notFound(id)
	}
	return nil
}

// Len returns the number of responses held, expired ones not yet dropped
// included.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.order.Len()
}

func notFound(id string) error {
	return fmt.Errorf("%w: %q", ErrNotFound, id)
}
