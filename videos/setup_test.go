package videos_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/runner"
)

var update = flag.Bool("update", false, "update the golden files under testdata")

// The API keys of the tests. alice and alice2 belong to the same account.
const (
	keyAlice  = "sk-test-alice-0123456789abcdef"
	keyAlice2 = "sk-test-alice2-0123456789abcdef"
	keyBob    = "sk-test-bob-0123456789abcdef"
)

// The models of the handler tests.
const (
	modelFirstKind = "first-kind"   // seconds 4..20, four sizes, size required
	modelMulti     = "multi"        // every mode, both resolutions, any duration
	modelT2VOnly   = "t2v-only"     // the multimodal path in t2v only
	modelShort     = "short-prompt" // prompts of at most 10 characters
	modelChat      = "chat"         // not a video model
)

func testCatalog() *models.MemoryCatalog {
	list := append(demo.VideoModels(),
		models.Model{ID: modelFirstKind, EndpointTypes: []models.EndpointType{models.CompatVideo}, Video: &models.VideoCapabilities{
			Seconds: models.FirstKindSeconds(), Sizes: []string{"1280x720", "720x1280", "1792x1024", "1024x1792"}, SizeRequired: true,
		}, Pricing: &models.Pricing{PerSecond: 0.05}},
		models.Model{ID: modelMulti, EndpointTypes: []models.EndpointType{models.CompatVideo}, Video: &models.VideoCapabilities{DefaultSeconds: 5}},
		models.Model{ID: modelT2VOnly, EndpointTypes: []models.EndpointType{models.CompatVideo}, Video: &models.VideoCapabilities{
			Modes: []models.VideoMode{models.ModeT2V}, Seconds: []int{5, 10}, Resolutions: []string{models.Resolution720p},
		}},
		models.Model{ID: modelShort, EndpointTypes: []models.EndpointType{models.CompatVideo}, Video: &models.VideoCapabilities{MaxPromptChars: 10}},
		models.Model{ID: modelChat, EndpointTypes: []models.EndpointType{models.Compat}},
	)
	return models.NewMemoryCatalog(list...)
}

// testBundle is a gateway serving the video routes behind the auth
// middleware: API keys everywhere, and also a console session (cookie
// console_session=<account>) on the content route.
type testBundle struct {
	store    *videos.MemoryStore
	contents videos.ContentStore
	server   *httptest.Server
	now      time.Time
}

type bundleOptions struct {
	contents videos.ContentStore
	handler  []videos.Option
	// runner starts a Runner with the demo generator (instant) and wakes
	// it at each creation.
	runner bool
	// mux lets a test add routes to the server (a same-origin "CDN").
	mux func(mux *http.ServeMux)
}

func setup(t *testing.T, bo bundleOptions) *testBundle {
	t.Helper()
	ctx := context.Background()
	keys := auth.NewMemoryKeyStore()
	for secret, k := range map[string]auth.Key{
		keyAlice:  {ID: "key_alice", Owner: "alice"},
		keyAlice2: {ID: "key_alice2", Owner: "alice"},
		keyBob:    {ID: "key_bob", Owner: "bob"},
	} {
		k.Quota = auth.UnlimitedQuota()
		require.NoError(t, keys.Add(ctx, secret, k))
	}
	sessions := auth.SessionAuthenticatorFunc(func(r *http.Request) (*auth.Principal, error) {
		c, err := r.Cookie("console_session")
		if err != nil {
			return nil, nil
		}
		return &auth.Principal{KeyID: "console-" + c.Value, Owner: c.Value}, nil
	})

	b := &testBundle{store: videos.NewMemoryStore(nil), contents: bo.contents, now: time.Unix(1748779200, 0)}
	if b.contents == nil {
		b.contents = videos.NewMemoryContentStore(nil)
	}
	opts := append([]videos.Option{videos.WithClock(func() time.Time { return b.now })}, bo.handler...)
	if bo.runner {
		r := runner.New(b.store, demo.NewVideoGenerator(demo.WithVideoDuration(0)), b.contents,
			runner.WithPollInterval(time.Hour), runner.WithWorkers(2))
		go func() { _ = r.Run(context.Background()) }()
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			require.NoError(t, r.Shutdown(ctx))
		})
		opts = append(opts, videos.WithNotify(r.Wake))
	}
	h := videos.NewHandler(b.store, testCatalog(), b.contents, opts...)
	mux := http.NewServeMux()
	if bo.mux != nil {
		bo.mux(mux)
	}
	for _, p := range videos.Patterns() {
		mux.Handle(p, auth.Middleware(keys)(h))
	}
	mux.Handle(videos.PatternContent, auth.Middleware(keys, auth.WithSessionAuthenticator(sessions))(h))
	b.server = httptest.NewServer(mux)
	t.Cleanup(b.server.Close)
	return b
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), "body: %s", r.body)
	return m
}

// do sends a request with key (if not empty) and returns the reply.
func (b *testBundle) do(t *testing.T, method, path, key, contentType string, body io.Reader, header ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, b.server.URL+path, body)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return reply{status: res.StatusCode, header: res.Header, body: data}
}

