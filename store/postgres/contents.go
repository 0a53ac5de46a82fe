package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatewaykit/gatewaykit/store/internal/sqlstore"
	"github.com/gatewaykit/gatewaykit/videos"
)

// ContentStore is the [videos.ContentStore] of a [DB]: video content
// lives in the database, in chunks of [Options.ChunkSize], so replicas
// share nothing but the database. It is safe for concurrent use.
//
// Open reads the first chunk at once and each further chunk when the
// reader reaches it, one query each. A Put that replaces content being
// read makes the old reader fail with an error once it needs a chunk it
// has not read yet (small content, in one chunk, is never affected).
// Content is kept until deleted.
type ContentStore struct {
	db *DB
}

var _ videos.ContentStore = (*ContentStore)(nil)

// Put implements [videos.ContentStore]: it replaces the content of the
// task's variant, in one transaction.
func (s *ContentStore) Put(ctx context.Context, p videos.PutParams) error {
	if err := sqlstore.CheckPut(p); err != nil {
		return err
	}
	chunk := s.db.chunk
	// Repeatable: it replaces the content, whatever is there.
	err := s.db.tx(ctx, true, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, s.db.q(`DELETE FROM gk_contents WHERE task_id = $1 AND variant = $2`), p.TaskID, string(p.Variant)); err != nil {
			return err
		}
		var id int64
		err := tx.QueryRow(ctx, s.db.q(`INSERT INTO gk_contents (task_id, variant, content_type, size, chunk_size, mod_time)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`),
			p.TaskID, string(p.Variant), p.ContentType, len(p.Data), chunk, time.Now().UTC().Truncate(time.Second)).Scan(&id)
		if err != nil {
			return err
		}
		var rows [][]any
		for seq := 0; seq*chunk < len(p.Data) || seq == 0; seq++ {
			rows = append(rows, []any{id, int32(seq), p.Data[seq*chunk : min((seq+1)*chunk, len(p.Data))]})
		}
		_, err = tx.CopyFrom(ctx, pgx.Identifier{s.db.schemaName, "gk_content_chunks"}, []string{"content_id", "seq", "data"}, pgx.CopyFromRows(rows))
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: storing the %s of task %s: %w", p.Variant, p.TaskID, err)
	}
	return nil
}

// Open implements [videos.ContentStore].
func (s *ContentStore) Open(ctx context.Context, taskID string, v videos.Variant) (*videos.Content, error) {
	if !videos.ValidID(taskID) || !v.Valid() {
		return nil, videos.ErrNoContent
	}
	r := &chunkReader{s: s}
	var c videos.Content
	err := s.db.retry(ctx, func() error {
		return s.db.pool.QueryRow(ctx, s.db.q(`SELECT c.id, c.content_type, c.size, c.chunk_size, c.mod_time, ch.data
			FROM gk_contents c LEFT JOIN gk_content_chunks ch ON ch.content_id = c.id AND ch.seq = 0
			WHERE c.task_id = $1 AND c.variant = $2`), taskID, string(v)).
			Scan(&r.id, &c.ContentType, &r.size, &r.chunkSize, &c.ModTime, &r.buf)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, videos.ErrNoContent
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: opening the %s of task %s: %w", v, taskID, err)
	}
	c.ModTime = c.ModTime.UTC()
	c.Size = r.size
	c.Body = r
	return &c, nil
}

// Delete implements [videos.ContentStore].
func (s *ContentStore) Delete(ctx context.Context, taskID string) error {
	if !videos.ValidID(taskID) {
		return nil
	}
	err := s.db.retry(ctx, func() error { // nothing left, however often it runs
		_, err := s.db.pool.Exec(ctx, s.db.q(`DELETE FROM gk_contents WHERE task_id = $1`), taskID)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: deleting the content of task %s: %w", taskID, err)
	}
	return nil
}

// chunkTimeout bounds the query of one chunk.
const chunkTimeout = time.Minute

// chunkReader reads one content's chunks as they are needed. buf holds
// chunk bufSeq.
type chunkReader struct {
	s         *ContentStore
	id        int64
	size      int64
	chunkSize int32
	off       int64
	buf       []byte
	bufSeq    int64
	closed    bool
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if r.closed {
		return 0, errors.New("postgres: read of closed content")
	}
	if r.off >= r.size {
		return 0, io.EOF
	}
	seq := r.off / int64(r.chunkSize)
	if seq != r.bufSeq || r.buf == nil {
		var b []byte
		// io.Reader has no context: each chunk's query gets a bound of
		// its own.
		ctx, cancel := context.WithTimeout(context.Background(), chunkTimeout)
		err := r.s.db.retry(ctx, func() error {
			return r.s.db.pool.QueryRow(ctx, r.s.db.q(`SELECT data FROM gk_content_chunks WHERE content_id = $1 AND seq = $2`), r.id, seq).Scan(&b)
		})
		cancel()
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, errors.New("postgres: the content was replaced or deleted while it was read")
		}
		if err != nil {
			return 0, fmt.Errorf("postgres: reading content: %w", err)
		}
		r.buf, r.bufSeq = b, seq
	}
	start := r.off - seq*int64(r.chunkSize)
	if start >= int64(len(r.buf)) {
		return 0, io.ErrUnexpectedEOF
	}
	n := copy(p, r.buf[start:])
	r.off += int64(n)
	return n, nil
}

func (r *chunkReader) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = r.off + offset
	case io.SeekEnd:
		abs = r.size + offset
	default:
		return 0, errors.New("postgres: Seek: invalid whence")
	}
	if abs < 0 {
		return 0, errors.New("postgres: Seek: negative position")
	}
	r.off = abs
	return abs, nil
}

func (r *chunkReader) Close() error {
	r.closed = true
	r.buf = nil
	return nil
}
