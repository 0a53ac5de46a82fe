package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/gatewaykit/gatewaykit/store/internal/sqlstore"
	"github.com/gatewaykit/gatewaykit/videos"
)

// ContentStore is the [videos.ContentStore] of a [DB]: it keeps videos
// and thumbnails in the database, and Open serves their bytes (the
// content endpoint answers 200, with Range and HEAD). Open reads a whole
// variant into memory, which suits the videos of a demo or of one
// gateway; keep large media in an object store ([videos.URLStore]). It
// evicts nothing: content stays until its task's content is deleted. It
// is safe for concurrent use.
type ContentStore struct{ db *DB }

var _ videos.ContentStore = (*ContentStore)(nil)

// Put implements [videos.ContentStore].
func (s *ContentStore) Put(ctx context.Context, p videos.PutParams) error {
	if err := sqlstore.CheckPut(p); err != nil {
		return err
	}
	data := p.Data
	if data == nil {
		data = []byte{}
	}
	return s.db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO contents (task_id, variant, content_type, mod_time, data) VALUES (?, ?, ?, ?, ?)
	ON CONFLICT (task_id, variant) DO UPDATE SET content_type = excluded.content_type, mod_time = excluded.mod_time, data = excluded.data`,
			p.TaskID, string(p.Variant), p.ContentType, time.Now().Unix(), data)
		if err != nil {
			return fmt.Errorf("sqlite: ContentStore.Put %s: %w", p.TaskID, err)
		}
		return nil
	})
}

// Open implements [videos.ContentStore].
func (s *ContentStore) Open(ctx context.Context, taskID string, v videos.Variant) (*videos.Content, error) {
	if !videos.ValidID(taskID) || !v.Valid() {
		return nil, videos.ErrNoContent
	}
	var (
		ct   string
		mod  int64
		data []byte
	)
	err := s.db.reader.QueryRowContext(ctx, `SELECT content_type, mod_time, data FROM contents WHERE task_id = ? AND variant = ?`,
		taskID, string(v)).Scan(&ct, &mod, &data)
	switch {
	case errNoRows(err):
		return nil, videos.ErrNoContent
	case err != nil:
		return nil, fmt.Errorf("sqlite: ContentStore.Open %s: %w", taskID, err)
	}
	return &videos.Content{
		ContentType: ct,
		Size:        int64(len(data)),
		ModTime:     time.Unix(mod, 0).UTC(),
		Body:        readSeekNopCloser{bytes.NewReader(data)},
	}, nil
}

// Delete implements [videos.ContentStore].
func (s *ContentStore) Delete(ctx context.Context, taskID string) error {
	return s.db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM contents WHERE task_id = ?`, taskID); err != nil {
			return fmt.Errorf("sqlite: ContentStore.Delete %s: %w", taskID, err)
		}
		return nil
	})
}

type readSeekNopCloser struct{ *bytes.Reader }

func (readSeekNopCloser) Close() error { return nil }
