package relay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/runner"
)

// The video routes over the relay's video backend: the handler creates
// each task upstream before it answers, and a runner, which runs in the
// background, polls the upstream task, downloads the video and settles
// the task's charge against the key store that it is given.
func ExampleRelay_Videos() {
	upstream := relaytest.NewUpstream()
	defer upstream.Close()
	r, err := relay.New([]relay.Route{{Model: "sora-2", Upstreams: []relay.Upstream{
		{BaseURL: upstream.BaseURL(), Key: "sk-upstream", Model: relaytest.ModeOK},
	}}}, relay.WithPollInterval(10*time.Millisecond))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	keys := auth.NewMemoryKeyStore()
	if err := keys.Add(ctx, "sk-client-example-key", auth.Key{ID: "key_1", Quota: auth.LimitedQuota(1_000_000)}); err != nil {
		panic(err)
	}
	catalog := models.NewMemoryCatalog(models.Model{ID: "sora-2", EndpointTypes: []models.EndpointType{models.CompatVideo}})
	store, contents := videos.NewMemoryStore(nil), videos.NewMemoryContentStore(nil)

	gen := r.Videos()
	rn := runner.New(store, gen, contents, runner.WithKeyStore(keys))
	go rn.Run(ctx) // until ctx is done, or Shutdown
	defer rn.Shutdown(ctx)
	mux := http.NewServeMux()
	videos.Register(mux, videos.NewHandler(store, catalog, contents,
		videos.WithNotify(rn.Wake), videos.WithSubmitter(gen.(videos.Submitter))))
	gateway := httptest.NewServer(auth.Middleware(keys)(relay.ForwardHeaders(mux)))
	defer gateway.Close()

	call := func(method, path, body string) map[string]any {
		req, _ := http.NewRequest(method, gateway.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer sk-client-example-key")
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer res.Body.Close()
		var v map[string]any
		_ = json.NewDecoder(res.Body).Decode(&v)
		return v
	}
	task := call("POST", "/v1/videos", `{"model":"sora-2","prompt":"a kite","seconds":"4","size":"1280x720"}`)
	fmt.Println(task["status"], "- created upstream by", upstream.Requests()[0].Method, upstream.Requests()[0].Path)
	for task["status"] != "completed" && task["status"] != "failed" {
		time.Sleep(10 * time.Millisecond)
		task = call("GET", "/v1/videos/"+task["id"].(string), "")
	}
	fmt.Println(task["status"])
	k, _ := keys.Lookup(ctx, "sk-client-example-key")
	fmt.Println("reserved:", k.Quota.Reserved, "charged:", k.Quota.Used > 0)
	// Output:
	// queued - created upstream by POST /v1/videos
	// completed
	// reserved: 0 charged: true
}
