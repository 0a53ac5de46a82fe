package auth

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"
)

// ErrUnsupported is returned by the methods of [CachedKeyStore] that pass
// an optional capability ([KeyAdmin], [UsageReader]) through to a store
// that lacks it. It wraps errors.ErrUnsupported.
var ErrUnsupported = errUnsupported{}

type errUnsupported struct{}

func (errUnsupported) Error() string        { return "auth: the key store does not support this" }
func (errUnsupported) Is(target error) bool { return target == errors.ErrUnsupported }

// A KeyAdmin is a [KeyStore] whose keys can be listed, read, changed and
// deleted one by one, as an admin API does. It is an optional capability
// (keys are created with [KeyPutter]); the middleware needs only
// KeyStore. Implementations must be safe for concurrent use with the
// KeyStore's methods and lose none of their updates. Returned keys are
// the caller's to modify and never carry a secret.
//
// The conformance suite authtest.TestKeyAdmin checks this contract.
type KeyAdmin interface {
	// GetKey returns the key with id id, or an error wrapping
	// [ErrKeyNotFound].
	GetKey(ctx context.Context, id string) (*Key, error)
	// ListKeys returns up to p.Limit keys in order of id, those after
	// p.After (all if it is empty).
	ListKeys(ctx context.Context, p ListKeysParams) ([]*Key, error)
	// UpdateKey changes the key with id id in one atomic step: fn gets
	// a copy of the stored key and changes it, and the store keeps what
	// fn left in Owner, ExpiresAt, Disabled, RateLimit, AllowedModels,
	// Granted and in Quota.Unlimited, Quota.Remaining and
	// Quota.BudgetUSD (fn keeps Remaining and Granted consistent: see
	// [Key].Granted); the ID,
	// CreatedAt and the usage (Quota.Used, Reserved and CostUSD) stay the
	// store's. If fn returns an error, nothing changes and UpdateKey
	// returns it. UpdateKey returns the key as stored afterwards, or an
	// error wrapping [ErrKeyNotFound]. fn may be called more than once.
	UpdateKey(ctx context.Context, id string, fn func(*Key) error) (*Key, error)
	// DeleteKey deletes the key with id id: its secret stops working
	// (a [CachedKeyStore] in front of another process's store sees that
	// within its TTL). Its usage rows stay. An unknown id is an error
	// wrapping [ErrKeyNotFound].
	DeleteKey(ctx context.Context, id string) error
}

// ListKeysParams are the parameters of [KeyAdmin.ListKeys].
type ListKeysParams struct {
	// After is the id after which the list starts; empty for the first.
	After string
	// Limit is the most keys returned; ≤ 0 means 100.
	Limit int
}

// DefaultListLimit is the number of keys [KeyAdmin.ListKeys] returns when
// ListKeysParams.Limit is not positive.
const DefaultListLimit = 100

// A UsageReader is a [KeyStore] that records the usage of each settlement
// that carries a model ([SettleParams].Model) as one row (key id, model,
// time, input and output tokens, cost) in the same atomic step as the
// quota, and reads the rows back aggregated. It is an optional capability.
// Implementations must be safe for concurrent use.
//
// The conformance suite authtest.TestUsageReader checks this contract.
type UsageReader interface {
	// Usage returns the usage rows that match p, aggregated by p.GroupBy,
	// sorted by the group's field. A group without rows is absent. Its
	// sums saturate (tokens at math.MaxInt64, costs at math.MaxFloat64)
	// rather than wrap or fail.
	Usage(ctx context.Context, p UsageParams) ([]UsageRow, error)
}

// UsageGroup is how [UsageReader.Usage] aggregates rows.
type UsageGroup string

// The groupings of [UsageParams].GroupBy.
const (
	// GroupByDay sums the rows of each UTC day (UsageRow.Day).
	GroupByDay UsageGroup = "day"
	// GroupByModel sums the rows of each model (UsageRow.Model).
	GroupByModel UsageGroup = "model"
	// GroupByKey sums the rows of each key (UsageRow.KeyID).
	GroupByKey UsageGroup = "key"
)

// Valid reports whether g is one of the groupings.
func (g UsageGroup) Valid() bool {
	return g == GroupByDay || g == GroupByModel || g == GroupByKey
}

// SetGroup sets the field of r that g groups by to value: Model or
// KeyID when g groups by model or key, Day otherwise. A [UsageReader]
// names each of its rows' group with it.
func (r *UsageRow) SetGroup(g UsageGroup, value string) {
	switch g {
	case GroupByModel:
		r.Model = value
	case GroupByKey:
		r.KeyID = value
	default:
		r.Day = value
	}
}

