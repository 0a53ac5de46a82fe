package relay_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/sse"
)

func TestAccessRelaysJSONBodies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		path       string
		model      string
		header     map[string]string
		wantPath   string
		wantKeyHdr string // header that must carry the upstream key
		wantKey    string
	}{
		{"Embeddings", "/v1/embeddings", "embed-1", map[string]string{"Authorization": "Bearer " + keyOK}, "/v1/embeddings", "Authorization", "Bearer " + upKey},
		{"Images", "/v1/images/generations", "embed-1", map[string]string{"Authorization": "Bearer " + keyOK}, "/v1/images/generations", "Authorization", "Bearer " + upKey},
		{"Moderations", "/v1/moderations", "embed-1", map[string]string{"Authorization": "Bearer " + keyOK}, "/v1/moderations", "Authorization", "Bearer " + upKey},
		{"Rerank", "/v1/rerank", "embed-1", map[string]string{"Authorization": "Bearer " + keyOK}, "/v1/rerank", "Authorization", "Bearer " + upKey},
		{"Speech", "/v1/audio/speech", "embed-1", map[string]string{"Authorization": "Bearer " + keyOK}, "/v1/audio/speech", "Authorization", "Bearer " + upKey},
		{"Messages", "/v1/messages", "chat-1", map[string]string{"X-Api-Key": keyOK, "Anthropic-Version": "2023-06-01", "Anthropic-Beta": "tools-2024"}, "/v1/messages", "X-Api-Key", upKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("X-Request-Id", "req_up_1")
				w.Header().Set("Set-Cookie", "upstream=secret")
				_, _ = io.WriteString(w, `{"object":"list","model":"up","data":[1,2,3]}`)
			})
			g := newAccessGateway(t, up)
			header := map[string]string{"OpenAI-Organization": "org-1", "Idempotency-Key": "idem-1", "Cookie": "session=client"}
			for k, v := range tc.header {
				header[k] = v
			}
			// Fields that no type models, and a model that is not first.
			body := `{"input":["a","b"],"x_unknown":{"deep":[1,{"model":"inner"}]},"model":"` + tc.model + `","dimensions":8}`
			res := g.post(t, tc.path, "application/json", strings.NewReader(body), header)

			require.Equal(t, http.StatusOK, res.StatusCode)
			require.Equal(t, "application/json", res.Header.Get("Content-Type"))
			require.Equal(t, "req_up_1", res.Header.Get("X-Request-Id"))
			require.Empty(t, res.Header.Get("Set-Cookie"), "upstream cookies stay upstream")
			jsonEqual(t, `{"object":"list","model":"up","data":[1,2,3]}`, readAll(t, res.Body))

			c := up.lastCall(t)
			require.Equal(t, http.MethodPost, c.Method)
			require.Equal(t, tc.wantPath, c.Path)
			require.Equal(t, tc.wantKey, c.Header.Get(tc.wantKeyHdr))
			if tc.wantKeyHdr != "Authorization" {
				require.Empty(t, c.Header.Get("Authorization"), "the key goes only where the format sends it")
			}
			noClientKey(t, c)
			require.Empty(t, c.Header.Get("Cookie"))
			require.Equal(t, "org-1", c.Header.Get("OpenAI-Organization"))
			require.Equal(t, "idem-1", c.Header.Get("Idempotency-Key"))
			want := strings.Replace(body, `"model":"`+tc.model+`"`, `"model":"up-`+tc.model+`"`, 1)
			require.Equal(t, want, string(c.Body), "the body is forwarded byte for byte but for the model")
			if tc.name == "Messages" {
				require.Equal(t, "2023-06-01", c.Header.Get("Anthropic-Version"))
				require.Equal(t, "tools-2024", c.Header.Get("Anthropic-Beta"))
			}
		})
	}
}

