package relay_test

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
)

var updateAccess = flag.Bool("update-access", false, "update the golden files of testdata/access")

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

func (f *fakeUpstream) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
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

// serveAccessCatalog is serveAccess with the catalogue given.
func serveAccessCatalog(t testing.TB, r *relay.Relay, catalog []models.Model, opts ...relay.AccessOption) *httptest.Server {
	t.Helper()
	srv, _ := serveAccessCatalogKeys(t, r, catalog, opts...)
	return srv
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

// post sends a request to the gateway with the header set.
func (g *accessGateway) post(t *testing.T, path, contentType string, body io.Reader, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, g.srv.URL+path, body)
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { res.Body.Close() })
	return res
}

func readAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	return b
}

// goldenAccess compares a JSON body with testdata/access/name.
func goldenAccess(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "access", name)
	if *updateAccess {
		var v any
		require.NoError(t, json.Unmarshal(got, &v), "body: %s", got)
		pretty, err := json.MarshalIndent(v, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, append(pretty, '\n'), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	var wantV, gotV any
	require.NoError(t, json.Unmarshal(want, &wantV))
	require.NoError(t, json.Unmarshal(got, &gotV), "body: %s", got)
	if diff := cmp.Diff(wantV, gotV); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

// jsonEqual asserts that two JSON texts hold the same value.
func jsonEqual(t *testing.T, want string, got []byte) {
	t.Helper()
	var w, g any
	require.NoError(t, json.Unmarshal([]byte(want), &w))
	require.NoError(t, json.Unmarshal(got, &g), "body: %s", got)
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("JSON mismatch (-want +got):\n%s", diff)
	}
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
