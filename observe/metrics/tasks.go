package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatewaykit/gatewaykit/videos"
)

// Tasks returns a videos.TaskStore that is ts, and counts the video tasks
// that reach each status (gatewaykit_video_tasks_total) and the queue
// (gatewaykit_video_queue_depth): give it to gateway.Config.Tasks. It
// keeps ts's Ping and Shared (for readiness), when ts has them.
func (m *Metrics) Tasks(ts videos.TaskStore) videos.TaskStore {
	return &taskStore{TaskStore: mustStore(ts, "Tasks: nil TaskStore"), tasks: m.tasks, queue: m.queue}
}

// taskStore is the store of Tasks, with the counter and the gauge it
// moves.
type taskStore struct {
	videos.TaskStore
	tasks *prometheus.CounterVec // gatewaykit_video_tasks_total
	queue prometheus.Gauge       // gatewaykit_video_queue_depth
}

func (s *taskStore) Create(ctx context.Context, t *videos.Task) error {
	err := s.TaskStore.Create(ctx, t)
	if err == nil {
		s.tasks.WithLabelValues(string(videos.StatusQueued)).Inc()
		s.queue.Inc()
	}
	return err
}

func (s *taskStore) Claim(ctx context.Context, p videos.ClaimParams) (*videos.Task, error) {
	t, err := s.TaskStore.Claim(ctx, p)
	if err == nil && t.Attempts == 1 {
		// Its first claim: the task leaves the queue. (A later one takes
		// over a task whose lease ran out, which was not queued.)
		s.tasks.WithLabelValues(string(videos.StatusInProgress)).Inc()
		s.queue.Dec()
	}
	return t, err
}

func (s *taskStore) Update(ctx context.Context, p videos.UpdateParams) (*videos.Task, error) {
	t, err := s.TaskStore.Update(ctx, p)
	if err == nil {
		switch {
		case p.Complete != nil:
			s.tasks.WithLabelValues(string(videos.StatusCompleted)).Inc()
		case p.Fail != nil:
			s.tasks.WithLabelValues(string(videos.StatusFailed)).Inc()
		}
	}
	return t, err
}

// Delete deletes the task, and takes it off the queue if it was queued
// (which costs a Get before each delete, a rare request).
func (s *taskStore) Delete(ctx context.Context, owner, id string) error {
	t, gerr := s.TaskStore.Get(ctx, owner, id)
	err := s.TaskStore.Delete(ctx, owner, id)
	if err == nil && gerr == nil && t.Status == videos.StatusQueued {
		s.queue.Dec()
	}
	return err
}

// Ping asks ts whether it answers, when it can be asked.
func (s *taskStore) Ping(ctx context.Context) error { return pingStore(ctx, s.TaskStore) }

// Shared reports whether ts says it is shared by every replica, when it
// can be asked (for readiness: gateway.SharedPinger).
func (s *taskStore) Shared() bool { return sharedStore(s.TaskStore) }