func TestAccessMessagesDefaultsAnthropicVersion(t *testing.T) {
	t.Parallel()
	up := newFakeUpstream(t, nil)
	g := newAccessGateway(t, up)
	res := g.post(t, "/v1/messages", "application/json", strings.NewReader(`{"model":"chat-1","max_tokens":5}`), map[string]string{"X-Api-Key": keyOK})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, relay.DefaultAnthropicVersion, up.lastCall(t).Header.Get("Anthropic-Version"))
}

func TestAccessSpeechStreamsBinaryReply(t *testing.T) {
	t.Parallel()
	chunk := bytes.Repeat([]byte{0xff, 0xfb, 0x90, 0x00}, 4096)
	second := make(chan struct{})
	up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/mpeg")
		_, _ = w.Write(chunk)
		w.(http.Flusher).Flush()
		select { // the rest only once the client has the first piece
		case <-second:
			_, _ = w.Write(chunk)
		case <-r.Context().Done():
		}
	})
	g := newAccessGateway(t, up)
	res := g.post(t, "/v1/audio/speech", "application/json", strings.NewReader(`{"model":"embed-1","input":"hi","voice":"alloy"}`), map[string]string{"Authorization": "Bearer " + keyOK})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "audio/mpeg", res.Header.Get("Content-Type"))
	first := make([]byte, len(chunk))
	// A gateway that buffered the reply would never hand over the first
	// piece: fail then, rather than hang.
	stop := time.AfterFunc(10*time.Second, func() { res.Body.Close() })
	_, err := io.ReadFull(res.Body, first)
	stop.Stop()
	if err != nil {
		close(second)
	}
	require.NoError(t, err, "the first piece arrives before the upstream sends the second: the reply is streamed")
	require.Equal(t, chunk, first)
	close(second)
	require.Equal(t, chunk, readAll(t, res.Body))
}

func TestAccessMessagesStreamPassesEventsThrough(t *testing.T) {
	t.Parallel()
	events := []sse.Event{
		{Type: "message_start", Data: `{"type":"message_start","message":{"id":"msg_1","model":"up-chat-1"}}`},
		{Type: "content_block_delta", Data: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`},
		{Type: "message_stop", Data: `{"type":"message_stop"}`},
	}
	up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range events {
			_, _ = io.WriteString(w, "event: "+ev.Type+"\ndata: "+ev.Data+"\n\n")
			w.(http.Flusher).Flush()
		}
	})
	g := newAccessGateway(t, up)
	res := g.post(t, "/v1/messages", "application/json", strings.NewReader(`{"model":"chat-1","stream":true}`), map[string]string{"X-Api-Key": keyOK})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	var got []sse.Event
	for ev, err := range sse.Read(res.Body) {
		require.NoError(t, err)
		got = append(got, ev)
	}
	require.Equal(t, events, got)
}

func TestAccessStreamBrokenOffEndsWithFormatErrorEvent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, model string
		header            map[string]string
		wantType          string // event name of the error event
		wantData          string // a fragment of its data
	}{
		{"Messages", "/v1/messages", "chat-1", map[string]string{"X-Api-Key": keyOK}, "error", `{"type":"error","error":{"type":"api_error"`},
		{"Gemini", "/v1beta/models/gem-1:streamGenerateContent?alt=sse", "", map[string]string{"X-Goog-Api-Key": keyOK}, "", `"status":"UNAVAILABLE"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, "data: {\"n\":1}\n\ndata: {\"n\":")
				w.(http.Flusher).Flush()
				// Die in the middle of the second event.
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close()
				}
			})
			g := newAccessGateway(t, up)
			body := `{"contents":[]}`
			if tc.model != "" {
				body = `{"model":"` + tc.model + `","stream":true}`
			}
			res := g.post(t, tc.path, "application/json", strings.NewReader(body), tc.header)
			require.Equal(t, http.StatusOK, res.StatusCode)
			var got []sse.Event
			for ev, err := range sse.Read(res.Body) {
				require.NoError(t, err)
				got = append(got, ev)
			}
			require.Len(t, got, 2, "the whole first event, then the error event: %v", got)
			require.Equal(t, `{"n":1}`, got[0].Data)
			require.Equal(t, tc.wantType, got[1].Type)
			require.Contains(t, got[1].Data, tc.wantData)
		})
	}
}

