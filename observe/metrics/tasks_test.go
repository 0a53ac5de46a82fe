package metrics_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/observe/metrics"
	"github.com/gatewaykit/gatewaykit/videos"
)

// pingingStore is a task store with a Ping.
type pingingStore struct {
	videos.TaskStore
	err error
}

func (s pingingStore) Ping(context.Context) error { return s.err }

// TestTasksCountsStatusesAndTheQueue: the task store decorator counts
// each status a task reaches and the queue, and keeps the store's Ping.
func TestTasksCountsStatusesAndTheQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	down := errors.New("down")
	ts := m.Tasks(pingingStore{videos.NewMemoryStore(nil), down})

	now := time.Now()
	create := func(id string, age time.Duration) {
		require.NoError(t, ts.Create(ctx, &videos.Task{ID: id, Owner: "team-a", Model: "demo-video", Status: videos.StatusQueued, CreatedAt: now.Add(-age)}))
	}
	create("task_a", 3*time.Second)
	create("task_b", 2*time.Second)
	create("task_c", time.Second)
	depth := func() float64 {
		mfs, err := reg.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			if mf.GetName() == "gatewaykit_video_queue_depth" {
				return mf.Metric[0].GetGauge().GetValue()
			}
		}
		return -1
	}
	require.Equal(t, 3.0, depth())

	a, err := ts.Claim(ctx, videos.ClaimParams{Worker: "w", Now: now})
	require.NoError(t, err)
	require.Equal(t, "task_a", a.ID)
	_, err = ts.Update(ctx, videos.UpdateParams{ID: a.ID, Attempt: a.Attempts, Now: now, Complete: &videos.Completion{}})
	require.NoError(t, err)
	b, err := ts.Claim(ctx, videos.ClaimParams{Worker: "w", Now: now})
	require.NoError(t, err)
	_, err = ts.Update(ctx, videos.UpdateParams{ID: b.ID, Attempt: b.Attempts, Now: now, Fail: &videos.TaskError{Code: "x", Message: "y"}})
	require.NoError(t, err)
	require.NoError(t, ts.Delete(ctx, "team-a", "task_c")) // queued: leaves the queue
	require.NoError(t, ts.Delete(ctx, "team-a", "task_a")) // finished: was not queued

	require.Equal(t, 0.0, depth())
	require.NoError(t, testutil.CollectAndCompare(reg, strings.NewReader(`
# HELP gatewaykit_video_tasks_total Video tasks that reached a status: queued (created), in_progress (first claimed), completed, failed.
# TYPE gatewaykit_video_tasks_total counter
gatewaykit_video_tasks_total{status="completed"} 1
gatewaykit_video_tasks_total{status="failed"} 1
gatewaykit_video_tasks_total{status="in_progress"} 2
gatewaykit_video_tasks_total{status="queued"} 3
`), "gatewaykit_video_tasks_total"))

	p, ok := ts.(interface{ Ping(context.Context) error })
	require.True(t, ok, "the decorated store keeps its Ping, for readiness")
	require.ErrorIs(t, p.Ping(ctx), down)
}
