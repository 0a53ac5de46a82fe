package videos

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"time"
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
		return errorf(ErrInvalidParams, "content: bad task id %q", truncate(p.TaskID, 64))
	case !p.Variant.Valid():
		return errorf(ErrInvalidParams, "content: bad variant %q", p.Variant)
	case p.ContentType == "":
		return errorf(ErrInvalidParams, "content: no content type")
	}
	return nil
}

// MemoryContentStore is the in-memory [ContentStore]: Open serves the bytes
// (→ 200). It is safe for concurrent use and keeps everything until
// deleted.
type MemoryContentStore struct {
	mu    sync.RWMutex
	items map[string]map[Variant]memContent
	now   func() time.Time
}

type memContent struct {
	contentType string
	data        []byte
	modTime     time.Time
}

var _ ContentStore = (*MemoryContentStore)(nil)

// NewMemoryContentStore returns an empty store.
func NewMemoryContentStore() *MemoryContentStore {
	return &MemoryContentStore{items: make(map[string]map[Variant]memContent), now: time.Now}
}

// Put implements [ContentStore]. It keeps p.Data without copying it: the
// caller must not change it afterwards.
func (s *MemoryContentStore) Put(_ context.Context, p PutParams) error {
	if err := checkPut(p); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.items[p.TaskID]
	if m == nil {
		m = make(map[Variant]memContent, 2)
		s.items[p.TaskID] = m
	}
	m[p.Variant] = memContent{contentType: p.ContentType, data: p.Data, modTime: s.now().UTC().Truncate(time.Second)}
	return nil
}

// Open implements [ContentStore].
func (s *MemoryContentStore) Open(_ context.Context, taskID string, v Variant) (*Content, error) {
	s.mu.RLock()
	c, ok := s.items[taskID][v]
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
	delete(s.items, taskID)
	return nil
}

type nopCloser struct{ io.ReadSeeker }

func (nopCloser) Close() error { return nil }
