package videos

import (
	"bytes"
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// Variant is a downloadable asset of a completed task: the query
// parameter variant of the content endpoint.
type Variant string

// The variants of the content endpoint (spec §4.7).
const (
	VariantVideo     Variant = "video"
	VariantThumbnail Variant = "thumbnail"
)

// Valid reports whether v is video or thumbnail.
func (v Variant) Valid() bool { return v == VariantVideo || v == VariantThumbnail }

// ErrNoContent is returned, possibly wrapped, by [ContentStore.Open] for
// content that is not stored.
var ErrNoContent = errors.New("videos: content not found")

// A ContentStore holds the videos and thumbnails of completed tasks, by
// task id and [Variant]. Implementations must be safe for concurrent use.
// The conformance suite videostest.TestContentStore checks this contract.
//
// Put stores (or replaces) one variant. Open returns it, or an error
// wrapping [ErrNoContent]; the [Content] either carries the bytes (the
// content endpoint serves them with http.ServeContent: 200, Range, HEAD)
// or a URL (the endpoint answers 301 with Location, or streams it, see
// [WithContentProxy]). Delete removes every variant of a task, and is not
// an error for a task with none. Task ids that [ValidID] refuses are never
// stored: Put fails and Open returns ErrNoContent.
//
// Three implementations ship: [MemoryContentStore] and [FileStore] serve
// bytes, and [URLStore] hands out URLs.
type ContentStore interface {
	Put(ctx context.Context, p PutParams) error
	Open(ctx context.Context, taskID string, v Variant) (*Content, error)
	Delete(ctx context.Context, taskID string) error
}

// PutParams are the parameters of [ContentStore.Put].
type PutParams struct {
	TaskID      string
	Variant     Variant
	ContentType string
	Data        []byte
}

// Content is a stored variant, as [ContentStore.Open] returns it. Exactly
// one of Body and URL is set. The caller closes Body.
type Content struct {
	// ContentType is the media type.
	ContentType string
	// Size is the length in bytes, if known.
	Size int64
	// ModTime is when it was stored, if known; sent as Last-Modified.
	ModTime time.Time
	// Body reads the bytes.
	Body io.ReadSeekCloser
	// URL is where the bytes are served, for a redirect.
	URL string
}

func checkPut(p PutParams) error {
	switch {
	case !ValidID(p.TaskID):
		return errorf(ErrInvalidParams, "content: bad task id %s", apierrors.Quote(p.TaskID))
	case !p.Variant.Valid():
		return errorf(ErrInvalidParams, "content: bad variant %q", p.Variant)
	case p.ContentType == "":
		return errorf(ErrInvalidParams, "content: no content type")
	}
	return nil
}

// MemoryContentStoreOptions are the bounds of a [MemoryContentStore].
// The zero value (and a nil *MemoryContentStoreOptions) means the
// defaults.
type MemoryContentStoreOptions struct {
	// MaxTasks is the number of tasks whose content is kept; 0 means
	// DefaultMaxTasks, a negative value no limit.
	MaxTasks int
	// MaxAge is how long a task's content is kept after its last Put; 0
	// means DefaultMaxAge, a negative value forever.
	MaxAge time.Duration
	// MaxBytes bounds the bytes of the content kept; 0 means
	// DefaultMaxBytes, a negative value no limit.
	MaxBytes int64
	// Now is the store's clock (ages, and the ModTime of content); nil
	// means time.Now.
	Now func() time.Time
}

// MemoryContentStore is the in-memory [ContentStore]: Open serves the bytes
// (→ 200). It is safe for concurrent use.
//
// Eviction policy: the content of a task (its video and thumbnail
// together) is kept in the order of its last Put. A Put that brings the
// number of tasks above MaxTasks, or the bytes above MaxBytes, evicts the
// content of the least recently put tasks until both bounds hold; content
// older than MaxAge is gone for Open and dropped at the next Put. A single
// task's content larger than MaxBytes is not kept: Put returns an error.
// Content is put only when a task completes, so eviction never touches a
// task that is queued or running; the status of a task whose content was
// evicted still says completed, and its download answers 404.
type MemoryContentStore struct {
	maxN     int
	maxAge   time.Duration
	maxBytes int64
	now      func() time.Time

	mu    sync.RWMutex
	items map[string]*list.Element // of *memTask, by task id
	order *list.List               // of *memTask, least recently put first
	bytes int64
}

type memTask struct {
	id       string
	variants map[Variant]memContent
	at       time.Time // of the last Put
	size     int64
}

type memContent struct {
	contentType string
	data        []byte
	modTime     time.Time
}

var _ ContentStore = (*MemoryContentStore)(nil)

// NewMemoryContentStore returns an empty store with the bounds of opts;
// nil means the defaults ([DefaultMaxTasks], [DefaultMaxAge],
// [DefaultMaxBytes]).
func NewMemoryContentStore(opts *MemoryContentStoreOptions) *MemoryContentStore {
	var o MemoryContentStoreOptions
	if opts != nil {
		o = *opts
	}
	// The two stores' bounds have the same fields and defaults.
	o = MemoryContentStoreOptions(MemoryStoreOptions(o).withDefaults())
	return &MemoryContentStore{maxN: o.MaxTasks, maxAge: o.MaxAge, maxBytes: o.MaxBytes, now: o.Now,
		items: make(map[string]*list.Element), order: list.New()}
}

// Put implements [ContentStore]. It keeps p.Data without copying it: the
// caller must not change it afterwards.
func (s *MemoryContentStore) Put(_ context.Context, p PutParams) error {
	if err := checkPut(p); err != nil {
		return err
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var e *memTask
	if el, ok := s.items[p.TaskID]; ok {
		e = el.Value.(*memTask)
		if s.expired(e, now) {
			s.removeLocked(el)
			e = nil
		}
	}
	size := int64(len(p.Data))
	if e != nil {
		size += e.size - int64(len(e.variants[p.Variant].data))
	}
	if s.maxBytes >= 0 && size > s.maxBytes {
		return fmt.Errorf("videos: content of task %s (%d bytes) is larger than the store's MaxBytes (%d)", p.TaskID, size, s.maxBytes)
	}
	if e == nil {
		e = &memTask{id: p.TaskID, variants: make(map[Variant]memContent, 2)}
		s.items[p.TaskID] = s.order.PushBack(e)
	} else {
		s.order.MoveToBack(s.items[p.TaskID])
	}
	s.bytes += size - e.size
	e.size, e.at = size, now
	e.variants[p.Variant] = memContent{contentType: p.ContentType, data: p.Data, modTime: now.UTC().Truncate(time.Second)}
	s.pruneLocked(now)
	return nil
}

func (s *MemoryContentStore) expired(e *memTask, now time.Time) bool {
	return s.maxAge >= 0 && now.Sub(e.at) >= s.maxAge
}

func (s *MemoryContentStore) removeLocked(el *list.Element) {
	e := el.Value.(*memTask)
	s.order.Remove(el)
	delete(s.items, e.id)
	s.bytes -= e.size
}

// pruneLocked drops the least recently put tasks' content while it is
// too old, or while there are too many tasks or bytes.
func (s *MemoryContentStore) pruneLocked(now time.Time) {
	for el := s.order.Front(); el != nil; el = s.order.Front() {
		if !s.expired(el.Value.(*memTask), now) && (s.maxN < 0 || s.order.Len() <= s.maxN) && (s.maxBytes < 0 || s.bytes <= s.maxBytes) {
			return
		}
		s.removeLocked(el)
	}
}

// Open implements [ContentStore].
func (s *MemoryContentStore) Open(_ context.Context, taskID string, v Variant) (*Content, error) {
	now := s.now()
	s.mu.RLock()
	var (
		c  memContent
		ok bool
	)
	if el, found := s.items[taskID]; found && !s.expired(el.Value.(*memTask), now) {
		c, ok = el.Value.(*memTask).variants[v]
	}
	s.mu.RUnlock()
	if !ok {
		return nil, ErrNoContent
	}
	return &Content{
		ContentType: c.contentType,
		Size:        int64(len(c.data)),
		ModTime:     c.modTime,
		Body:        nopCloser{bytes.NewReader(c.data)},
	}, nil
}

// Delete implements [ContentStore].
func (s *MemoryContentStore) Delete(_ context.Context, taskID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.items[taskID]; ok {
		s.removeLocked(el)
	}
	return nil
}

type nopCloser struct{ io.ReadSeeker }

func (nopCloser) Close() error { return nil }