func TestAccessBodyBrokenOffAbortsTheConnection(t *testing.T) {
	t.Parallel()
	up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/mpeg")
		w.Header().Set("Content-Length", "100000")
		_, _ = w.Write(make([]byte, 1000))
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	g := newAccessGateway(t, up)
	req, err := http.NewRequest(http.MethodPost, g.srv.URL+"/v1/audio/speech", strings.NewReader(`{"model":"embed-1"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+keyOK)
	res, err := http.DefaultClient.Do(req)
	if err == nil {
		// The headers may have gone out with the first bytes; then the
		// body must end in an error, not as if it were complete.
		defer res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		_, err = io.ReadAll(res.Body)
	}
	require.Error(t, err, "a truncated reply must not look complete")
}

func TestAccessClientDisconnectCancelsUpstream(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{})
	cancelled := make(chan struct{})
	up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		select {
		case <-r.Context().Done():
			close(cancelled)
		case <-time.After(10 * time.Second):
		}
	})
	g := newAccessGateway(t, up)
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.srv.URL+"/v1/embeddings", strings.NewReader(`{"model":"embed-1","input":"x"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+keyOK)
	errc := make(chan error, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
		}
		errc <- err
	}()
	select {
	case <-arrived:
	case err := <-errc:
		t.Fatalf("the request ended before reaching the upstream: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the request did not reach the upstream")
	}
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream request was not cancelled when the client went away")
	}
}

