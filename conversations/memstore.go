package conversations

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/lru"
	"github.com/gatewaykit/gatewaykit/responses"
)

// Default bounds of a [MemoryStore].
const (
	// DefaultMaxConversations is the number of conversations a
	// MemoryStore keeps.
	DefaultMaxConversations = 10000
	// DefaultMaxBytes bounds the estimated size of the conversations a
	// MemoryStore keeps, their items included: 256 MiB.
	DefaultMaxBytes int64 = 256 << 20
)

// MemoryStoreOptions are the bounds of a [MemoryStore]. The zero value
// (and a nil *MemoryStoreOptions) means the defaults.
type MemoryStoreOptions struct {
	// MaxConversations is the most conversations kept; 0 means
	// DefaultMaxConversations, a negative value no limit.
	MaxConversations int
	// MaxBytes bounds the estimated size of the conversations kept (the
	// JSON of their items and metadata, in bytes); 0 means
	// DefaultMaxBytes, a negative value no limit.
	MaxBytes int64
}

// MemoryStore is the in-memory [Store]. It is safe for concurrent use.
//
// Eviction policy: conversations are kept in the order of their last
// change (created, items added or deleted, metadata updated). A change
// that brings the count above MaxConversations, or the estimated size
// above MaxBytes, evicts the least recently changed other conversations
// until both bounds hold. A conversation that would be larger than
// MaxBytes alone is refused: Create or AppendItems returns an error (a
// 400 invalid_request_error, which the handler sends) and changes
// nothing. Conversations do not expire: as in OpenAI's API, they
// are kept until deleted (or evicted).
type MemoryStore struct {
	maxBytes int64

	mu    sync.Mutex
	convs *lru.List[*memConv] // least recently changed first; an entry's Size is the whole conversation's
}

// memConv is a conversation held: its items, their ids and sizes.
type memConv struct {
	conv  *Conversation // replaced, never modified, by Update
	items []responses.Item
	sizes []int64 // of items
	held  map[string]bool
}

// NewMemoryStore returns an empty store with the bounds of opts; nil
// means the defaults.
func NewMemoryStore(opts *MemoryStoreOptions) *MemoryStore {
	var o MemoryStoreOptions
	if opts != nil {
		o = *opts
	}
	o.MaxConversations = cmp.Or(o.MaxConversations, DefaultMaxConversations)
	o.MaxBytes = cmp.Or(o.MaxBytes, DefaultMaxBytes)
	return &MemoryStore{maxBytes: o.MaxBytes, convs: lru.New[*memConv](o.MaxConversations, o.MaxBytes)}
}

var _ Store = (*MemoryStore)(nil)

// convOverhead is the estimated size of a conversation without its
// items and metadata; itemOverhead that of an item beside its JSON.
const (
	convOverhead = 128
	itemOverhead = 64
)

// itemSizes returns the estimated sizes of items (their JSON), or the
// error of one that cannot be encoded.
func itemSizes(items []responses.Item) ([]int64, int64, error) {
	sizes := make([]int64, len(items))
	var total int64
	for i := range items {
		b, err := json.Marshal(&items[i])
		if err != nil {
			return nil, 0, fmt.Errorf("conversations: item %d: %w", i, err)
		}
		sizes[i] = int64(len(b)) + itemOverhead
		total += sizes[i]
	}
	return sizes, total, nil
}

func metadataSize(m map[string]string) int64 {
	var n int64
	for k, v := range m {
		n += int64(len(k) + len(v))
	}
	return n
}

// duplicate returns the first id that items share with held or among
// themselves, or "".
func duplicate(held map[string]bool, items []responses.Item) string {
	seen := make(map[string]bool, len(items))
	for i := range items {
		id := items[i].ID
		if held[id] || seen[id] {
			return id
		}
		seen[id] = true
	}
	return ""
}

// tooLarge is the error of a conversation that would exceed MaxBytes
// alone: a 400 that the handlers send as it is (a store that is up and
// refuses, rather than one that cannot be reached).
func (s *MemoryStore) tooLarge(id string, size int64) error {
	return apierrors.InvalidRequestf("items", "Conversation %s would hold about %d bytes with these items, more than this gateway keeps (%d bytes in all).",
		apierrors.Quote(id), size, s.maxBytes).WithCause(fmt.Errorf("conversations: conversation %q of about %d bytes would be larger than the MemoryStore's MaxBytes (%d)", id, size, s.maxBytes))
}

