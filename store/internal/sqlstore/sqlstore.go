// Package sqlstore holds what the SQL stores of packages postgres and
// sqlite share whatever their dialect: the rules a store applies around
// its statements (settling a quota, paging a list, checking and encoding
// what it is asked to keep) and the record of the last failed write that
// a readiness check reads. The statements, the transactions and the
// wording of each store's errors stay in its own package.
package sqlstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/conversations"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/videos"
)

// AddSat returns a + b, or math.MaxInt64 if the sum would exceed it
// (a and b are not negative).
func AddSat(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

// Settle applies p to q as [auth.KeyStore.Settle] says, and reports
// whether the budget covered p.Used (what PostgreSQL's gk_settle does
// for one settlement).
func Settle(q auth.Quota, p auth.SettleParams) (auth.Quota, bool) {
	q.Reserved = max(q.Reserved-p.Reserved, 0)
	q.CostUSD = auth.AddCost(q.CostUSD, p.CostUSD)
	q.Used = AddSat(q.Used, p.Used)
	if q.Unlimited {
		q.Remaining, q.Reserved = 0, 0
		return q, true
	}
	if p.Used > q.Remaining {
		q.Remaining = 0
		return q, false
	}
	q.Remaining -= p.Used
	return q, true
}

// Page cuts items, read with a limit of limit+1, to a page of limit: it
// returns the page and whether more items follow. A limit ≤ 0 keeps them
// all. The page is never nil.
func Page[T any](items []T, limit int) ([]T, bool) {
	more := limit > 0 && len(items) > limit
	if more {
		items = items[:limit]
	}
	if items == nil {
		items = []T{}
	}
	return items, more
}

// CheckPut returns an error wrapping [videos.ErrInvalidParams] unless p
// names a valid task and variant and has a content type.
func CheckPut(p videos.PutParams) error {
	switch {
	case !videos.ValidID(p.TaskID):
		return fmt.Errorf("%w: content: bad task id", videos.ErrInvalidParams)
	case !p.Variant.Valid():
		return fmt.Errorf("%w: content: bad variant %q", videos.ErrInvalidParams, p.Variant)
	case p.ContentType == "":
		return fmt.Errorf("%w: content: no content type", videos.ErrInvalidParams)
	}
	return nil
}

// CheckNewTask returns an error wrapping [videos.ErrInvalidParams]
// unless t may be created: a queued task with an id, an owner and a
// creation time.
func CheckNewTask(t *videos.Task) error {
	switch {
	case t == nil:
		return fmt.Errorf("%w: nil task", videos.ErrInvalidParams)
	case t.ID == "" || t.Owner == "" || t.CreatedAt.IsZero():
		return fmt.Errorf("%w: a new task needs an id, an owner and a creation time", videos.ErrInvalidParams)
	case t.Status != videos.StatusQueued:
		return fmt.Errorf("%w: a new task must be queued, not %q", videos.ErrInvalidParams, t.Status)
	}
	return nil
}

// CheckKey returns an error unless k may be added with secret: it has
// an id, and secret is empty or well formed (an error wrapping
// [auth.ErrMalformedCredential]).
func CheckKey(secret string, k auth.Key) error {
	switch {
	case k.ID == "":
		return errors.New("empty key id")
	case secret != "" && !auth.ValidSecret(secret):
		return fmt.Errorf("key %q: %w", k.ID, auth.ErrMalformedCredential)
	}
	return nil
}

// UsageGroup returns the expression that a usage query groups its rows
// by for by: the model, the key id, or else day, the dialect's
// expression of the UTC day of the at column.
func UsageGroup(by auth.UsageGroup, day string) string {
	switch by {
	case auth.GroupByModel:
		return "model"
	case auth.GroupByKey:
		return "key_id"
	}
	return day
}

// UsageFilter returns the conditions of the WHERE clause that selects
// the usage rows p asks for, each with "?" for its one argument, and
// their arguments; at converts a bound of p to the at column's value.
func UsageFilter(p auth.UsageParams, at func(time.Time) any) (where []string, args []any) {
	if p.KeyID != "" {
		where, args = append(where, "key_id = ?"), append(args, p.KeyID)
	}
	if p.Model != "" {
		where, args = append(where, "model = ?"), append(args, p.Model)
	}
	if !p.From.IsZero() {
		where, args = append(where, "at >= ?"), append(args, at(p.From))
	}
	if !p.To.IsZero() {
		where, args = append(where, "at < ?"), append(args, at(p.To))
	}
	return where, args
}

// DuplicateID returns the first id that two of items share, or "".
func DuplicateID(items []responses.Item) string {
	seen := make(map[string]bool, len(items))
	for i := range items {
		if seen[items[i].ID] {
			return items[i].ID
		}
		seen[items[i].ID] = true
	}
	return ""
}

// EncodeItems returns the JSON of each item, the data column of its row.
func EncodeItems(items []responses.Item) ([][]byte, error) {
	data := make([][]byte, len(items))
	for i := range items {
		b, err := json.Marshal(&items[i])
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		data[i] = b
	}
	return data, nil
}

// Conversation returns the conversation of a row: its id, created_at and
// metadata (JSON) columns. The error is that of decoding the metadata.
func Conversation(id string, createdAt int64, metadata []byte) (*conversations.Conversation, error) {
	c := &conversations.Conversation{ID: id, Object: conversations.ObjectConversation, CreatedAt: createdAt}
	if err := json.Unmarshal(metadata, &c.Metadata); err != nil {
		return nil, err
	}
	return c, nil
}

// ItemPage returns where a page of a conversation's items described by
// q starts, the items being numbered by a seq column: past seq after
// (when q.After is set, the store reads its seq in place of this one),
// in the order order ("ASC" or "DESC") that cmp (">" or "<") follows.
func ItemPage(q conversations.ItemQuery) (after int64, cmp, order string) {
	if q.Order == conversations.OrderDesc {
		return 1 << 62, "<", "DESC"
	}
	return 0, ">", "ASC"
}

// WriteHealth records the last write of a DB that failed for a reason
// of the database's, until a write succeeds. Its zero value records
// nothing yet. It is safe for concurrent use.
type WriteHealth struct {
	err atomic.Pointer[error]
}

// Note records the outcome of a write: a success clears the record of a
// failure; an error that fault reports as the database's (rather than
// the statement's) is recorded; any other leaves the record as it is.
func (h *WriteHealth) Note(err error, fault func(error) bool) {
	switch {
	case err == nil:
		if h.err.Load() != nil {
			h.err.Store(nil)
		}
	case fault(err):
		h.err.Store(&err)
	}
}

// Last returns the error of the last write that failed for a reason of
// the database's, unless a write has succeeded since.
func (h *WriteHealth) Last() error {
	if p := h.err.Load(); p != nil {
		return *p
	}
	return nil
}