func TestAccessFailsOverReplayingTheJSONBody(t *testing.T) {
	t.Parallel()
	bad := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"down"}}`, http.StatusServiceUnavailable)
	})
	good := newFakeUpstream(t, nil)
	r, err := relay.New([]relay.Route{{Model: "embed-1", Upstreams: []relay.Upstream{
		{BaseURL: bad.srv.URL + "/v1", Model: "bad-name"},
		{BaseURL: good.srv.URL + "/v1", Model: "good-name"},
	}}})
	require.NoError(t, err)
	g := &accessGateway{srv: serveAccess(t, r), upstream: good}
	res := g.post(t, "/v1/embeddings", "application/json", strings.NewReader(`{"model":"embed-1","input":"x"}`), map[string]string{"Authorization": "Bearer " + keyOK})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, `{"model":"bad-name","input":"x"}`, string(bad.lastCall(t).Body))
	require.Equal(t, `{"model":"good-name","input":"x"}`, string(good.lastCall(t).Body))
}

func TestAccessGeminiStreamedBodyFailsOverWhenUnread(t *testing.T) {
	t.Parallel()
	good := newFakeUpstream(t, nil)
	r, err := relay.New([]relay.Route{{Model: "gem-1", Upstreams: []relay.Upstream{
		{BaseURL: deadURL(t)}, // connection refused: the body was never read
		{BaseURL: good.srv.URL + "/v1"},
	}}})
	require.NoError(t, err)
	g := &accessGateway{srv: serveAccess(t, r), upstream: good}
	body := `{"contents":[{"parts":[{"text":"hello"}]}]}`
	res := g.post(t, "/v1beta/models/gem-1:generateContent", "application/json", strings.NewReader(body), map[string]string{"X-Goog-Api-Key": keyOK})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, body, string(good.lastCall(t).Body))
}

func TestAccessUpstreamErrorsKeepStatusAndMessage(t *testing.T) {
	t.Parallel()
	up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/messages":
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"error":{"message":"slow down","type":"rate_limit_error","code":"rate_limit_exceeded"}}`)
		default:
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"message":"input is too long","type":"invalid_request_error","param":"input","code":"invalid_request_error"}}`)
		}
	})
	g := newAccessGateway(t, up)
	res := g.post(t, "/v1/embeddings", "application/json", strings.NewReader(`{"model":"embed-1","input":"x"}`), map[string]string{"Authorization": "Bearer " + keyOK})
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Contains(t, string(readAll(t, res.Body)), `"message":"input is too long"`)

	res = g.post(t, "/v1/messages", "application/json", strings.NewReader(`{"model":"chat-1"}`), map[string]string{"X-Api-Key": keyOK})
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	require.Equal(t, "7", res.Header.Get("Retry-After"))
	jsonEqual(t, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, readAll(t, res.Body))
}

func TestAccessRejectsBadRequestsBeforeTheUpstream(t *testing.T) {
	t.Parallel()
	up := newFakeUpstream(t, nil)
	g := newAccessGateway(t, up, relay.WithMaxRequestBytes(1<<10))
	auth := map[string]string{"Authorization": "Bearer " + keyOK}
	tests := []struct {
		name, path, ct, body string
		status               int
		want                 string
	}{
		{"NotJSON", "/v1/embeddings", "application/json", `{"model":`, 400, "not valid JSON"},
		{"NotObject", "/v1/embeddings", "application/json", `["model"]`, 400, "must be a JSON object"},
		{"ModelNotString", "/v1/embeddings", "application/json", `{"model":7}`, 400, "model must be a string"},
		{"ModelTwice", "/v1/embeddings", "application/json", `{"model":"embed-1","MODEL":"chat-1"}`, 400, "model must appear once"},
		{"NoModel", "/v1/embeddings", "application/json", `{"input":"x"}`, 400, "model is required"},
		{"WrongContentType", "/v1/embeddings", "text/plain", `{"model":"embed-1"}`, 400, "Content-Type"},
		{"TooLarge", "/v1/embeddings", "application/json", `{"model":"embed-1","input":"` + strings.Repeat("x", 2000) + `"}`, 400, "larger than"},
		{"UnknownModel", "/v1/embeddings", "application/json", `{"model":"nope"}`, 404, "model_not_found"},
		{"WrongEndpointType", "/v1/messages", "application/json", `{"model":"resp-only"}`, 400, "does not support endpoint type"},
		{"MultipartNotMultipart", "/v1/audio/transcriptions", "application/json", `{}`, 400, "multipart/form-data"},
		{"GeminiUnknownMethod", "/v1beta/models/gem-1:countTokens", "application/json", `{}`, 404, "NOT_FOUND"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := g.post(t, tc.path, tc.ct, strings.NewReader(tc.body), auth)
			require.Equal(t, tc.status, res.StatusCode)
			require.Contains(t, string(readAll(t, res.Body)), tc.want)
		})
	}
	require.Zero(t, up.callCount(), "no bad request reaches the upstream")
}

func TestAccessErrorShapes(t *testing.T) {
	t.Parallel()
	up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream exploded", http.StatusInternalServerError)
	})
	formats := []struct {
		name   string
		path   string
		body   func(model string) string
		header func(key string) map[string]string
	}{
		{"openai", "/v1/embeddings",
			func(m string) string { return `{"model":"` + m + `"}` },
			func(k string) map[string]string { return map[string]string{"Authorization": "Bearer " + k} }},
		{"messages", "/v1/messages",
			func(m string) string { return `{"model":"` + m + `"}` },
			func(k string) map[string]string {
				return map[string]string{"X-Api-Key": k, "Anthropic-Version": "2023-06-01"}
			}},
		{"gemini", "/v1beta/models/{model}:generateContent",
			func(string) string { return `{"contents":[]}` },
			func(k string) map[string]string { return map[string]string{"X-Goog-Api-Key": k} }},
	}
	cases := []struct {
		name   string
		key    string // "" sends no credential
		model  string
		status int
	}{
		{"missing_key", "", "embed-1", 401},
		{"quota", keyBroke, "embed-1", 403},
		{"unknown_model", keyOK, "nope", 404},
		{"upstream_500", keyOK, "chat-1", 502},
		{"rate_limited", keyRate, "embed-1", 429},
	}
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			g := newAccessGateway(t, up) // a rate limiter of its own
			for _, c := range cases {
				path := strings.Replace(f.path, "{model}", c.model, 1)
				header := map[string]string{}
				if c.key != "" {
					header = f.header(c.key)
				}
				res := g.post(t, path, "application/json", strings.NewReader(f.body(c.model)), header)
				if c.name == "rate_limited" {
					// The first request of the minute passes (and fails
					// upstream); the second is refused.
					require.Equal(t, http.StatusBadGateway, res.StatusCode)
					res = g.post(t, path, "application/json", strings.NewReader(f.body(c.model)), header)
					require.NotEmpty(t, res.Header.Get("Retry-After"))
				}
				require.Equal(t, c.status, res.StatusCode, "%s %s", f.name, c.name)
				require.Equal(t, "application/json", res.Header.Get("Content-Type"))
				goldenAccess(t, f.name+"_"+c.name+".json", readAll(t, res.Body))
			}
		})
	}
}

func TestAccessRejectsOtherMethodsAndPaths(t *testing.T) {
	t.Parallel()
	up := newFakeUpstream(t, nil)
	r, err := relay.New([]relay.Route{{Model: "embed-1", Upstreams: []relay.Upstream{{BaseURL: up.srv.URL + "/v1"}}}})
	require.NoError(t, err)
	h := relay.NewAccessHandler(r, models.NewMemoryCatalog(accessModels...))
	// Mounted on a catch-all route, the handler itself tells the routes apart.
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, "/v1/embeddings", http.StatusMethodNotAllowed},
		{http.MethodPost, "/v1/unknown", http.StatusNotFound},
	} {
		rec := httptest.NewRecorder()
		req, _ := http.NewRequest(tc.method, "http://x"+tc.path, nil)
		h.ServeHTTP(rec, req)
		require.Equal(t, tc.status, rec.Code, "%s %s", tc.method, tc.path)
	}
	require.Zero(t, up.callCount())
}

func TestAccessChargesTheUpstreamsUsage(t *testing.T) {
	t.Parallel()
	up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/embeddings":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"object":"list","data":[{"embedding":[0.5]}],"usage":{"prompt_tokens":8,"total_tokens":8}}`)
		case "/v1/messages":
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\n\n"+
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":15}}\n\n"+
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
		default: // Gemini-style
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: {\"usageMetadata\":{\"totalTokenCount\":3}}\n\ndata: {\"usageMetadata\":{\"totalTokenCount\":7}}\n\n")
		}
	})
	var routes []relay.Route
	for _, m := range accessModels {
		routes = append(routes, relay.Route{Model: m.ID, Upstreams: []relay.Upstream{{BaseURL: up.srv.URL + "/v1"}}})
	}
	r, err := relay.New(routes)
	require.NoError(t, err)
	srv, keys := serveAccessKeys(t, r)
	g := &accessGateway{srv: srv, upstream: up}

	remaining := func() int64 {
		k, err := keys.Lookup(context.Background(), keyMetered)
		require.NoError(t, err)
		return k.Quota.Remaining
	}
	for _, step := range []struct {
		path, body string
		header     map[string]string
		want       int64
	}{
		{"/v1/embeddings", `{"model":"embed-1","input":"x"}`, map[string]string{"Authorization": "Bearer " + keyMetered}, meteredQuota - 8},
		{"/v1/messages", `{"model":"chat-1","stream":true}`, map[string]string{"X-Api-Key": keyMetered}, meteredQuota - 8 - 40},
		{"/v1beta/models/gem-1:streamGenerateContent?alt=sse", `{}`, map[string]string{"X-Goog-Api-Key": keyMetered}, meteredQuota - 8 - 40 - 7},
	} {
		res := g.post(t, step.path, "application/json", strings.NewReader(step.body), step.header)
		require.Equal(t, http.StatusOK, res.StatusCode)
		_ = readAll(t, res.Body)
		res.Body.Close()
		require.Eventually(t, func() bool { return remaining() == step.want }, 5*time.Second, 5*time.Millisecond,
			"%s: remaining %d, want %d", step.path, remaining(), step.want)
	}

	// Each request is one usage row: its model, the input and output
	// tokens of the reply's usage, and their cost at the model's pricing.
	// (The Gemini-style reply gave a total only: no split, no cost.)
	rows, err := keys.Usage(context.Background(), auth.UsageParams{KeyID: "metered", GroupBy: auth.GroupByModel})
	require.NoError(t, err)
	require.Equal(t, []auth.UsageRow{
		{Model: "chat-1", Requests: 1, InputTokens: 25, OutputTokens: 15, CostUSD: 25 + 2*15},
		{Model: "embed-1", Requests: 1, InputTokens: 8},
		{Model: "gem-1", Requests: 1},
	}, rows)
}

