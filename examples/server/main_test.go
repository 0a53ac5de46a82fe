package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
)

// TestExampleServesTheREADMEWalkThrough makes the calls of the README's
// curl walk-through; package gateway tests the wiring in detail.
func TestExampleServesTheREADMEWalkThrough(t *testing.T) {
	g, err := newGateway(gateway.DemoFile(), newMemoryStores(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)

	tests := []struct {
		name, method, path, key, body string
		status                        int
		want                          string // substring of the reply
	}{
		{"model list", "GET", "/v1/models", "sk-demo", "", 200, `"demo-instruct"`},
		{"chat", "POST", "/v1/chat/completions", "sk-demo", `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`, 200, `"chat.completion"`},
		{"completions", "POST", "/v1/completions", "sk-demo", `{"model":"demo-instruct","prompt":"hi"}`, 200, `"text_completion"`},
		{"responses", "POST", "/v1/responses", "sk-demo", `{"model":"demo-chat","input":"hi"}`, 200, `"object":"response"`},
		{"messages", "POST", "/v1/messages", "sk-demo", `{"model":"demo-chat","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`, 200, `"type":"message"`},
		{"video create", "POST", "/v1/videos", "sk-demo", `{"model":"demo-video","prompt":"kite","seconds":"4","size":"1280x720"}`, 200, `"queued"`},
		{"empty quota", "POST", "/v1/chat/completions", "sk-demo-empty", `{}`, 403, `"insufficient_quota"`},
		{"empty quota reads", "GET", "/v1/models", "sk-demo-empty", "", 200, `"demo-chat"`},
		{"embeddings", "POST", "/v1/embeddings", "sk-demo", `{"model":"demo-embedding","input":"The quick brown fox","dimensions":8}`, 200, `"object":"embedding"`},
		{"moderations", "POST", "/v1/moderations", "sk-demo", `{"model":"demo-moderation","input":"I will kill the bug"}`, 200, `"violence":true`},
		{"rerank", "POST", "/v1/rerank", "sk-demo", `{"model":"demo-rerank","query":"capital of France","documents":["Paris is the capital of France.","Cats sleep a lot."],"top_n":1}`, 200, `"index":0`},
		{"images", "POST", "/v1/images/generations", "sk-demo", `{"model":"demo-image","prompt":"a red kite over the sea","size":"256x256"}`, 200, `"url":"/v1/images/files/`},
		{"speech", "POST", "/v1/audio/speech", "sk-demo", `{"model":"demo-tts","input":"Hello from the gateway.","voice":"alloy"}`, 200, "RIFF"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			require.NoError(t, err)
			if tc.key != "" {
				req.Header.Set("Authorization", "Bearer "+tc.key)
			}
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			require.Equal(t, tc.status, res.StatusCode, "%s", b)
			require.Contains(t, string(b), tc.want)
		})
	}
}