// UsageParams are the parameters of [UsageReader.Usage]. Empty fields
// filter nothing.
type UsageParams struct {
	// KeyID keeps the rows of this key only.
	KeyID string
	// Model keeps the rows of this model only.
	Model string
	// From keeps the rows recorded at or after it.
	From time.Time
	// To keeps the rows recorded before it. A store may honour From and
	// To to the second only (as [MemoryKeyStore] does).
	To time.Time
	// GroupBy is the aggregation; empty means GroupByDay.
	GroupBy UsageGroup
}

// UsageRow is one group of usage rows.
type UsageRow struct {
	// Day is the UTC day, YYYY-MM-DD, when grouped by day; else empty.
	Day string
	// Model is the model, when grouped by model; else empty.
	Model string
	// KeyID is the key's id, when grouped by key; else empty.
	KeyID string

	// Requests counts the rows (one per request settled).
	Requests int64
	// InputTokens and OutputTokens are the tokens read and written.
	InputTokens, OutputTokens int64
	// CachedTokens and CacheWriteTokens are the parts of InputTokens read
	// from and written to the provider's prompt cache, ReasoningTokens
	// the part of OutputTokens spent reasoning.
	CachedTokens, CacheWriteTokens, ReasoningTokens int64
	// CostUSD is the cost in US dollars.
	CostUSD float64
}

// DayLayout is the layout of [UsageRow].Day.
const DayLayout = "2006-01-02"

// usageBucket is where [MemoryKeyStore] sums the usage rows of one key
// and model within one second, so that its memory grows with the keys,
// models and seconds that saw requests, not with the requests.
type usageBucket struct {
	keyID, model string
	second       int64 // Unix seconds
}

// usageSum is the sum of the rows of a bucket.
type usageSum struct {
	requests, input, output       int64
	cached, cacheWrite, reasoning int64
	cost                          float64
}

// bucketOf returns the bucket of settlement p at now (p.Time if it is
// set), and whether p records a row (it has a model).
func bucketOf(p SettleParams, now time.Time) (usageBucket, bool) {
	if p.Model == "" {
		return usageBucket{}, false
	}
	t := p.Time
	if t.IsZero() {
		t = now
	}
	return usageBucket{keyID: p.KeyID, model: p.Model, second: t.Unix()}, true
}

// add adds the row of p to s.
func (s *usageSum) add(p SettleParams) {
	s.requests++
	s.input = addSat(s.input, max(p.InputTokens, 0))
	s.output = addSat(s.output, max(p.OutputTokens, 0))
	s.cached = addSat(s.cached, max(p.CachedTokens, 0))
	s.cacheWrite = addSat(s.cacheWrite, max(p.CacheWriteTokens, 0))
	s.reasoning = addSat(s.reasoning, max(p.ReasoningTokens, 0))
	s.cost = AddCost(s.cost, p.CostUSD)
}

// matches reports whether the rows of b pass the filters of p (times
// compared at the second).
func (b *usageBucket) matches(p UsageParams) bool {
	return (p.KeyID == "" || b.keyID == p.KeyID) &&
		(p.Model == "" || b.model == p.Model) &&
		(p.From.IsZero() || b.second >= secondCeil(p.From)) &&
		(p.To.IsZero() || b.second < secondCeil(p.To))
}

// secondCeil is t in Unix seconds, rounded up.
func secondCeil(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

// aggregate sums the buckets that match p by p.GroupBy, sorted.
func aggregate(buckets map[usageBucket]*usageSum, p UsageParams) []UsageRow {
	groups := make(map[string]*UsageRow)
	for b, sum := range buckets {
		if !b.matches(p) {
			continue
		}
		var k string
		switch p.GroupBy {
		case GroupByModel:
			k = b.model
		case GroupByKey:
			k = b.keyID
		default:
			k = time.Unix(b.second, 0).UTC().Format(DayLayout)
		}
		g, ok := groups[k]
		if !ok {
			g = new(UsageRow)
			g.SetGroup(p.GroupBy, k)
			groups[k] = g
		}
		g.Requests = addSat(g.Requests, sum.requests)
		g.InputTokens = addSat(g.InputTokens, sum.input)
		g.OutputTokens = addSat(g.OutputTokens, sum.output)
		g.CachedTokens = addSat(g.CachedTokens, sum.cached)
		g.CacheWriteTokens = addSat(g.CacheWriteTokens, sum.cacheWrite)
		g.ReasoningTokens = addSat(g.ReasoningTokens, sum.reasoning)
		g.CostUSD = AddCost(g.CostUSD, sum.cost)
	}
	keys := slices.Sorted(maps.Keys(groups))
	rows := make([]UsageRow, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, *groups[k])
	}
	return rows
}
