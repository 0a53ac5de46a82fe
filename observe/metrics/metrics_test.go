package metrics_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/observe/metrics"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
	"github.com/gatewaykit/gatewaykit/videos"
)

// settlingChat is the demo chat backend whose replies report 3 input
// and 5 output tokens, which the chat handler settles against the
// request's key and adds to the request's telemetry.Info. It has no
// Stream method: the handler streams its whole reply too.
type settlingChat struct{ chat.Backend }

func (b settlingChat) Complete(ctx context.Context, p *chat.Params) (*chat.Result, error) {
	res, err := b.Backend.Complete(ctx, p)
	if err == nil {
		res.Usage = chat.Usage{PromptTokens: 3, CompletionTokens: 5}
	}
	return res, err
}

type bundle struct {
	api, admin *httptest.Server
}

// setup serves the demo gateway behind the metrics middleware, with a
// relayed model whose first upstream is down, and the metrics on a
// server of their own.
func setup(t *testing.T) *bundle {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)

	down := relaytest.NewUpstream()
	down.SetDown(true)
	t.Cleanup(down.Close)
	up := relaytest.NewUpstream()
	t.Cleanup(up.Close)
	rl, err := relay.New([]relay.Route{{Model: "relayed", Upstreams: []relay.Upstream{
		{Name: "down", BaseURL: down.BaseURL(), Model: relaytest.ModeOK},
		{Name: "up", BaseURL: up.BaseURL(), Model: relaytest.ModeDetails},
	}}}, relay.WithAttemptObserver(m.ObserveAttempt))
	require.NoError(t, err)

	f := gateway.DemoFile()
	keys, err := gateway.NewKeyStore(context.Background(), f.Keys)
	require.NoError(t, err)
	text := demo.NewTextBackend()
	g, err := gateway.New(gateway.Config{
		Keys:        keys,
		Catalog:     models.NewMemoryCatalog(append(f.Models, models.Model{ID: "relayed", OwnedBy: "test", EndpointTypes: []models.EndpointType{models.Compat}})...),
		Chat:        settlingChat{text.Chat()},
		Completions: text.Completions(),
		Videos:      demo.NewVideoGenerator(),
		Tasks:       m.Tasks(videos.NewMemoryStore(nil)),
		Relay:       rl,
	})
	require.NoError(t, err)
	b := &bundle{api: httptest.NewServer(m.Middleware(g))}
	t.Cleanup(b.api.Close)
	admin := http.NewServeMux()
	admin.Handle(metrics.Pattern, metrics.Handler(reg))
	b.admin = httptest.NewServer(admin)
	t.Cleanup(b.admin.Close)
	return b
}

func (b *bundle) post(t *testing.T, path, key, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", b.api.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(out)
}

// scrape returns the metric families that GET /metrics serves.
func (b *bundle) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get(b.admin.URL + "/metrics")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(res.Body)
	require.NoError(t, err)
	return mfs
}

// find returns the metric of family name whose labels are labels
// ("k=v" pairs, all of its labels), or nil.
func find(mfs map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	mf := mfs[name]
	if mf == nil {
		return nil
	}
	for _, m := range mf.Metric {
		if len(m.Label) != len(labels) {
			continue
		}
		ok := true
		for _, l := range m.Label {
			want := l.GetName() + "=" + l.GetValue()
			found := false
			for _, w := range labels {
				found = found || w == want
			}
			ok = ok && found
		}
		if ok {
			return m
		}
	}
	return nil
}

func counter(t *testing.T, mfs map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	m := find(mfs, name, labels...)
	require.NotNil(t, m, "no series %s%v", name, labels)
	return m.GetCounter().GetValue()
}

