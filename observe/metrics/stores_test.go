package metrics_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/observe/metrics"
	"github.com/gatewaykit/gatewaykit/responses"
)

// fullStore is a shared response store whose disk is full: Put fails.
type fullStore struct {
	*responses.MemoryStore
	err error
}

func (s fullStore) Put(ctx context.Context, r *responses.StoredResponse) error {
	if s.err != nil {
		return s.err
	}
	return s.MemoryStore.Put(ctx, r)
}
func (s fullStore) Ping(context.Context) error { return s.err }
func (fullStore) Shared() bool                 { return true }

// TestResponsesCountsTheResponsesNotStored: each failed Put is counted;
// the store's Ping and Shared are kept.
func TestResponsesCountsTheResponsesNotStored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	full := errors.New("database or disk is full")
	ok := m.Responses(fullStore{MemoryStore: responses.NewMemoryStore(nil)})
	failing := m.Responses(fullStore{MemoryStore: responses.NewMemoryStore(nil), err: full})

	r := &responses.StoredResponse{Owner: "o", Response: responses.Response{ID: "resp_1"}}
	require.NoError(t, ok.Put(ctx, r))
	require.ErrorIs(t, failing.Put(ctx, r), full)
	require.ErrorIs(t, failing.Put(ctx, r), full)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP gatewaykit_unstored_responses_total Responses generated (and charged) that the response store failed to keep; their clients were told.
# TYPE gatewaykit_unstored_responses_total counter
gatewaykit_unstored_responses_total 2
`), "gatewaykit_unstored_responses_total"))

	require.ErrorIs(t, failing.(interface{ Ping(context.Context) error }).Ping(ctx), full, "readiness still asks the store")
	require.True(t, failing.(interface{ Shared() bool }).Shared())
}

// usageWriter is a key store that writes usage behind.
type usageWriter struct {
	pending  int
	failures uint64
}

func (w usageWriter) PendingUsage() int         { return w.pending }
func (w usageWriter) FailedUsageWrites() uint64 { return w.failures }

// TestWatchUsageReportsTheWritersBacklog: the settlements that wait and
// the failed commits are read at each scrape; 0 without a writer.
func TestWatchUsageReportsTheWritersBacklog(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	names := []string{"gatewaykit_usage_pending", "gatewaykit_usage_write_failures_total"}
	want := func(pending, failures string) string {
		return `
# HELP gatewaykit_usage_pending Settlements of usage accepted and not yet written by the key store's group commit (0 without one).
# TYPE gatewaykit_usage_pending gauge
gatewaykit_usage_pending ` + pending + `
# HELP gatewaykit_usage_write_failures_total Group commits of usage that failed (each is tried again).
# TYPE gatewaykit_usage_write_failures_total counter
gatewaykit_usage_write_failures_total ` + failures + `
`
	}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want("0", "0")), names...))
	m.WatchUsage(usageWriter{pending: 3, failures: 7})
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want("3", "7")), names...))
}