func (b *testBundle) postJSON(t *testing.T, path, key string, body any) reply {
	t.Helper()
	var r io.Reader
	switch v := body.(type) {
	case string:
		r = strings.NewReader(v)
	default:
		data, err := json.Marshal(v)
		require.NoError(t, err)
		r = bytes.NewReader(data)
	}
	return b.do(t, http.MethodPost, path, key, "application/json", r)
}

// formField is one part of a multipart body; a file when filename is set.
type formField struct {
	name, value, filename string
}

func multipartBody(t *testing.T, fields ...formField) (io.Reader, string) {
	t.Helper()
	body, ct := multipartBodyWith("", fields...)
	return bytes.NewReader(body), ct
}

// multipartBodyWith encodes fields with the given boundary (a random one
// if empty) and returns the body and its Content-Type.
func multipartBodyWith(boundary string, fields ...formField) ([]byte, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if boundary != "" {
		if err := mw.SetBoundary(boundary); err != nil {
			panic(err)
		}
	}
	for _, f := range fields {
		var (
			w   io.Writer
			err error
		)
		if f.filename != "" {
			w, err = mw.CreateFormFile(f.name, f.filename)
		} else {
			w, err = mw.CreateFormField(f.name)
		}
		if err != nil {
			panic(err)
		}
		if _, err := w.Write([]byte(f.value)); err != nil {
			panic(err)
		}
	}
	if err := mw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes(), mw.FormDataContentType()
}

func (b *testBundle) postForm(t *testing.T, key string, fields ...formField) reply {
	t.Helper()
	body, ct := multipartBody(t, fields...)
	return b.do(t, http.MethodPost, "/v1/videos", key, ct, body)
}

// create makes a task through the API and returns its id.
func (b *testBundle) create(t *testing.T, key string, body any) string {
	t.Helper()
	r := b.postJSON(t, "/v1/videos", key, body)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	return r.json(t)["id"].(string)
}

// claim takes the oldest queued task as a worker would.
func (b *testBundle) claim(t *testing.T) *videos.Task {
	t.Helper()
	task, err := b.store.Claim(context.Background(), videos.ClaimParams{Worker: "test", Now: b.now})
	require.NoError(t, err)
	return task
}

func (b *testBundle) update(t *testing.T, task *videos.Task, p videos.UpdateParams) {
	t.Helper()
	p.ID, p.Attempt, p.Now = task.ID, task.Attempts, b.now.Add(7*time.Second)
	_, err := b.store.Update(context.Background(), p)
	require.NoError(t, err)
}

// complete runs the oldest queued task to completion with a video and a
// thumbnail stored in the content store.
func (b *testBundle) complete(t *testing.T, thumbnail bool) *videos.Task {
	t.Helper()
	task := b.claim(t)
	ctx := context.Background()
	require.NoError(t, b.contents.Put(ctx, videos.PutParams{TaskID: task.ID, Variant: videos.VariantVideo, ContentType: "video/mp4", Data: []byte(fakeMP4)}))
	if thumbnail {
		require.NoError(t, b.contents.Put(ctx, videos.PutParams{TaskID: task.ID, Variant: videos.VariantThumbnail, ContentType: "image/png", Data: pngImage}))
	}
	seed := int64(1234)
	b.update(t, task, videos.UpdateParams{Complete: &videos.Completion{
		Metadata:     videos.Metadata{Duration: 8, Width: 1280, Height: 720, FPS: 24, Seed: &seed},
		HasThumbnail: thumbnail,
	}})
	return task
}

const fakeMP4 = "\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2 and then some video bytes"

// pngImage is a 1x1 PNG.
var pngImage = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")

var (
	reTaskID = regexp.MustCompile(`task_[A-Za-z0-9_-]+`)
	rePort   = regexp.MustCompile(`127\.0\.0\.1:\d+`)
)

// normalize replaces what changes from run to run in a JSON value: task
// ids and the test server's port.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	case string:
		return rePort.ReplaceAllString(reTaskID.ReplaceAllString(x, "task_ID"), "127.0.0.1:PORT")
	}
	return v
}

// golden compares a JSON body, normalized, with testdata/name.json.
func golden(t *testing.T, name string, body []byte) {
	t.Helper()
	var got any
	require.NoError(t, json.Unmarshal(body, &got), "body: %s", body)
	got = normalize(got)
	path := filepath.Join("testdata", name+".json")
	if *update {
		pretty, err := json.MarshalIndent(got, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, append(pretty, '\n'), 0o644))
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./videos -update to create it")
	var want any
	require.NoError(t, json.Unmarshal(data, &want))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func newRequest(method, path, body string) *http.Request {
	return httptest.NewRequest(method, path, strings.NewReader(body))
}

// wait receives from ch, failing t if nothing comes for a long while.
func wait[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatal("timed out waiting for the runner")
		panic("unreachable")
	}
}

// okResult is a generator's result with both media.
func okResult() *videos.Result {
	return &videos.Result{
		Video:     videos.Media{ContentType: "video/mp4", Data: []byte("mp4 bytes")},
		Thumbnail: &videos.Media{ContentType: "image/png", Data: []byte("png bytes")},
	}
}
