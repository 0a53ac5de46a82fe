package videos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/runner"
)

// send serves one request with h, as the principal of key key_1 (account
// acme): in a real server, auth.Middleware puts the principal there.
func send(h http.Handler, method, target, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r = r.WithContext(auth.WithPrincipal(r.Context(), &auth.Principal{KeyID: "key_1", Owner: "acme"}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func idOf(w *httptest.ResponseRecorder) string {
	var v struct{ ID string }
	_ = json.Unmarshal(w.Body.Bytes(), &v)
	return v.ID
}

// waitFor polls the store until the task is finished.
func waitFor(store videos.TaskStore, id string) *videos.Task {
	for {
		t, err := store.Get(context.Background(), "owner:acme", id)
		if err != nil || t.Status.Terminal() {
			return t
		}
		time.Sleep(time.Millisecond)
	}
}

func ExampleNewHandler() {
	store, contents := videos.NewMemoryStore(nil), videos.NewMemoryContentStore(nil)
	catalog := models.NewMemoryCatalog(demo.VideoModels()...)
	h := videos.NewHandler(store, catalog, contents)

	// A task is created queued.
	w := send(h, "POST", "/v1/videos", `{"model":"demo-video","prompt":"a lighthouse at dusk","size":"1280x720","seconds":8}`)
	var created videos.Created
	_ = json.Unmarshal(w.Body.Bytes(), &created)
	fmt.Println(w.Code, created.Status, created.Progress, strings.HasPrefix(created.ID, "task_"))

	// Its status, as GET /v1/videos/{task_id} shows it while it waits.
	w = send(h, "GET", "/v1/videos/"+created.ID, "")
	var status videos.Video
	_ = json.Unmarshal(w.Body.Bytes(), &status)
	fmt.Println(w.Code, status.Status, status.Progress, status.Seconds, status.Size)

	// Creation errors are 400s in the flat shape, with the mirrored error
	// object that the official SDKs read.
	w = send(h, "POST", "/v1/videos", `{"model":"demo-video","prompt":"x","size":"1280x720","seconds":5}`)
	fmt.Print(w.Code, " ", w.Body)
	// Output:
	// 200 queued 0 true
	// 200 queued 0 8 1280x720
	// 400 {"code":"invalid_request","message":"seconds must be one of 4, 8, 12, 16, 20 for model \"demo-video\", got 5","error":{"message":"seconds must be one of 4, 8, 12, 16, 20 for model \"demo-video\", got 5","type":"invalid_request_error","param":"seconds","code":"invalid_request"}}
}

func ExampleNewHandler_content() {
	store, contents := videos.NewMemoryStore(nil), videos.NewMemoryContentStore(nil)
	catalog := models.NewMemoryCatalog(demo.VideoModels()...)
	rn := runner.New(store, demo.NewVideoGenerator(demo.WithVideoDuration(0)), contents)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = rn.Run(ctx) }()
	h := videos.NewHandler(store, catalog, contents, videos.WithNotify(rn.Wake))

	id := idOf(send(h, "POST", "/v1/videos", `{"model":"demo-video","prompt":"a kite","size":"1280x720","seconds":4}`))
	waitFor(store, id)

	// The bytes, as media a browser never runs as a page, revalidated
	// before each reuse.
	w := send(h, "GET", "/v1/videos/"+id+"/content", "")
	for _, k := range []string{"Content-Type", "X-Content-Type-Options", "Content-Security-Policy", "Cache-Control"} {
		fmt.Printf("%s: %s\n", k, w.Header().Get(k))
	}
	// A range outside the video: 416 in the content-download shape.
	r := httptest.NewRequest("GET", "/v1/videos/"+id+"/content", nil)
	r.Header.Set("Range", "bytes=999999999-")
	r = r.WithContext(auth.WithPrincipal(r.Context(), &auth.Principal{KeyID: "key_1", Owner: "acme"}))
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var e struct{ Error struct{ Code string } }
	_ = json.Unmarshal(w.Body.Bytes(), &e)
	fmt.Println(w.Code, w.Header().Get("Content-Type"), e.Error.Code, strings.HasPrefix(w.Header().Get("Content-Range"), "bytes */"))
	// Output:
	// Content-Type: video/mp4
	// X-Content-Type-Options: nosniff
	// Content-Security-Policy: sandbox
	// Cache-Control: private, no-cache
	// 416 application/json range_not_satisfiable true
}

// fileServer is an http.RoundTripper that answers from a handler, so that
// the example needs no network.
type fileServer struct{ h http.Handler }

func (f fileServer) RoundTrip(r *http.Request) (*http.Response, error) {
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	return w.Result(), nil
}

func ExampleWithContentProxy() {
	dir, _ := tempDir()
	defer removeAll(dir)
	// Results are published by a CDN at https://cdn.example.com/media.
	contents, _ := videos.NewURLStore(dir, "https://cdn.example.com/media")
	cdn := &http.Client{Transport: fileServer{http.StripPrefix("/media/", http.FileServer(http.Dir(dir)))}}

	store := videos.NewMemoryStore(nil)
	catalog := models.NewMemoryCatalog(demo.VideoModels()...)
	rn := runner.New(store, demo.NewVideoGenerator(demo.WithVideoDuration(0)), contents)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = rn.Run(ctx) }()

	redirecting := videos.NewHandler(store, catalog, contents, videos.WithNotify(rn.Wake))
	streaming := videos.NewHandler(store, catalog, contents, videos.WithContentProxy(cdn))

	id := idOf(send(redirecting, "POST", "/v1/videos", `{"model":"demo-video","prompt":"a kite","size":"1280x720","seconds":4}`))
	waitFor(store, id)

	w := send(redirecting, "GET", "/v1/videos/"+id+"/content", "")
	fmt.Println(w.Code, strings.Replace(w.Header().Get("Location"), id, "task_…", 1))
	w = send(streaming, "GET", "/v1/videos/"+id+"/content", "")
	fmt.Println(w.Code, w.Header().Get("Content-Type"), w.Body.String()[4:8])
	// Output:
	// 301 https://cdn.example.com/media/task_…/video.mp4
	// 200 video/mp4 ftyp
}

func ExampleWithPollAfter() {
	store := videos.NewMemoryStore(nil)
	catalog := models.NewMemoryCatalog(demo.VideoModels()...)
	h := videos.NewHandler(store, catalog, videos.NewMemoryContentStore(nil), videos.WithPollAfter(5*time.Second))

	id := idOf(send(h, "POST", "/v1/videos", `{"model":"demo-video","prompt":"x","size":"1280x720"}`))
	w := send(h, "GET", "/v1/videos/"+id, "")
	fmt.Println(w.Header().Get("openai-poll-after-ms"))
	// Output:
	// 5000
}

func ExampleWithPublicURL() {
	store, contents := videos.NewMemoryStore(nil), videos.NewMemoryContentStore(nil)
	catalog := models.NewMemoryCatalog(demo.VideoModels()...)
	rn := runner.New(store, demo.NewVideoGenerator(demo.WithVideoDuration(0)), contents)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = rn.Run(ctx) }()
	h := videos.NewHandler(store, catalog, contents,
		videos.WithPublicURL("https://api.example.com"), videos.WithNotify(rn.Wake))

	id := idOf(send(h, "POST", "/v1/videos", `{"model":"demo-video","prompt":"x","size":"1280x720"}`))
	waitFor(store, id)
	var v videos.Video
	_ = json.Unmarshal(send(h, "GET", "/v1/videos/"+id, "").Body.Bytes(), &v)
	fmt.Println(strings.ReplaceAll(v.Metadata.URL, id, "task_…"))
	fmt.Println(strings.ReplaceAll(v.Metadata.ThumbnailURL, id, "task_…"))
	// Output:
	// https://api.example.com/v1/videos/task_…/content
	// https://api.example.com/v1/videos/task_…/content?variant=thumbnail
}

