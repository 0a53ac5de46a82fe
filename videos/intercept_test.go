package videos_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/videos"
)

// TestInterceptorsRunAtCreate checks that a guardrail refuses the
// creation of a task whose prompt it bans, in the flat error shape, with
// no task stored, and that the interceptors see the request and the end
// of a creation they let through.
func TestInterceptorsRunAtCreate(t *testing.T) {
	t.Parallel()
	var seen []string
	guard := func(next endpoint.Func) endpoint.Func {
		return func(ctx context.Context, c *endpoint.Call) (*endpoint.Reply, error) {
			if strings.Contains(c.Prompt(), "explosion") {
				return nil, apierrors.InvalidRequest("prompt", "The prompt is refused by the gateway's policy.")
			}
			r, err := next(ctx, c)
			if err == nil {
				r.OnDone(func(_ context.Context, d *endpoint.Done) {
					_, ok := c.Request.(*videos.CreateRequest)
					seen = append(seen, c.Family+" "+c.Model+" "+c.Prompt())
					require.True(t, ok)
					require.NoError(t, d.Err)
				})
			}
			return r, err
		}
	}
	store := videos.NewMemoryStore(nil)
	h := videos.NewHandler(store, models.NewMemoryCatalog(demo.VideoModels()...), videos.NewMemoryContentStore(nil), videos.WithInterceptors(guard))

	w := send(h, "POST", "/v1/videos", `{"model":"demo-video","prompt":"an explosion","size":"1280x720","seconds":8}`)
	require.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())
	require.JSONEq(t, `{"code":"invalid_request","message":"The prompt is refused by the gateway's policy.","error":{"message":"The prompt is refused by the gateway's policy.","type":"invalid_request_error","param":"prompt","code":"invalid_request"}}`, w.Body.String())
	tasks, _, err := store.List(t.Context(), videos.ListParams{Owner: "owner:acme"})
	require.NoError(t, err)
	require.Empty(t, tasks)

	w = send(h, "POST", "/v1/videos", `{"model":"demo-video","prompt":"a lighthouse","size":"1280x720","seconds":8}`)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.Equal(t, []string{"videos demo-video a lighthouse"}, seen)
}
