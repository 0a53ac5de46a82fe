package videos

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// contentExt maps the media types that the file-backed stores keep to the
// file extensions they write, which also tell a static file server (for
// [URLStore]) what Content-Type to send.
var contentExt = map[string]string{
	"video/mp4":       ".mp4",
	"video/webm":      ".webm",
	"video/quicktime": ".mov",
	"image/png":       ".png",
	"image/jpeg":      ".jpg",
	"image/webp":      ".webp",
	"image/gif":       ".gif",
}

func typeOfExt(ext string) string {
	for t, e := range contentExt {
		if e == ext {
			return t
		}
	}
	return ""
}

// fileStore is what FileStore and URLStore share: each variant of a task
// is the file <dir>/<task id>/<variant><ext>.
type fileStore struct{ dir string }

func newFileStore(dir string) (fileStore, error) {
	if dir == "" {
		return fileStore{}, errors.New("videos: empty content directory")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fileStore{}, fmt.Errorf("videos: content directory: %w", err)
	}
	return fileStore{dir: dir}, nil
}

func (s fileStore) put(p PutParams) error {
	if err := checkPut(p); err != nil {
		return err
	}
	ext, ok := contentExt[p.ContentType]
	if !ok {
		return errorf(ErrInvalidParams, "content: the file stores keep %s, not %q", knownTypes(), p.ContentType)
	}
	dir := filepath.Join(s.dir, p.TaskID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("videos: content: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".put-*")
	if err != nil {
		return fmt.Errorf("videos: content: %w", err)
	}
	_, werr := tmp.Write(p.Data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("videos: content: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("videos: content: %w", err)
	}
	name := string(p.Variant) + ext
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("videos: content: %w", err)
	}
	// A replaced variant of another type leaves its old file behind.
	for _, e := range contentExt {
		if e != ext {
			_ = os.Remove(filepath.Join(dir, string(p.Variant)+e))
		}
	}
	return nil
}

// find returns the file name and info of a stored variant.
func (s fileStore) find(taskID string, v Variant) (string, fs.FileInfo, error) {
	if !ValidID(taskID) || !v.Valid() {
		return "", nil, ErrNoContent
	}
	entries, err := os.ReadDir(filepath.Join(s.dir, taskID))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, ErrNoContent
	}
	if err != nil {
		return "", nil, fmt.Errorf("videos: content: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		base, ext := strings.TrimSuffix(name, filepath.Ext(name)), filepath.Ext(name)
		if base != string(v) || typeOfExt(ext) == "" || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return "", nil, fmt.Errorf("videos: content: %w", err)
		}
		return name, info, nil
	}
	return "", nil, ErrNoContent
}

func (s fileStore) delete(taskID string) error {
	if !ValidID(taskID) {
		return nil
	}
	if err := os.RemoveAll(filepath.Join(s.dir, taskID)); err != nil {
		return fmt.Errorf("videos: content: %w", err)
	}
	return nil
}

func knownTypes() string {
	return "video/mp4, video/webm, video/quicktime, image/png, image/jpeg, image/webp and image/gif"
}

// FileStore is a [ContentStore] that keeps each variant as a file under a
// directory, <dir>/<task id>/<variant>.<ext>, and serves the bytes
// (→ 200 with Range support). Writes go to a temporary file renamed into
// place, so a reader never sees half a file. It stores the media types
// video/mp4, video/webm, video/quicktime, image/png, image/jpeg, image/webp
// and image/gif. It is safe for concurrent use, also by several processes
// sharing the directory.
type FileStore struct{ fs fileStore }

var _ ContentStore = (*FileStore)(nil)

// NewFileStore returns a store keeping its files under dir, which it
// creates if needed.
func NewFileStore(dir string) (*FileStore, error) {
	s, err := newFileStore(dir)
	if err != nil {
		return nil, err
	}
	return &FileStore{fs: s}, nil
}

// Put implements [ContentStore].
func (s *FileStore) Put(_ context.Context, p PutParams) error { return s.fs.put(p) }

// Open implements [ContentStore].
func (s *FileStore) Open(_ context.Context, taskID string, v Variant) (*Content, error) {
	name, info, err := s.fs.find(taskID, v)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(s.fs.dir, taskID, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoContent // deleted meanwhile
	}
	if err != nil {
		return nil, fmt.Errorf("videos: content: %w", err)
	}
	return &Content{
		ContentType: typeOfExt(filepath.Ext(name)),
		Size:        info.Size(),
		ModTime:     info.ModTime(),
		Body:        f,
	}, nil
}

// Delete implements [ContentStore].
func (s *FileStore) Delete(_ context.Context, taskID string) error { return s.fs.delete(taskID) }

// URLStore is a [ContentStore] that hands out URLs (→ 301): it writes each
// variant under a directory as [FileStore] does, and Open answers with
// the URL where another server publishes that directory — a static file
// server, a CDN origin, object storage mounted as a file system — at
// baseURL/<task id>/<variant>.<ext>. The gateway never serves the bytes
// itself, unless [WithContentProxy] asks it to stream them.
//
// It is safe for concurrent use. Object storage with signed URLs (S3,
// GCS) is better served by a ContentStore of its own whose Open signs a
// URL; this one is the simplest thing that hands out URLs.
type URLStore struct {
	fs   fileStore
	base *url.URL
}

var _ ContentStore = (*URLStore)(nil)

// NewURLStore returns a store writing under dir (created if needed) whose
// files are published at baseURL, an absolute http or https URL.
func NewURLStore(dir, baseURL string) (*URLStore, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("videos: NewURLStore: base URL %q is not an absolute http(s) URL", baseURL)
	}
	s, err := newFileStore(dir)
	if err != nil {
		return nil, err
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return &URLStore{fs: s, base: u}, nil
}

// Put implements [ContentStore].
func (s *URLStore) Put(_ context.Context, p PutParams) error { return s.fs.put(p) }

// Open implements [ContentStore]: the Content carries the URL, no Body.
func (s *URLStore) Open(_ context.Context, taskID string, v Variant) (*Content, error) {
	name, info, err := s.fs.find(taskID, v)
	if err != nil {
		return nil, err
	}
	return &Content{
		ContentType: typeOfExt(filepath.Ext(name)),
		Size:        info.Size(),
		ModTime:     info.ModTime(),
		URL:         s.base.JoinPath(taskID, name).String(),
	}, nil
}

// Delete implements [ContentStore].
func (s *URLStore) Delete(_ context.Context, taskID string) error { return s.fs.delete(taskID) }