func ExampleWithMaxExtraBytes() {
	catalog := models.NewMemoryCatalog(demo.VideoModels()...)
	h := videos.NewHandler(videos.NewMemoryStore(nil), catalog, videos.NewMemoryContentStore(nil),
		videos.WithMaxExtraBytes(100))

	// Fields the request types do not model are kept with the task, up to
	// the limit in all; a request over it is refused and nothing is kept.
	w := send(h, "POST", "/v1/videos", `{"model":"demo-video","prompt":"x","size":"1280x720","user":"ada"}`)
	fmt.Println(w.Code)
	w = send(h, "POST", "/v1/videos", `{"model":"demo-video","prompt":"x","size":"1280x720","metadata":{"note":"`+strings.Repeat("x", 200)+`"}}`)
	fmt.Println(w.Code, w.Body.String())
	// Output:
	// 200
	// 400 {"code":"invalid_request","message":"the fields this gateway does not model (the largest is \"metadata\", 219 bytes) take 219 bytes, more than the 100 bytes limit","error":{"message":"the fields this gateway does not model (the largest is \"metadata\", 219 bytes) take 219 bytes, more than the 100 bytes limit","type":"invalid_request_error","param":"metadata","code":"invalid_request"}}
}

func ExampleNewMemoryStore() {
	// Finished tasks are evicted an hour after they finish, or when the
	// store holds more than 1000 tasks; queued and running ones never are.
	store := videos.NewMemoryStore(&videos.MemoryStoreOptions{MaxTasks: 1000, MaxAge: time.Hour})
	contents := videos.NewMemoryContentStore(&videos.MemoryContentStoreOptions{MaxTasks: 1000, MaxAge: time.Hour})
	h := videos.NewHandler(store, models.NewMemoryCatalog(demo.VideoModels()...), contents)
	w := send(h, "POST", "/v1/videos", `{"model":"demo-video","prompt":"x","size":"1280x720"}`)
	fmt.Println(w.Code, store.Len())
	// Output:
	// 200 1
}

