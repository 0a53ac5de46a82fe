package relay_test

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
)

// servedCall is what a fallback handler received.
type servedCall struct {
	path, model, contentType string
	body                     []byte
	form                     map[string]string // multipart fields and file contents
}

// recordingFallback is a fallback handler that records each request and
// answers 200 {"served":true}.
type recordingFallback struct {
	mu    sync.Mutex
	calls []servedCall
}

func (f *recordingFallback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c := servedCall{path: r.URL.Path, contentType: r.Header.Get("Content-Type"), body: body}
	if mt, params, err := mime.ParseMediaType(c.contentType); err == nil && mt == "multipart/form-data" {
		c.form = map[string]string{}
		mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			b, _ := io.ReadAll(p)
			c.form[p.FormName()] = string(b)
		}
	}
	f.mu.Lock()
	f.calls = append(f.calls, c)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"served":true}`)
}

func (f *recordingFallback) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func (f *recordingFallback) last(t *testing.T) servedCall {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	require.NotEmpty(t, f.calls, "the fallback was not called")
	return f.calls[len(f.calls)-1]
}

// TestAccessFallback checks which requests the access handler passes
// through and which it hands to the fallback of their access point: by
// whether the relay routes the model, and the API its upstreams speak.
func TestAccessFallback(t *testing.T) {
	t.Parallel()
	up := newFakeUpstream(t, nil)
	catalog := append([]models.Model{
		{ID: "local-1", EndpointTypes: []models.EndpointType{models.Compat}}, // in the catalogue, routed by no route
		{ID: "claude-1", EndpointTypes: []models.EndpointType{models.Compat}},
		{ID: "mixed-1", EndpointTypes: []models.EndpointType{models.Compat}},
	}, accessModels...)
	openai := relay.Upstream{BaseURL: up.srv.URL + "/v1", Key: upKey}
	anthropic := relay.Upstream{BaseURL: up.srv.URL + "/v1", Key: upKey, API: relay.APIAnthropic}
	r, err := relay.New([]relay.Route{
		{Model: "chat-1", Upstreams: []relay.Upstream{openai}},
		{Model: "claude-1", Upstreams: []relay.Upstream{anthropic}},
		{Model: "mixed-1", Upstreams: []relay.Upstream{anthropic, openai}},
	}, relay.WithTimeouts(relay.Timeouts{Idle: 5 * time.Second}))
	require.NoError(t, err)

	fallbacks := map[string]*recordingFallback{}
	var opts []relay.AccessOption
	for _, p := range relay.AccessPatterns() {
		fallbacks[p] = &recordingFallback{}
		opts = append(opts, relay.WithFallback(p, fallbacks[p]))
	}
	g := &accessGateway{srv: serveAccessCatalog(t, r, catalog, opts...), upstream: up}

	tests := []struct {
		name, path, model string
		pattern           string // the access point whose fallback serves it; "" when relayed
	}{
		{"an OpenAI-format access point for a model of an openai upstream is relayed", "/v1/embeddings", "chat-1", ""},
		{"an OpenAI-format access point for an unrouted model is served", "/v1/embeddings", "local-1", relay.PatternEmbeddings},
		{"an OpenAI-format access point for a model of an anthropic upstream is served", "/v1/moderations", "claude-1", relay.PatternModerations},
		{"the messages format for a model of an anthropic upstream is relayed", "/v1/messages", "claude-1", ""},
		{"the messages format for a model of an openai upstream is served", "/v1/messages", "chat-1", relay.PatternMessages},
		{"the messages format for a route of mixed APIs is served", "/v1/messages", "mixed-1", relay.PatternMessages},
		{"the Gemini style for an unrouted model is served", "/v1beta/models/local-1:generateContent", "", relay.PatternGemini},
		{"the Gemini style for a model of an openai upstream is served", "/v1beta/models/chat-1:streamGenerateContent", "", relay.PatternGemini},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := up.callCount()
			counts := map[string]int{}
			for p, f := range fallbacks {
				counts[p] = f.count()
			}
			body := `{"model":"` + tc.model + `","input":"hi","max_tokens":5}`
			if tc.model == "" {
				body = `{"contents":[{"parts":[{"text":"hi"}]}]}`
			}
			res := g.post(t, tc.path, "application/json", strings.NewReader(body), map[string]string{"Authorization": "Bearer " + keyOK})
			got := readAll(t, res.Body)
			require.Equal(t, http.StatusOK, res.StatusCode, "body: %s", got)
			if tc.pattern == "" {
				require.Equal(t, before+1, up.callCount(), "not relayed")
				jsonEqual(t, `{"ok":true}`, got)
				for p, f := range fallbacks {
					require.Equal(t, counts[p], f.count(), "the fallback of %s was called", p)
				}
				return
			}
			require.Equal(t, before, up.callCount(), "relayed")
			jsonEqual(t, `{"served":true}`, got)
			call := fallbacks[tc.pattern].last(t)
			require.Equal(t, counts[tc.pattern]+1, fallbacks[tc.pattern].count())
			require.Equal(t, tc.path, call.path)
			require.Equal(t, body, string(call.body), "the fallback must get the client's body unchanged")
		})
	}

	t.Run("a multipart upload for an unrouted model reaches the fallback whole", func(t *testing.T) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		fw, err := mw.CreateFormFile("file", "a.wav")
		require.NoError(t, err)
		audio := strings.Repeat("RIFF-audio-", 50_000) // beyond the in-memory spool
		_, _ = io.WriteString(fw, audio)
		require.NoError(t, mw.WriteField("model", "local-1"))
		require.NoError(t, mw.WriteField("response_format", "text"))
		require.NoError(t, mw.Close())
		before := up.callCount()
		res := g.post(t, "/v1/audio/transcriptions", mw.FormDataContentType(), &buf, map[string]string{"Authorization": "Bearer " + keyOK})
		got := readAll(t, res.Body)
		require.Equal(t, http.StatusOK, res.StatusCode, "body: %s", got)
		require.Equal(t, before, up.callCount(), "relayed")
		call := fallbacks[relay.PatternTranscriptions].last(t)
		require.Equal(t, map[string]string{"file": audio, "model": "local-1", "response_format": "text"}, call.form)
	})
}

func TestWithFallbackPanics(t *testing.T) {
	t.Parallel()
	require.PanicsWithValue(t, `relay: WithFallback: "POST /v1/chat/completions" is not an access point pattern`, func() {
		relay.WithFallback("POST /v1/chat/completions", http.NotFoundHandler())
	})
	require.PanicsWithValue(t, "relay: WithFallback: nil Handler", func() {
		relay.WithFallback(relay.PatternEmbeddings, nil)
	})
}

func TestUpstreamAPIIsChecked(t *testing.T) {
	t.Parallel()
	_, err := relay.New([]relay.Route{{Model: "m", Upstreams: []relay.Upstream{{BaseURL: "http://127.0.0.1:1/v1", API: "grpc"}}}})
	require.ErrorContains(t, err, `unknown API "grpc"`)
}

// The access options given to New set every access handler of the relay;
// those given to NewAccessHandler set that handler only.
func TestAccessOptionsOfNewAndOfTheHandler(t *testing.T) {
	t.Parallel()
	up := newFakeUpstream(t, nil)
	routes := []relay.Route{{Model: "embed-1", Upstreams: []relay.Upstream{{BaseURL: up.srv.URL + "/v1", Key: upKey}}}}
	r, err := relay.New(routes, relay.WithMaxRequestBytes(64))
	require.NoError(t, err)
	body := `{"model":"embed-1","input":"` + strings.Repeat("x", 100) + `"}`
	for _, tc := range []struct {
		name   string
		opts   []relay.AccessOption
		status int
	}{
		{"New's limit", nil, http.StatusBadRequest},
		{"the handler's own limit", []relay.AccessOption{relay.WithMaxRequestBytes(1 << 10)}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &accessGateway{srv: serveAccess(t, r, tc.opts...), upstream: up}
			res := g.post(t, "/v1/embeddings", "application/json", strings.NewReader(body), map[string]string{"Authorization": "Bearer " + keyOK})
			got := readAll(t, res.Body)
			require.Equal(t, tc.status, res.StatusCode, "body: %s", got)
		})
	}
}
