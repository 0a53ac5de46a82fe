package videos_test

// The declarations of this file are copies of package videos's own test
// helpers (videos/*_test.go), which the tests of this package share with
// the tests that stayed there. The test of package
// github.com/gatewaykit/gatewaykit/sdk/internal/copies checks that they
// are the same; go test ./sdk/internal/copies -update copies them again.

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/runner"
)

// cdn serves a directory as another origin would.
func cdn(t *testing.T, dir string) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.StripPrefix("/media/", http.FileServer(http.Dir(dir))))
	t.Cleanup(s.Close)
	return s
}

func dataURI(typ string, data []byte) string {
	return "data:" + typ + ";base64," + base64.StdEncoding.EncodeToString(data)
}

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

// pngImage is a 1x1 PNG.
var pngImage = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")

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