func tempDir() (string, error) { return os.MkdirTemp("", "videos-example-") }

func removeAll(dir string) { _ = os.RemoveAll(dir) }

func ExampleWithPricing() {
	ctx := context.Background()
	keys := auth.NewMemoryKeyStore()
	const secret = "sk-example0123456789abcdefABCDEF"
	_ = keys.Add(ctx, secret, auth.Key{ID: "key_1", Owner: "acme", Quota: auth.LimitedQuota(10_000)})

	store, contents := videos.NewMemoryStore(nil), videos.NewMemoryContentStore(nil)
	catalog := models.NewMemoryCatalog(demo.VideoModels()...)
	// 500 units of quota a second of demo-video, the default for others.
	price := func(model string) int64 {
		if model == "demo-video" {
			return 500
		}
		return videos.DefaultPricePerSecond
	}
	h := auth.Middleware(keys)(videos.NewHandler(store, catalog, contents, videos.WithPricing(price)))
	create := func() string {
		r := httptest.NewRequest("POST", "/v1/videos", strings.NewReader(`{"model":"demo-video","prompt":"a lighthouse","size":"1280x720","seconds":8}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+secret)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var v struct{ Status, Code string }
		_ = json.Unmarshal(w.Body.Bytes(), &v)
		return fmt.Sprint(w.Code, " ", v.Status, v.Code)
	}
	quota := func() auth.Quota { k, _ := keys.Lookup(ctx, secret); return k.Quota }

	// Creating an 8-second video reserves 8 × 500 of the key's 10 000.
	fmt.Println(create())
	fmt.Printf("%+v\n", quota())

	// The runner charges the reservation when the task completes.
	rn := runner.New(store, demo.NewVideoGenerator(demo.WithVideoDuration(0)), contents,
		runner.WithKeyStore(keys), runner.WithPollInterval(time.Millisecond))
	go rn.Run(ctx)
	for quota().Reserved > 0 {
		time.Sleep(time.Millisecond)
	}
	_ = rn.Shutdown(ctx)
	fmt.Printf("%+v\n", quota())

	// Two more fit in what is left (the second finds 2000 unreserved
	// and reserves 4000); a third finds nothing unreserved.
	fmt.Println(create())
	fmt.Println(create())
	fmt.Println(create())
	// Output:
	// 200 queued
	// {Unlimited:false Remaining:10000 Reserved:4000 Used:0 BudgetUSD:0 CostUSD:0}
	// {Unlimited:false Remaining:6000 Reserved:0 Used:4000 BudgetUSD:0 CostUSD:0}
	// 200 queued
	// 200 queued
	// 403 insufficient_quota
}
