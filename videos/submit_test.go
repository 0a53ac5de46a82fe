package videos_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/videos"
)

// fakeSubmitter records what it is asked to submit, and answers with err
// (nil: the ref "ref-<task id>").
type fakeSubmitter struct {
	mu    sync.Mutex
	tasks []*videos.Task
	err   error
}

func (s *fakeSubmitter) Submit(_ context.Context, task *videos.Task) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tasks = append(s.tasks, task)
	if s.err != nil {
		return "", s.err
	}
	return "ref-" + task.ID, nil
}

func TestSubmitterStartsTheTaskBeforeTheReplyAndItsRefIsStored(t *testing.T) {
	t.Parallel()
	sub := &fakeSubmitter{}
	b := setup(t, bundleOptions{handler: []videos.Option{videos.WithSubmitter(sub)}})

	id := b.create(t, keyAlice, map[string]any{"model": modelFirstKind, "prompt": "a fox", "size": "1280x720", "seconds": 8})
	r := b.postJSON(t, "/v1/vendorai/videos", keyAlice, map[string]any{"model": modelMulti, "mode": "t2v", "prompt": "waves"})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	mid := r.json(t)["id"].(string)

	require.Len(t, sub.tasks, 2)
	first := sub.tasks[0]
	require.Equal(t, id, first.ID)
	require.NotEmpty(t, first.Owner)
	require.Equal(t, modelFirstKind, first.Model)
	require.Equal(t, "8", first.Seconds)
	require.Equal(t, "1280x720", first.Size)
	require.Equal(t, videos.StatusQueued, first.Status)
	require.Equal(t, "a fox", first.Prompt())
	require.Equal(t, videos.EndpointMultimodal, sub.tasks[1].Request.Endpoint())

	for _, id := range []string{id, mid} {
		task, err := b.store.Get(context.Background(), first.Owner, id)
		require.NoError(t, err)
		require.Equal(t, "ref-"+id, task.BackendRef)
		// The reference is the backend's: never shown to clients.
		got := b.do(t, http.MethodGet, "/v1/videos/"+id, keyAlice, "", nil)
		require.Equal(t, http.StatusOK, got.status)
		require.NotContains(t, string(got.body), "ref-")
	}
}

func TestSubmitterRefusalIsTheCreationsErrorAndNoTaskIsStored(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		err        error
		status     int
		code, want string
	}{
		{"ClientError", apierrors.InvalidRequest("seconds", "Invalid seconds: 5. Use one of 4, 8, 12."), 400, "invalid_request", "Invalid seconds: 5. Use one of 4, 8, 12."},
		{"UnknownUpstreamModel", apierrors.ModelNotFound("sora-9"), 400, "model_not_found", ""},
		{"RateLimited", apierrors.RateLimitExceeded("Slow down.", 0), 429, "rate_limit_exceeded", "Slow down."},
		{"BadGateway", apierrors.BadGateway("The upstream refused the gateway's credentials.", errors.New("401")), 502, "bad_gateway", "The upstream refused the gateway's credentials."},
		{"OtherError", errors.New("dial tcp 10.0.0.7:8000: refused"), 500, "internal_server_error", "internal server error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sub := &fakeSubmitter{err: tc.err}
			b := setup(t, bundleOptions{handler: []videos.Option{videos.WithSubmitter(sub)}})
			for _, send := range []func() reply{
				func() reply {
					return b.postJSON(t, "/v1/videos", keyAlice, map[string]any{"model": modelMulti, "prompt": "a fox"})
				},
				func() reply {
					return b.postForm(t, keyAlice, formField{name: "model", value: modelMulti}, formField{name: "prompt", value: "a fox"})
				},
				func() reply {
					return b.postJSON(t, "/v1/vendorai/videos", keyAlice, map[string]any{"model": modelMulti, "mode": "t2v", "prompt": "a fox"})
				},
			} {
				r := send()
				require.Equal(t, tc.status, r.status, "body: %s", r.body)
				m := r.json(t)
				require.Equal(t, tc.code, m["code"], "body: %s", r.body)
				if tc.want != "" {
					require.Equal(t, tc.want, m["message"])
				}
				require.Equal(t, m["message"], m["error"].(map[string]any)["message"])
			}
			require.Len(t, sub.tasks, 3)
			require.Zero(t, b.store.Len(), "a refused creation stores no task")
		})
	}
}

// A request the gateway itself refuses never reaches the submitter.
func TestSubmitterIsNotAskedForInvalidRequests(t *testing.T) {
	t.Parallel()
	sub := &fakeSubmitter{}
	b := setup(t, bundleOptions{handler: []videos.Option{videos.WithSubmitter(sub)}})
	r := b.postJSON(t, "/v1/videos", keyAlice, map[string]any{"model": modelFirstKind, "prompt": "a fox", "size": "1280x720", "seconds": 5})
	require.Equal(t, http.StatusBadRequest, r.status)
	require.Empty(t, sub.tasks)
}