func TestAccessClientDisconnectMidStreamCancelsUpstream(t *testing.T) {
	t.Parallel()
	cancelled := make(chan struct{})
	up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\"}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			close(cancelled)
		case <-time.After(10 * time.Second):
		}
	})
	g := newAccessGateway(t, up)
	ctx, cancel := context.WithCancel(context.Background())
	defer time.AfterFunc(10*time.Second, cancel).Stop() // never hang
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.srv.URL+"/v1/messages", strings.NewReader(`{"model":"chat-1","stream":true}`))
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", keyOK)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	for ev, err := range sse.Read(res.Body) {
		require.NoError(t, err)
		require.Equal(t, "message_start", ev.Type)
		break
	}
	cancel()
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream stream was not cancelled when the client went away")
	}
}

func TestAccessTimeoutsAndKeepAlive(t *testing.T) {
	t.Parallel()
	up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/embeddings": // headers, then silence
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
		case "/v1/messages": // one event, a pause within the idle timeout, one event, then silence
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\"}\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(300 * time.Millisecond)
			_, _ = io.WriteString(w, "event: ping\ndata: {\"type\":\"ping\"}\n\n")
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	var routes []relay.Route
	for _, m := range accessModels {
		routes = append(routes, relay.Route{Model: m.ID, Upstreams: []relay.Upstream{{BaseURL: up.srv.URL + "/v1"}}})
	}
	r, err := relay.New(routes, relay.WithTimeouts(relay.Timeouts{Idle: time.Second}))
	require.NoError(t, err)
	g := &accessGateway{srv: serveAccess(t, r, relay.WithKeepAlive(50*time.Millisecond)), upstream: up}

	// Nothing of the body within the idle timeout: a 504 in the format's shape.
	res := g.post(t, "/v1/embeddings", "application/json", strings.NewReader(`{"model":"embed-1"}`), map[string]string{"Authorization": "Bearer " + keyOK})
	require.Equal(t, http.StatusGatewayTimeout, res.StatusCode)
	require.Contains(t, string(readAll(t, res.Body)), `"code":"gateway_timeout"`)

	// A stream: keep-alive comments bridge the pause; the silence after
	// the second event ends it with an error event.
	res = g.post(t, "/v1/messages", "application/json", strings.NewReader(`{"model":"chat-1","stream":true}`), map[string]string{"X-Api-Key": keyOK})
	require.Equal(t, http.StatusOK, res.StatusCode)
	raw := string(readAll(t, res.Body))
	require.Contains(t, raw, ": keep-alive")
	var got []sse.Event
	for ev, err := range sse.Read(strings.NewReader(raw)) {
		require.NoError(t, err)
		got = append(got, ev)
	}
	require.Len(t, got, 3, raw)
	require.Equal(t, []string{"message_start", "ping", "error"}, []string{got[0].Type, got[1].Type, got[2].Type})
	require.Contains(t, got[2].Data, `{"type":"error","error":{"type":"api_error","message":"The upstream sent nothing for 1s."}}`)
}