// TestExampleTranscribesItsOwnSpeech makes the README's speech and
// transcription calls: the WAV of /v1/audio/speech, uploaded as curl -F
// does, comes back as its text in each format.
func TestExampleTranscribesItsOwnSpeech(t *testing.T) {
	g, err := newGateway(gateway.DemoFile(), newMemoryStores(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	const text = "Hello there. This is the gateway speaking!"
	req, err := http.NewRequest("POST", srv.URL+"/v1/audio/speech", strings.NewReader(`{"model":"demo-tts","input":"`+text+`","voice":"alloy","response_format":"wav"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-demo")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	wav, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, "audio/wav", res.Header.Get("Content-Type"))
	for format, want := range map[string]string{"json": `{"text":"` + text + `"`, "text": text + "\n", "srt": "1\n00:00:00,000 --> ", "vtt": "WEBVTT\n", "verbose_json": `"task":"transcribe"`} {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, err := mw.CreateFormFile("file", "hello.wav")
		require.NoError(t, err)
		_, _ = fw.Write(wav)
		require.NoError(t, mw.WriteField("model", "demo-whisper"))
		require.NoError(t, mw.WriteField("response_format", format))
		require.NoError(t, mw.Close())
		req, err := http.NewRequest("POST", srv.URL+"/v1/audio/transcriptions", &body)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer sk-demo")
		req.Header.Set("Content-Type", mw.FormDataContentType())
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		got, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		require.Equal(t, 200, res.StatusCode, "%s: %s", format, got)
		require.True(t, strings.HasPrefix(string(got), want) || strings.Contains(string(got), want), "%s: %s", format, got)
	}
}

// get makes one GET /v1/models with key.
func get(t *testing.T, h http.Handler, key string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("GET", "/v1/models", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestDemoKeyIsNotRateLimited: sk-demo serves an SDK suite or a load
// test without 429s; sk-demo-limited answers the README's loop with 429
// on its sixth request, however slow the machine (one token comes back
// every twelve seconds).
func TestDemoKeyIsNotRateLimited(t *testing.T) {
	c, err := loadConfig("", "")
	require.NoError(t, err)
	g, err := newGateway(c, newMemoryStores(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	for i := range 200 {
		rec := get(t, g, "sk-demo")
		require.Equal(t, 200, rec.Code, "request %d: %s", i, rec.Body)
		require.Empty(t, rec.Header().Get("X-Ratelimit-Limit-Requests"), "sk-demo is not rate limited")
	}

	codes := make([]int, 8)
	for i := range codes {
		codes[i] = get(t, g, "sk-demo-limited").Code
	}
	require.Equal(t, []int{200, 200, 200, 200, 200, 429, 429, 429}, codes)
	rec := get(t, g, "sk-demo-limited")
	require.Equal(t, 429, rec.Code)
	require.Contains(t, rec.Body.String(), `"rate_limit_exceeded"`)
	require.NotEmpty(t, rec.Header().Get("Retry-After"))
}

// TestRateLimitFlag: -rate-limit sets the limit of keys without one of
// their own, and sk-demo-limited keeps its own.
func TestRateLimitFlag(t *testing.T) {
	c, err := loadConfig("", "3/m")
	require.NoError(t, err)
	g, err := newGateway(c, newMemoryStores(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	codes := make([]int, 5)
	for i := range codes {
		codes[i] = get(t, g, "sk-demo").Code
	}
	require.Equal(t, []int{200, 200, 200, 429, 429}, codes)
	require.Equal(t, "5", get(t, g, "sk-demo-limited").Header().Get("X-Ratelimit-Limit-Requests"))

	_, err = loadConfig("", "20 a second")
	require.ErrorContains(t, err, "-rate-limit")
}

// TestConfigFileRateLimit: the file's top-level rate_limit applies to
// keys without their own, and the flag replaces it.
func TestConfigFileRateLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gateway.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"rate_limit":"2/m",
		"keys":[{"secret":"sk-a","id":"a"},{"secret":"sk-b","id":"b","rate_limit":"unlimited"}],
		"models":[{"id":"demo-chat","supported_endpoint_types":["compat"]}]}`), 0o600))
	c, err := loadConfig(path, "")
	require.NoError(t, err)
	g, err := newGateway(c, newMemoryStores(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.Equal(t, []int{200, 200, 429}, []int{get(t, g, "sk-a").Code, get(t, g, "sk-a").Code, get(t, g, "sk-a").Code})
	for range 5 {
		require.Equal(t, 200, get(t, g, "sk-b").Code, "a key that opts out")
	}

	c, err = loadConfig(path, "unlimited")
	require.NoError(t, err)
	g, err = newGateway(c, newMemoryStores(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	for range 5 {
		require.Equal(t, 200, get(t, g, "sk-a").Code, "the flag replaces the file's default")
	}
}

// TestConfigRoutesRelayAModel runs the example server with a -config that
// routes one model to another gatewaykit server (itself on the demo
// backends): that model is relayed, the demo models are answered here.
func TestConfigRoutesRelayAModel(t *testing.T) {
	upstream, err := newGateway(gateway.DemoFile(), newMemoryStores(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	var calls atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		upstream.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)

	f := gateway.DemoFile()
	f.Models = append(f.Models, models.Model{ID: "remote-chat", OwnedBy: "upstream", Created: 1,
		EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse}})
	f.Routes = []gateway.RouteConfig{{Model: "remote-chat", Upstreams: []gateway.UpstreamConfig{
		{BaseURL: up.URL + "/v1", Key: "sk-demo", Model: "demo-chat"}}}}
	g, err := newGateway(f, newMemoryStores(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)

	for _, model := range []string{"remote-chat", "demo-chat"} {
		req := httptest.NewRequest("POST", "/v1/chat/completions",
			strings.NewReader(`{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer sk-demo")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		require.Equal(t, 200, rec.Code, rec.Body.String())
		require.Contains(t, rec.Body.String(), `"model":"`+model+`"`, "the gateway's public name")
		require.Contains(t, rec.Body.String(), `You said: \"hi\"`, "the demo text, here or upstream")
	}
	require.Equal(t, int32(1), calls.Load(), "only remote-chat went upstream")
}

// startRun runs the server on addr until the test ends and returns the
// URL of its banner, read once the port is bound.
func startRun(t *testing.T, o options) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, o, pw, slog.New(slog.DiscardHandler))
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		go io.Copy(io.Discard, pr)
		select {
		case err := <-done:
			require.NoError(t, err, "a graceful shutdown")
		case <-time.After(30 * time.Second):
			t.Error("run did not return after its context ended")
		}
	})
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "gatewaykit example server on ")
	require.True(t, ok, line)
	go io.Copy(io.Discard, pr)
	return url
}

// TestRunBannerShowsAURLABrowserOpens: whatever the form of -addr, the
// banner comes once the port is bound and names a URL that answers.
func TestRunBannerShowsAURLABrowserOpens(t *testing.T) {
	tests := []struct{ name, addr, host string }{
		{"host and port", "127.0.0.1:0", "http://127.0.0.1:"},
		{"port only", ":0", "http://127.0.0.1:"},
		{"bare port", "0", "http://127.0.0.1:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := startRun(t, options{db: "memory", addr: tc.addr, maxConns: 8, textOptions: []demo.TextOption{}})
			require.True(t, strings.HasPrefix(url, tc.host), url)
			require.NotContains(t, url, ":0", "the bound port, not the flag's")
			req, err := http.NewRequest("GET", url+"/v1/models", nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer sk-demo")
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.NoError(t, res.Body.Close())
		})
	}
}

// TestRunFailsBeforeTheBannerIfThePortIsTaken: a port in use is an
// error, and no banner claims the server is up.
func TestRunFailsBeforeTheBannerIfThePortIsTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	var out strings.Builder
	err = run(context.Background(), options{db: "memory", addr: l.Addr().String(), maxConns: 8}, &out, slog.New(slog.DiscardHandler))
	require.Error(t, err)
	require.Empty(t, out.String())

	err = run(context.Background(), options{db: "memory", addr: "127.0.0.1:0", maxConns: 0}, &out, slog.New(slog.DiscardHandler))
	require.ErrorContains(t, err, "-max-conns")
}

// TestRunHasTheServerLimits: the example server uses package gateway's
// limits; a header over 64 KiB is refused with 431.
func TestRunHasTheServerLimits(t *testing.T) {
	url := startRun(t, options{db: "memory", addr: "127.0.0.1:0", maxConns: 8, textOptions: []demo.TextOption{}})
	req, err := http.NewRequest("GET", url+"/v1/models", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-demo")
	req.Header.Set("X-Padding", strings.Repeat("a", 2*gateway.DefaultMaxHeaderBytes))
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, res.StatusCode)
}

// TestREADMEConfigFilesLoad: every JSON configuration in the README is a
// valid -config file.
func TestREADMEConfigFilesLoad(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	rest := string(readme)
	n := 0
	for {
		_, after, ok := strings.Cut(rest, "```json\n")
		if !ok {
			break
		}
		var block string
		block, rest, ok = strings.Cut(after, "```\n")
		require.True(t, ok)
		n++
		path := filepath.Join(t.TempDir(), "gateway.json")
		require.NoError(t, os.WriteFile(path, []byte(block), 0o600))
		c, err := loadConfig(path, "")
		require.NoError(t, err, block)
		_, err = newGateway(c, newMemoryStores(), slog.New(slog.DiscardHandler))
		if len(c.Routes) == 0 {
			require.NoError(t, err, block)
		}
	}
	require.GreaterOrEqual(t, n, 2)
}

// TestRunServesTheConsole: the browser console is at / (and its files
// under /console/), the banner names it, and every other path is still
// the gateway's: the API, and its JSON 404 for an unknown path.
func TestRunServesTheConsole(t *testing.T) {
	url := startRun(t, options{db: "memory", addr: "127.0.0.1:0", maxConns: 8, textOptions: []demo.TextOption{}})
	get := func(path, key string) (*http.Response, string) {
		req, err := http.NewRequest("GET", url+path, nil)
		require.NoError(t, err)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res, string(b)
	}
	res, body := get("/", "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/html; charset=utf-8", res.Header.Get("Content-Type"))
	require.Contains(t, body, "gatewaykit console")
	res, _ = get("/console/app.js", "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	res, body = get("/console/config.json", "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.JSONEq(t, `{"admin_url":""}`, body)

	res, body = get("/v1/nope", "sk-demo")
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	require.JSONEq(t, `{"error":{"message":"Unknown request URL: GET /v1/nope. Please check the URL and the method.","type":"invalid_request_error","param":null,"code":"not_found"}}`, body)
	res, _ = get("/v1/models", "sk-demo")
	require.Equal(t, http.StatusOK, res.StatusCode)
	res, _ = get("/v1/models", "")
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
}

func TestBannerNamesTheConsole(t *testing.T) {
	var b strings.Builder
	printBanner(&b, "http://127.0.0.1:8080", gateway.DemoFile(), true, "in memory")
	require.Contains(t, b.String(), "\n  console: http://127.0.0.1:8080/ (open it in a browser)\n")
	require.Contains(t, b.String(), "\n  the console with sk-demo filled in: http://127.0.0.1:8080/#key=sk-demo\n")
	b.Reset()
	printBanner(&b, "http://127.0.0.1:8080", gateway.File{}, false, "in memory")
	require.Contains(t, b.String(), "\n  console: http://127.0.0.1:8080/ (open it in a browser)\n")
	require.NotContains(t, b.String(), "sk-demo")
}