// Create implements [Store].
func (s *MemoryStore) Create(_ context.Context, owner string, c *Conversation, items []responses.Item) error {
	if c == nil || c.ID == "" {
		return errors.New("conversations: MemoryStore.Create: the conversation has no id")
	}
	if id := duplicate(nil, items); id != "" {
		return &responses.DuplicateItemError{ID: id}
	}
	sizes, total, err := itemSizes(items)
	if err != nil {
		return err
	}
	mc := &memConv{conv: c, items: slices.Clone(items), sizes: sizes, held: make(map[string]bool, len(items))}
	size := convOverhead + metadataSize(c.Metadata) + total
	for i := range items {
		mc.held[items[i].ID] = true
	}
	if s.maxBytes >= 0 && size > s.maxBytes {
		return s.tooLarge(c.ID, size)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := lru.Key{Owner: owner, ID: c.ID}
	if _, ok := s.convs.Get(k); ok {
		return fmt.Errorf("conversations: MemoryStore.Create: conversation %q exists already", c.ID)
	}
	e := s.convs.Push(k, mc, size)
	s.convs.Prune(e, nil)
	return nil
}

// lookupLocked returns owner's conversation id, and its entry, or
// ErrNotFound.
func (s *MemoryStore) lookupLocked(owner, id string) (*lru.Entry[*memConv], *memConv, error) {
	e, ok := s.convs.Get(lru.Key{Owner: owner, ID: id})
	if !ok {
		return nil, nil, notFound(id)
	}
	return e, e.Value, nil
}

// changedLocked records that the conversation of e changed by delta
// bytes: it is now the most recently changed, and the others are
// evicted as the bounds require.
func (s *MemoryStore) changedLocked(e *lru.Entry[*memConv], delta int64) {
	s.convs.Grow(e, delta)
	s.convs.Prune(e, nil)
}

// Get implements [Store].
func (s *MemoryStore) Get(_ context.Context, owner, id string) (*Conversation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, mc, err := s.lookupLocked(owner, id)
	if err != nil {
		return nil, err
	}
	return mc.conv, nil
}

// Update implements [Store].
func (s *MemoryStore) Update(_ context.Context, owner, id string, metadata map[string]string) (*Conversation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, mc, err := s.lookupLocked(owner, id)
	if err != nil {
		return nil, err
	}
	c := *mc.conv
	c.Metadata = metadata
	delta := metadataSize(metadata) - metadataSize(mc.conv.Metadata)
	mc.conv = &c
	s.changedLocked(el, delta)
	return mc.conv, nil
}

// Delete implements [Store].
func (s *MemoryStore) Delete(_ context.Context, owner, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, _, err := s.lookupLocked(owner, id)
	if err != nil {
		return err
	}
	s.convs.Remove(el)
	return nil
}

// AppendItems implements [Store].
func (s *MemoryStore) AppendItems(_ context.Context, owner, id string, items []responses.Item) error {
	sizes, total, err := itemSizes(items)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	el, mc, err := s.lookupLocked(owner, id)
	if err != nil {
		return err
	}
	if dup := duplicate(mc.held, items); dup != "" {
		return &responses.DuplicateItemError{ID: dup}
	}
	if s.maxBytes >= 0 && el.Size+total > s.maxBytes {
		return s.tooLarge(id, el.Size+total)
	}
	mc.items = append(mc.items, items...)
	mc.sizes = append(mc.sizes, sizes...)
	for i := range items {
		mc.held[items[i].ID] = true
	}
	s.changedLocked(el, total)
	return nil
}

// ConversationItems implements [Store] (responses.ConversationStore).
func (s *MemoryStore) ConversationItems(_ context.Context, owner, id string, limit int) ([]responses.Item, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, mc, err := s.lookupLocked(owner, id)
	if err != nil {
		return nil, err
	}
	items := mc.items
	if limit >= 0 && len(items) > limit {
		items = items[len(items)-limit:]
	}
	return slices.Clone(items), nil
}

// ListItems implements [Store].
func (s *MemoryStore) ListItems(_ context.Context, owner, id string, q ItemQuery) ([]responses.Item, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, mc, err := s.lookupLocked(owner, id)
	if err != nil {
		return nil, false, err
	}
	// The positions of the page in mc.items, walked in q.Order.
	n := len(mc.items)
	at, step := 0, 1
	if q.Order == OrderDesc {
		at, step = n-1, -1
	}
	if q.After != "" {
		i := mc.index(q.After)
		if i < 0 {
			return nil, false, itemNotFound(q.After)
		}
		at = i + step
	}
	limit := max(q.Limit, 1)
	page := make([]responses.Item, 0, min(limit, n))
	for ; at >= 0 && at < n && len(page) < limit; at += step {
		page = append(page, mc.items[at])
	}
	return page, at >= 0 && at < n, nil
}

// index returns the position of the item itemID, or -1.
func (mc *memConv) index(itemID string) int {
	if !mc.held[itemID] {
		return -1
	}
	return slices.IndexFunc(mc.items, func(it responses.Item) bool { return it.ID == itemID })
}

// GetItem implements [Store].
func (s *MemoryStore) GetItem(_ context.Context, owner, id, itemID string) (*responses.Item, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, mc, err := s.lookupLocked(owner, id)
	if err != nil {
		return nil, err
	}
	i := mc.index(itemID)
	if i < 0 {
		return nil, itemNotFound(itemID)
	}
	it := mc.items[i]
	return &it, nil
}

// DeleteItem implements [Store].
func (s *MemoryStore) DeleteItem(_ context.Context, owner, id, itemID string) (*Conversation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, mc, err := s.lookupLocked(owner, id)
	if err != nil {
		return nil, err
	}
	i := mc.index(itemID)
	if i < 0 {
		return nil, itemNotFound(itemID)
	}
	size := mc.sizes[i]
	mc.items = slices.Delete(mc.items, i, i+1)
	mc.sizes = slices.Delete(mc.sizes, i, i+1)
	delete(mc.held, itemID)
	s.changedLocked(el, -size)
	return mc.conv, nil
}

// Len returns the number of conversations held.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.convs.Len()
}

func notFound(id string) error {
	return fmt.Errorf("%w: %q", ErrNotFound, id)
}

func itemNotFound(id string) error {
	return fmt.Errorf("%w: %q", ErrItemNotFound, id)
}
