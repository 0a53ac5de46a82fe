package metrics

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// WatchUsage reports w, the key store that writes usage behind (the
// SQLite or PostgreSQL one: give the store itself, not a cache in front
// of it), in gatewaykit_usage_pending (the settlements that wait to be
// written, read at each scrape) and gatewaykit_usage_write_failures_total
// (its group commits that failed). Without it, both are 0. A later call
// replaces w.
func (m *Metrics) WatchUsage(w telemetry.UsageWriter) {
	if w == nil {
		panic("metrics: WatchUsage: nil UsageWriter")
	}
	m.usage.Store(&w)
}

// Responses returns a responses.Store that is rs, and counts the
// responses that it fails to keep (gatewaykit_unstored_responses_total):
// each failed Put is a response that was generated and charged, whose
// client was told that it is not stored. Give it to
// gateway.Config.ResponseStore. It keeps rs's Ping and Shared (for
// readiness), when rs has them.
func (m *Metrics) Responses(rs responses.Store) responses.Store {
	return &responseStore{Store: mustStore(rs, "Responses: nil Store"), unstored: m.unstored}
}

// responseStore is the store of Responses, with the one counter it
// adds to.
type responseStore struct {
	responses.Store
	unstored prometheus.Counter // gatewaykit_unstored_responses_total
}

func (s *responseStore) Put(ctx context.Context, r *responses.StoredResponse) error {
	err := s.Store.Put(ctx, r)
	if err != nil && !errors.Is(err, context.Canceled) {
		s.unstored.Inc()
	}
	return err
}

// Ping asks rs whether it answers, when it can be asked.
func (s *responseStore) Ping(ctx context.Context) error { return pingStore(ctx, s.Store) }

// Shared reports whether rs says it is shared by every replica, when it
// can be asked.
func (s *responseStore) Shared() bool { return sharedStore(s.Store) }

// mustStore returns store, a store that a wrapper of this package is
// given; it panics with "metrics: " and msg, as the method that makes the
// wrapper does, if store is nil.
func mustStore[S any](store S, msg string) S {
	if any(store) == nil {
		panic("metrics: " + msg)
	}
	return store
}

// pingStore asks store whether it answers, when it can be asked (it has
// a Ping method: gateway.Pinger), and returns nil otherwise.
func pingStore(ctx context.Context, store any) error {
	if p, ok := store.(interface{ Ping(context.Context) error }); ok {
		return p.Ping(ctx)
	}
	return nil
}

// sharedStore reports whether store says it is shared by every replica,
// when it can be asked (gateway.SharedPinger).
func sharedStore(store any) bool {
	sh, ok := store.(interface{ Shared() bool })
	return ok && sh.Shared()
}
