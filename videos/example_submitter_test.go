package videos_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/gatewaykit/gatewaykit/demo"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/videos"
)

// upstreamGenerator stands for a generator whose work runs at an
// upstream service, such as the relay's: Submit creates the upstream
// task while the client waits, Generate follows it by its reference.
type upstreamGenerator struct{ videos.Generator }

func (upstreamGenerator) Submit(_ context.Context, t *videos.Task) (string, error) {
	if strings.Contains(t.Prompt(), "forbidden") {
		// The upstream's 400, passed on.
		return "", apierrors.InvalidRequest("prompt", "The upstream refused the prompt.")
	}
	return "upstream-task-42", nil
}

func ExampleWithSubmitter() {
	store, contents := videos.NewMemoryStore(nil), videos.NewMemoryContentStore(nil)
	catalog := models.NewMemoryCatalog(demo.VideoModels()...)
	var gen videos.Generator = upstreamGenerator{demo.NewVideoGenerator()}
	var opts []videos.Option
	if s, ok := gen.(videos.Submitter); ok {
		opts = append(opts, videos.WithSubmitter(s))
	}
	h := videos.NewHandler(store, catalog, contents, opts...)

	// What the upstream refuses is refused at once: no task is stored.
	w := send(h, "POST", "/v1/videos", `{"model":"demo-video","prompt":"something forbidden","size":"1280x720","seconds":8}`)
	fmt.Print(w.Code, " ", w.Body)

	// What it accepts is stored with its reference, for the runner's
	// Generate; clients never see it.
	w = send(h, "POST", "/v1/videos", `{"model":"demo-video","prompt":"a lighthouse","size":"1280x720","seconds":8}`)
	task, _ := store.Get(context.Background(), "owner:acme", idOf(w))
	fmt.Println(w.Code, task.BackendRef, store.Len())
	// Output:
	// 400 {"code":"invalid_request","message":"The upstream refused the prompt.","error":{"message":"The upstream refused the prompt.","type":"invalid_request_error","param":"prompt","code":"invalid_request"}}
	// 200 upstream-task-42 1
}
