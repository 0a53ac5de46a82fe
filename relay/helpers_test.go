package relay_test

import (
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
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/sse"
	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/runner"
)

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

// waitServed waits until every request the gateway received has been
// served.
func (g *gateway) waitServed() {
	g.mu.Lock()
	served := append([]chan struct{}(nil), g.served...)
	g.mu.Unlock()
	for _, c := range served {
		<-c
	}
}

// charged returns the tokens charged to the test key so far, once every
// request has been served.
func (g *gateway) charged(t *testing.T) int64 {
	t.Helper()
	g.waitServed()
	k, err := g.keys.Lookup(t.Context(), clientKey)
	require.NoError(t, err)
	return quota - k.Quota.Remaining
}

// get sends a GET of path to the gateway with the client's key and
// headers (name, value, …), without following redirects.
func (g *gateway) get(t *testing.T, path string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, g.srv.URL+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+clientKey)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// post sends body to path on the gateway with the client's key and
// headers.
func (g *gateway) post(t *testing.T, path, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, g.srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+clientKey)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := g.srv.Client().Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// decode reads a JSON body into a generic value.
func decode(t *testing.T, r io.Reader) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.NewDecoder(r).Decode(&v))
	return v
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

// errorOf returns the "error" object of a JSON body or event.
func errorOf(t *testing.T, data string) map[string]any {
	t.Helper()
	var v struct {
		Error map[string]any `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(data), &v), data)
	require.NotNil(t, v.Error, data)
	return v.Error
}

// jsonEq asserts that two JSON documents are equal as values.
func jsonEq(t *testing.T, want, got []byte) {
	t.Helper()
	require.JSONEq(t, string(want), string(got))
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