func TestScrapeAfterAChatRequestAndAStream(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const chatRoute = "route=POST /v1/chat/completions"

	status, body := b.post(t, "/v1/chat/completions", "sk-demo", `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`)
	require.Equal(t, 200, status, body)
	status, body = b.post(t, "/v1/chat/completions", "sk-demo", `{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	require.Equal(t, 200, status, body)
	require.Contains(t, body, "data: [DONE]")
	status, body = b.post(t, "/v1/chat/completions", "sk-demo", `{"model":"relayed","messages":[{"role":"user","content":"hi"}]}`)
	require.Equal(t, 200, status, body)
	status, _ = b.post(t, "/v1/chat/completions", "sk-demo-empty", `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`)
	require.Equal(t, 403, status)
	status, _ = b.post(t, "/v1/chat/completions", "sk-demo", `{"model":"made-up","messages":[{"role":"user","content":"hi"}]}`)
	require.Equal(t, 404, status)
	status, body = b.post(t, "/v1/videos", "sk-demo", `{"model":"demo-video","prompt":"a kite","seconds":"4","size":"1280x720"}`)
	require.Equal(t, 200, status, body)

	mfs := b.scrape(t)
	require.Equal(t, 2.0, counter(t, mfs, "gatewaykit_requests_total", chatRoute, "model=demo-chat", "status=200"))
	require.Equal(t, 1.0, counter(t, mfs, "gatewaykit_requests_total", chatRoute, "model=relayed", "status=200"))
	require.Equal(t, 1.0, counter(t, mfs, "gatewaykit_requests_total", chatRoute, "model=", "status=403"))
	require.Equal(t, 1.0, counter(t, mfs, "gatewaykit_requests_total", chatRoute, "model=", "status=404"),
		"a model the catalogue does not know is no label")
	require.Nil(t, find(mfs, "gatewaykit_requests_total", chatRoute, "model=made-up", "status=404"))
	require.Equal(t, 1.0, counter(t, mfs, "gatewaykit_requests_total", "route=POST /v1/videos", "model=demo-video", "status=200"))

	lat := find(mfs, "gatewaykit_request_duration_seconds", chatRoute, "model=demo-chat")
	require.NotNil(t, lat)
	require.Equal(t, uint64(2), lat.GetHistogram().GetSampleCount())
	ttft := find(mfs, "gatewaykit_time_to_first_token_seconds", chatRoute, "model=demo-chat")
	require.NotNil(t, ttft)
	require.Equal(t, uint64(1), ttft.GetHistogram().GetSampleCount(), "only the stream has a time to first token")
	require.LessOrEqual(t, ttft.GetHistogram().GetSampleSum(), lat.GetHistogram().GetSampleSum())
	require.Equal(t, 0.0, find(mfs, "gatewaykit_open_streams").GetGauge().GetValue(), "the stream has ended")

	// The tokens that the handler settled for the two demo-chat
	// requests, once each: settlingChat's usage.
	require.Equal(t, 6.0, counter(t, mfs, "gatewaykit_tokens_total", "model=demo-chat", "direction=input"))
	require.Equal(t, 10.0, counter(t, mfs, "gatewaykit_tokens_total", "model=demo-chat", "direction=output"))

	// The relayed upstream reports cached and reasoning tokens: parts of
	// its input and output, counted apart (issue 26).
	require.Equal(t, float64(relaytest.PromptTokens), counter(t, mfs, "gatewaykit_tokens_total", "model=relayed", "direction=input"))
	require.Equal(t, float64(relaytest.CachedTokens), counter(t, mfs, "gatewaykit_token_details_total", "model=relayed", "detail=cached"))
	require.Equal(t, float64(relaytest.ReasoningTokens), counter(t, mfs, "gatewaykit_token_details_total", "model=relayed", "detail=reasoning"))
	require.Equal(t, 0.0, counter(t, mfs, "gatewaykit_token_details_total", "model=relayed", "detail=cache_write"))
	require.Equal(t, 0.0, counter(t, mfs, "gatewaykit_token_details_total", "model=demo-chat", "detail=cached"))

	require.Equal(t, 1.0, counter(t, mfs, "gatewaykit_refused_requests_total", "reason=quota"))
	require.Equal(t, 1.0, counter(t, mfs, "gatewaykit_upstream_requests_total", "upstream=down", "status=error"))
	require.Equal(t, 1.0, counter(t, mfs, "gatewaykit_upstream_failovers_total", "upstream=down"))
	require.Equal(t, 1.0, counter(t, mfs, "gatewaykit_upstream_requests_total", "upstream=up", "status=200"))
	require.Nil(t, find(mfs, "gatewaykit_upstream_failovers_total", "upstream=up"))
	require.Equal(t, uint64(1), find(mfs, "gatewaykit_upstream_duration_seconds", "upstream=up").GetHistogram().GetSampleCount())
	require.Equal(t, 1.0, counter(t, mfs, "gatewaykit_video_tasks_total", "status=queued"))
	require.Equal(t, 1.0, find(mfs, "gatewaykit_video_queue_depth").GetGauge().GetValue())

	// No secret and no key id is a label.
	res, err := http.Get(b.admin.URL + "/metrics")
	require.NoError(t, err)
	text, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.NotContains(t, string(text), "sk-demo")
	require.NotContains(t, string(text), "key_id")
}

// TestOpenStreamsWhileAStreamIsOpen: a stream counts as open from its
// headers until its request ends.
func TestOpenStreamsWhileAStreamIsOpen(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	opened := make(chan struct{})
	release := make(chan struct{})
	h := m.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		io.WriteString(w, "data: {}\n\n")
		w.(http.Flusher).Flush()
		close(opened)
		<-release
	}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	}()
	<-opened
	gauge := func() float64 {
		mfs, err := reg.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			if mf.GetName() == "gatewaykit_open_streams" {
				return mf.Metric[0].GetGauge().GetValue()
			}
		}
		return -1
	}
	require.Equal(t, 1.0, gauge())
	close(release)
	<-done
	require.Equal(t, 0.0, gauge())
}

// TestTimeToFirstTokenSkipsComments: a stream's time to first token runs
// to its first event; a keep-alive comment before it does not count.
func TestTimeToFirstTokenSkipsComments(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	// In a bubble, time moves only when the handler sleeps: the request
	// arrives at 0, the comment goes out at 5s, the first event at 7s.
	synctest.Test(t, func(t *testing.T) {
		m := metrics.New(reg)
		h := m.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			time.Sleep(5 * time.Second)
			io.WriteString(w, ": keep-alive\n\n")
			time.Sleep(2 * time.Second)
			io.WriteString(w, "data: {}\n\n")
			time.Sleep(2 * time.Second)
		}))
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	})

	require.NoError(t, testutil.CollectAndCompare(reg, strings.NewReader(`
# HELP gatewaykit_time_to_first_token_seconds Time from a streamed request's arrival to the first byte of its stream's body.
# TYPE gatewaykit_time_to_first_token_seconds histogram
gatewaykit_time_to_first_token_seconds_bucket{model="",route="",le="0.005"} 0
gatewaykit_time_to_first_token_seconds_bucket{model="",route="",le="0.01"} 0
gatewaykit_time_to_first_token_seconds_bucket{model="",route="",le="0.025"} 0
gatewaykit_time_to_first_token_seconds_bucket{model="",route="",le="0.05"} 0
gatewaykit_time_to_first_token_seconds_bucket{model="",route="",le="0.1"} 0
gatewaykit_time_to_first_token_seconds_bucket{model="",route="",le="0.25"} 0
gatewaykit_time_to_first_token_seconds_bucket{model="",route="",le="0.5"} 0
gatewaykit_time_to_first_token_seconds_bucket{model="",route="",le="1"} 0
gatewaykit_time_to_first_token_seconds_bucket{model="",route="",le="2.5"} 0
gatewaykit_time_to_first_token_seconds_bucket{model="",route="",le="5"} 0
gatewaykit_time_to_first_token_seconds_bucket{model="",route="",le="10"} 1
gatewaykit_time_to_first_token_seconds_bucket{model="",route="",le="30"} 1
gatewaykit_time_to_first_token_seconds_bucket{model="",route="",le="60"} 1
gatewaykit_time_to_first_token_seconds_bucket{model="",route="",le="120"} 1
gatewaykit_time_to_first_token_seconds_bucket{model="",route="",le="+Inf"} 1
gatewaykit_time_to_first_token_seconds_sum{model="",route=""} 7
gatewaykit_time_to_first_token_seconds_count{model="",route=""} 1
`), "gatewaykit_time_to_first_token_seconds"))
}

// TestWithKeyIDs: with the option, requests and tokens are counted by
// key id too; without it, no series names a key (the scrape test).
func TestWithKeyIDs(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, metrics.WithKeyIDs())
	keys, err := gateway.NewKeyStore(context.Background(), gateway.DemoKeys())
	require.NoError(t, err)
	g, err := gateway.New(gateway.Config{
		Keys:    keys,
		Catalog: models.NewMemoryCatalog(gateway.DemoFile().Models...),
		Chat:    settlingChat{demo.NewTextBackend().Chat()},
	})
	require.NoError(t, err)
	api := httptest.NewServer(m.Middleware(g))
	t.Cleanup(api.Close)
	b := &bundle{api: api}
	for _, key := range []string{"sk-demo", "sk-demo-empty", "sk-unknown"} {
		b.post(t, "/v1/chat/completions", key, `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`)
	}
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP gatewaykit_key_requests_total Requests by API key id and HTTP status.
# TYPE gatewaykit_key_requests_total counter
gatewaykit_key_requests_total{key_id="key-demo",status="200"} 1
gatewaykit_key_requests_total{key_id="key-demo-empty",status="403"} 1
`), "gatewaykit_key_requests_total"))
	n, err := testutil.GatherAndCount(reg, "gatewaykit_key_tokens_total")
	require.NoError(t, err)
	require.Equal(t, 2, n, "input and output of key-demo")
}
