package relay_test

// The declarations of this file are copies of package relay's own test
// helpers (relay/*_test.go), which the tests of this package share with
// the tests that stayed there. The test of package
// github.com/gatewaykit/gatewaykit/sdk/internal/copies checks that they
// are the same; go test ./sdk/internal/copies -update copies them again.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/sse"
	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/runner"
)

// The client keys of the access tests.
const (
	keyOK    = "sk-access-ok"
	keyBroke = "sk-access-broke" // zero quota: 403
	keyRate  = "sk-access-rate"  // one request a minute: the second is 429
	upKey    = "up-secret"       // the upstream's key

	keyMetered   = "sk-access-metered" // a quota of meteredQuota tokens
	meteredQuota = 1000
)

// upstreamCall is what the fake upstream received.
type upstreamCall struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
}

// fakeUpstream is an httptest upstream that records each call and answers
// with its handler (by default 200 {"ok":true}).
type fakeUpstream struct {
	srv     *httptest.Server
	mu      sync.Mutex
	calls   []upstreamCall
	handler http.HandlerFunc
}

func newFakeUpstream(t testing.TB, handler http.HandlerFunc) *fakeUpstream {
	t.Helper()
	f := &fakeUpstream{handler: handler}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.calls = append(f.calls, upstreamCall{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		f.mu.Unlock()
		if f.handler == nil {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"ok":true}`)
			return
		}
		f.handler(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeUpstream) lastCall(t *testing.T) upstreamCall {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	require.NotEmpty(t, f.calls, "the upstream was not called")
	return f.calls[len(f.calls)-1]
}

// accessModels are the catalogue of the access tests; each public model
// is relayed as "up-" + its id.
var accessModels = []models.Model{
	{ID: "embed-1", EndpointTypes: []models.EndpointType{models.Compat}},
	{ID: "chat-1", EndpointTypes: []models.EndpointType{models.Compat},
		Pricing: &models.Pricing{InputPerMillion: 1e6, OutputPerMillion: 2e6}}, // 1 and 2 USD a token
	{ID: "gem-1", EndpointTypes: []models.EndpointType{models.Compat}},
	{ID: "whisper-1", EndpointTypes: []models.EndpointType{models.Compat}},
	{ID: "resp-only", EndpointTypes: []models.EndpointType{models.CompatResponse}},
}

// accessGateway is the access handler over a relay to upstream, behind the
// auth middleware, served by an httptest server.
type accessGateway struct {
	srv      *httptest.Server
	upstream *fakeUpstream
}

func newAccessGateway(t testing.TB, up *fakeUpstream, opts ...relay.AccessOption) *accessGateway {
	t.Helper()
	var routes []relay.Route
	for _, m := range accessModels {
		routes = append(routes, relay.Route{Model: m.ID, Upstreams: []relay.Upstream{
			{BaseURL: up.srv.URL + "/v1", Key: upKey, Model: "up-" + m.ID},
		}})
	}
	r, err := relay.New(routes, relay.WithTimeouts(relay.Timeouts{Idle: 5 * time.Second}))
	require.NoError(t, err)
	return &accessGateway{srv: serveAccess(t, r, opts...), upstream: up}
}

func serveAccess(t testing.TB, r *relay.Relay, opts ...relay.AccessOption) *httptest.Server {
	t.Helper()
	srv, _ := serveAccessKeys(t, r, opts...)
	return srv
}

// serveAccessKeys is serveAccess, and returns the key store too.
func serveAccessKeys(t testing.TB, r *relay.Relay, opts ...relay.AccessOption) (*httptest.Server, *auth.MemoryKeyStore) {
	t.Helper()
	return serveAccessCatalogKeys(t, r, accessModels, opts...)
}

func serveAccessCatalogKeys(t testing.TB, r *relay.Relay, catalog []models.Model, opts ...relay.AccessOption) (*httptest.Server, *auth.MemoryKeyStore) {
	t.Helper()
	keys := auth.NewMemoryKeyStore()
	ctx := context.Background()
	require.NoError(t, keys.Add(ctx, keyOK, auth.Key{ID: "ok", Quota: auth.UnlimitedQuota()}))
	require.NoError(t, keys.Add(ctx, keyBroke, auth.Key{ID: "broke", Quota: auth.LimitedQuota(0)}))
	one := auth.PerMinute(1)
	require.NoError(t, keys.Add(ctx, keyRate, auth.Key{ID: "rate", Quota: auth.UnlimitedQuota(), RateLimit: &one}))
	require.NoError(t, keys.Add(ctx, keyMetered, auth.Key{ID: "metered", Quota: auth.LimitedQuota(meteredQuota)}))

	mux := http.NewServeMux()
	relay.RegisterAccess(mux, relay.NewAccessHandler(r, models.NewMemoryCatalog(catalog...), opts...))
	// A stopped clock keeps the rate limiter's messages the same from run
	// to run, for the golden files.
	stopped := func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
	srv := httptest.NewServer(auth.Middleware(keys, auth.WithErrorShape(apierrors.ShapeFor),
		auth.WithLimiter(auth.NewMemoryLimiter(&auth.MemoryLimiterOptions{Now: stopped})))(mux))
	t.Cleanup(srv.Close)
	return srv, keys
}

func readAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	return b
}

// noClientKey asserts that no header of an upstream call carries a client
// key.
func noClientKey(t *testing.T, c upstreamCall) {
	t.Helper()
	for k, vs := range c.Header {
		for _, v := range vs {
			require.False(t, strings.Contains(v, "sk-access"), "header %s carries the client's key", k)
		}
	}
	require.NotContains(t, c.Query, "sk-access", "the query carries the client's key")
}

// formPart is one part of a multipart body, as an upstream received it.
type receivedPart struct {
	Name, FileName, ContentType string
	Data                        []byte
}

func parseParts(t *testing.T, contentType string, body []byte) []receivedPart {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	mr, err := req.MultipartReader()
	require.NoError(t, err)
	var parts []receivedPart
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return parts
		}
		require.NoError(t, err)
		parts = append(parts, receivedPart{p.FormName(), p.FileName(), p.Header.Get("Content-Type"), readAll(t, p)})
	}
}

// audio returns n bytes of a repeating, position-dependent pattern.
func audio(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// upstreamSaw returns the JSON body that the upstream received last.
func upstreamSaw(t *testing.T, g *gateway) map[string]json.RawMessage {
	t.Helper()
	last := g.up.Last()
	require.NotNil(t, last)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(last.Body, &m))
	return m
}

// quota is the budget of the test key; charges are read off it.
const quota = 1_000_000

// The client's key: it must never reach the upstream.
const clientKey = "sk-client-test-key"

// The upstream's key.
const upstreamKey = "sk-upstream-test-key"

// gateway is a gateway in front of a fake upstream: auth middleware with
// one key, ForwardHeaders, and the chat and completions handlers with the
// relay's backends. The public model "pub-<mode>" is relayed to the
// upstream model "<mode>" (see relaytest's modes).
type gateway struct {
	up    *relaytest.Upstream
	relay *relay.Relay
	srv   *httptest.Server
	keys  *auth.MemoryKeyStore
	tasks *videos.MemoryStore

	// served is closed-and-replaced per request: wait on done() to know
	// the gateway's handler has returned (and charged).
	mu     sync.Mutex
	served []chan struct{}
}

var modes = []string{
	relaytest.ModeOK, relaytest.ModeSlow, relaytest.ModeTools, relaytest.ModeNoUsage, relaytest.ModeDie,
	relaytest.ModeNoDone, relaytest.ModeHang, relaytest.ModeHangMidStream, relaytest.ModeMalformedJSON,
	relaytest.ModeMalformedSSE, relaytest.ModeErrorEvent, relaytest.ModeStatus400, relaytest.ModeStatus401,
	relaytest.ModeStatus429, relaytest.ModeStatus500,
	relaytest.ModeVideoFail, relaytest.ModeVideoRedirect, relaytest.ModeVideoNoThumbnail, relaytest.ModeIncomplete,
	relaytest.ModeVideoSizeRequired, relaytest.ModeVideoUnknownModel, relaytest.ModeVideoLeak, relaytest.ModeVideoScript,
	relaytest.ModeVideoRedirectScript,
	relaytest.ModeStatus403, relaytest.ModeReasoning, relaytest.ModeReasoningAtDone, relaytest.ModeNotAResponse, relaytest.ModeErrorObject,
	relaytest.ModeDetails,
}

func newGateway(t *testing.T, setup func(up *relaytest.Upstream), opts ...relay.Option) *gateway {
	t.Helper()
	up := relaytest.NewUpstream()
	t.Cleanup(up.Close)
	up.Key = upstreamKey
	if setup != nil {
		setup(up)
	}
	var routes []relay.Route
	var list []models.Model
	for _, m := range modes {
		routes = append(routes, relay.Route{Model: "pub-" + m, Upstreams: []relay.Upstream{{BaseURL: up.BaseURL(), Key: upstreamKey, Model: m}}})
		list = append(list, models.Model{ID: "pub-" + m, EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse, models.CompatVideo}})
	}
	r, err := relay.New(routes, append([]relay.Option{relay.WithPollInterval(5 * time.Millisecond)}, opts...)...)
	require.NoError(t, err)
	keys := auth.NewMemoryKeyStore()
	require.NoError(t, keys.Add(t.Context(), clientKey, auth.Key{ID: "key_test", Quota: auth.LimitedQuota(quota)}))
	catalog := models.NewMemoryCatalog(list...)
	g := &gateway{up: up, relay: r, keys: keys}
	mux := http.NewServeMux()
	chat.Register(mux, chat.NewHandler(catalog, r.Chat()))
	completions.Register(mux, completions.NewHandler(catalog, r.Completions()))
	responses.Register(mux, responses.NewHandler(catalog, r.Responses()))
	g.mountVideos(t, mux, catalog)
	g.srv = httptest.NewServer(auth.Middleware(keys)(relay.ForwardHeaders(g.track(mux))))
	t.Cleanup(g.srv.Close)
	return g
}

// mountVideos mounts the video routes, with a runner whose generator is
// the relay's, which also creates each task upstream before the create
// request is answered (videos.WithSubmitter).
func (g *gateway) mountVideos(t *testing.T, mux *http.ServeMux, catalog models.Catalog, opts ...videos.Option) {
	store := videos.NewMemoryStore(nil)
	contents := videos.NewMemoryContentStore(nil)
	rn := runner.New(store, g.relay.Videos(), contents, runner.WithPollInterval(time.Hour), runner.WithWorkers(2))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = rn.Run(ctx) }()
	t.Cleanup(func() {
		ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		require.NoError(t, rn.Shutdown(ctx))
		cancel()
	})
	g.tasks = store
	sub := g.relay.Videos().(videos.Submitter)
	h := videos.NewHandler(store, catalog, contents, append([]videos.Option{videos.WithNotify(rn.Wake), videos.WithSubmitter(sub)}, opts...)...)
	for _, p := range append(videos.Patterns(), videos.PatternContent) {
		mux.Handle(p, h)
	}
}

// track records the end of each request the gateway serves.
func (g *gateway) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		done := make(chan struct{})
		g.mu.Lock()
		g.served = append(g.served, done)
		g.mu.Unlock()
		defer close(done)
		next.ServeHTTP(w, r)
	})
}

// events reads a whole SSE stream: the data of each event, and the read
// error, if any.
func events(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	for ev, err := range sse.Read(r) {
		require.NoError(t, err)
		out = append(out, ev.Data)
	}
	return out
}

// kitServer is a gatewaykit server as the example server builds it (auth,
// chat, completions, responses, videos with a runner), answering only
// key, on the backends given: the demo's for the upstream of the
// end-to-end test, the relay's for the gateway in front of it.
func kitServer(t *testing.T, key string, catalog models.Catalog, text chat.Backend, comp completions.Backend, resp responses.Backend, gen videos.Generator) *httptest.Server {
	t.Helper()
	keys := auth.NewMemoryKeyStore()
	require.NoError(t, keys.Add(t.Context(), key, auth.Key{ID: "key_e2e", Quota: auth.UnlimitedQuota()}))
	mux := http.NewServeMux()
	chat.Register(mux, chat.NewHandler(catalog, text))
	completions.Register(mux, completions.NewHandler(catalog, comp))
	responses.Register(mux, responses.NewHandler(catalog, resp))
	store, contents := videos.NewMemoryStore(nil), videos.NewMemoryContentStore(nil)
	rn := runner.New(store, gen, contents, runner.WithPollInterval(time.Hour), runner.WithWorkers(2))
	go func() { _ = rn.Run(context.Background()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rn.Shutdown(ctx)
	})
	opts := []videos.Option{videos.WithNotify(rn.Wake)}
	if s, ok := gen.(videos.Submitter); ok {
		opts = append(opts, videos.WithSubmitter(s))
	}
	vh := videos.NewHandler(store, catalog, contents, opts...)
	for _, p := range append(videos.Patterns(), videos.PatternContent) {
		mux.Handle(p, vh)
	}
	srv := httptest.NewServer(auth.Middleware(keys)(relay.ForwardHeaders(mux)))
	t.Cleanup(srv.Close)
	return srv
}

// reasoningText is the gateway's summary of ModeReasoning's reasoning
// item: the upstream's parts, one blank line apart.
var reasoningText = strings.Join(relaytest.ReasoningSummary, "\n\n")

// requireNoTasks checks that the gateway stored no task.
func (g *gateway) requireNoTasks(t *testing.T) {
	t.Helper()
	require.Zero(t, g.tasks.Len(), "a refused creation stores no task")
}
