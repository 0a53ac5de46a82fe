package responses

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gatewaykit/gatewaykit/internal/lru"
)

// Default bounds of a [MemoryStore].
const (
	// DefaultMaxResponses is the number of responses a MemoryStore keeps.
	DefaultMaxResponses = 10000
	// DefaultMaxAge is how long a MemoryStore keeps a response: 30 days,
	// as OpenAI keeps stored responses.
	DefaultMaxAge = 30 * 24 * time.Hour
	// DefaultMaxBytes bounds the estimated size of the responses a
	// MemoryStore keeps: 256 MiB. Inputs may hold images as data URIs, so
	// a count alone does not bound memory.
	DefaultMaxBytes int64 = 256 << 20
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
	// MaxBytes bounds the estimated size of the responses kept (their
	// texts, arguments, image URLs and unmodelled fields, in bytes); 0
	// means DefaultMaxBytes, a negative value no limit.
	MaxBytes int64
	// Now is the store's clock; nil means time.Now.
	Now func() time.Time
}

// MemoryStore is the in-memory [Store]. It is safe for concurrent use.
//
// Eviction policy: responses are kept in the order of their last Put.
// A Put that brings the count above MaxResponses, or the estimated size
// above MaxBytes, evicts the least recently put responses until both
// bounds hold; a response older than MaxAge (since its last Put) is gone
// for Get and Delete, and is dropped at the next Put. So the store holds
// at most MaxResponses responses and about MaxBytes bytes, none older
// than MaxAge, and a conversation continued through previous_response_id
// loses its oldest turns first (see the package documentation). A single
// response larger than MaxBytes is not kept: Put returns an error.
//
// It keeps the *StoredResponse it is given and returns it from Get, as
// the [Store] contract allows: records are immutable once stored.
type MemoryStore struct {
	maxAge   time.Duration
	maxBytes int64
	now      func() time.Time

	mu      sync.Mutex
	entries *lru.List[memEntry] // least recently put first
}

type memEntry struct {
	r  *StoredResponse
	at time.Time
}

// NewMemoryStore returns an empty store with the bounds of opts; nil
// means the defaults.
func NewMemoryStore(opts *MemoryStoreOptions) *MemoryStore {
	var o MemoryStoreOptions
	if opts != nil {
		o = *opts
	}
	o.MaxResponses = cmp.Or(o.MaxResponses, DefaultMaxResponses)
	o.MaxAge = cmp.Or(o.MaxAge, DefaultMaxAge)
	o.MaxBytes = cmp.Or(o.MaxBytes, DefaultMaxBytes)
	if o.Now == nil {
		o.Now = time.Now
	}
	return &MemoryStore{maxAge: o.MaxAge, maxBytes: o.MaxBytes, now: o.Now,
		entries: lru.New[memEntry](o.MaxResponses, o.MaxBytes)}
}

var errEmptyID = errors.New("responses: stored response has no id")

// Put implements [Store].
func (s *MemoryStore) Put(_ context.Context, r *StoredResponse) error {
	if r == nil || r.Response.ID == "" {
		return errEmptyID
	}
	size := storedSize(r)
	if s.maxBytes >= 0 && size > s.maxBytes {
		return fmt.Errorf("responses: response %q of about %d bytes is larger than the store's MaxBytes (%d)", r.Response.ID, size, s.maxBytes)
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries.Push(lru.Key{Owner: r.Owner, ID: r.Response.ID}, memEntry{r: r, at: now}, size)
	// Drop the responses that are too old, then the least recently put
	// ones above the count or the size.
	s.entries.Prune(nil, func(e *lru.Entry[memEntry]) bool { return s.expired(e.Value, now) })
	return nil
}

func (s *MemoryStore) expired(e memEntry, now time.Time) bool {
	return s.maxAge >= 0 && now.Sub(e.at) >= s.maxAge
}

// Get implements [Store].
func (s *MemoryStore) Get(_ context.Context, owner, id string) (*StoredResponse, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries.Get(lru.Key{Owner: owner, ID: id})
	if !ok || s.expired(e.Value, now) {
		return nil, notFound(id)
	}
	return e.Value.r, nil
}

// Delete implements [Store].
func (s *MemoryStore) Delete(_ context.Context, owner, id string) error {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries.Get(lru.Key{Owner: owner, ID: id})
	if !ok {
		return notFound(id)
	}
	s.entries.Remove(e)
	if s.expired(e.Value, now) {
		return notFound(id)
	}
	return nil
}

// Len returns the number of responses held, expired ones not yet dropped
// included.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.entries.Len()
}

func notFound(id string) error {
	return fmt.Errorf("%w: %q", ErrNotFound, id)
}

// storedSize estimates the memory a stored response holds: the bytes of
// its strings and raw JSON, plus a fixed overhead per item.
func storedSize(r *StoredResponse) int64 {
	const overhead = 64
	n := int64(overhead + len(r.Response.ID) + len(r.Response.Model))
	for i := range r.Input {
		n += itemSize(&r.Input[i])
	}
	resp := &r.Response
	for i := range resp.Output {
		o := &resp.Output[i]
		n += overhead + int64(len(o.ID)+len(o.CallID)+len(o.Name)+len(o.Arguments)+len(o.EncryptedContent))
		for _, c := range o.Content {
			n += int64(len(c.Text))
		}
		for _, p := range o.Summary {
			n += int64(len(p.Text))
		}
	}
	for i := range resp.Tools {
		t := &resp.Tools[i]
		n += overhead + int64(len(t.Name)+len(t.Description)+len(t.Parameters)) + rawSize(t.Extra)
	}
	if resp.Instructions != nil {
		n += int64(len(*resp.Instructions))
	}
	for k, v := range resp.Metadata {
		n += int64(len(k) + len(v))
	}
	return n
}

func itemSize(it *Item) int64 {
	n := int64(64+len(it.ID)+len(it.CallID)+len(it.Name)+len(it.Arguments)+len(it.EncryptedContent)) + rawSize(it.Extra)
	n += contentSize(&it.Content)
	if it.Output != nil {
		n += contentSize(it.Output)
	}
	return n
}

func contentSize(c *Content) int64 {
	n := int64(len(c.raw))
	if c.Text != nil {
		n += int64(len(*c.Text))
	}
	for i := range c.Parts {
		p := &c.Parts[i]
		n += int64(32+len(p.Text)+len(p.ImageURL)+len(p.FileID)+len(p.Refusal)) + rawSize(p.Extra)
	}
	return n
}

func rawSize(m map[string]json.RawMessage) int64 {
	var n int64
	for k, v := range m {
		n += int64(len(k) + len(v))
	}
	return n
}
