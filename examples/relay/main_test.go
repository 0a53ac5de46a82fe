package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/examples/internal/conversationflow"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
	"github.com/gatewaykit/gatewaykit/videos/runner"
)

// exampleServer serves what examples/server serves (its wiring: package
// gateway with the demo backends and the demo configuration), as the
// upstream of the relay.
func exampleServer(t *testing.T) *httptest.Server {
	t.Helper()
	file := gateway.DemoFile()
	keys, err := gateway.NewKeyStore(context.Background(), file.Keys)
	require.NoError(t, err)
	text := demo.NewTextBackend()
	g, err := gateway.New(gateway.Config{
		Keys:          keys,
		Catalog:       models.NewMemoryCatalog(file.Models...),
		Chat:          text.Chat(),
		Completions:   text.Completions(),
		Responses:     text.Responses(),
		Videos:        demo.NewVideoGenerator(),
		Embeddings:    demo.NewEmbeddingBackend(),
		RunnerOptions: []runner.Option{runner.WithPollInterval(20 * time.Millisecond)},
	})
	require.NoError(t, err)
	return serve(t, g, g)
}

// serve runs g's video runner and serves h until the test ends.
func serve(t *testing.T, g interface{ Run(context.Context) error }, h http.Handler) *httptest.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = g.Run(ctx); close(done) }()
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		cancel()
		<-done
	})
	return srv
}

// relayTo starts the relay example in front of upstream.
func relayTo(t *testing.T, upstream string) *httptest.Server {
	t.Helper()
	g, ms, err := newGateway(context.Background(), config{
		upstream:      upstream,
		key:           "sk-demo",
		logger:        slog.New(slog.DiscardHandler),
		relayOptions:  []relay.Option{relay.WithPollInterval(50 * time.Millisecond)},
		runnerOptions: []runner.Option{runner.WithPollInterval(20 * time.Millisecond)},
	})
	require.NoError(t, err)
	require.NotEmpty(t, ms)
	return serve(t, g, g)
}

func sdk(srv *httptest.Server, key string) openai.Client {
	return openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0))
}

func TestRelayInFrontOfTheExampleServer(t *testing.T) {
	up := exampleServer(t)
	gw := relayTo(t, up.URL+"/v1")
	client := sdk(gw, "sk-demo")
	ctx := t.Context()

	t.Run("ModelsKeepTheirEndpointTypes", func(t *testing.T) {
		var want, got struct {
			Data []struct {
				ID    string   `json:"id"`
				Types []string `json:"supported_endpoint_types"`
			} `json:"data"`
		}
		for _, tc := range []struct {
			srv *httptest.Server
			dst any
		}{{up, &want}, {gw, &got}} {
			req, _ := http.NewRequest(http.MethodGet, tc.srv.URL+"/v1/models", nil)
			req.Header.Set("Authorization", "Bearer sk-demo")
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			require.NoError(t, json.NewDecoder(res.Body).Decode(tc.dst))
			res.Body.Close()
		}
		require.NotEmpty(t, got.Data)
		require.Equal(t, want, got)
	})

	t.Run("EmbeddingsAreRelayed", func(t *testing.T) {
		e, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: demo.EmbeddingModel,
			Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("relayed")}, Dimensions: openai.Int(4)})
		require.NoError(t, err)
		require.Len(t, e.Data[0].Embedding, 4)
		require.Equal(t, int64(1), e.Usage.PromptTokens)
	})

	t.Run("Chat", func(t *testing.T) {
		c, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:    "demo-chat",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello")},
		})
		require.NoError(t, err)
		require.Equal(t, "demo-chat", c.Model)
		require.NotEmpty(t, c.Choices[0].Message.Content)
		require.Positive(t, c.Usage.TotalTokens)
	})

	t.Run("ChatStreaming", func(t *testing.T) {
		stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model:    "demo-chat",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello")},
		})
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		require.NoError(t, stream.Err())
		require.NotEmpty(t, acc.Choices[0].Message.Content)
		require.Equal(t, "stop", acc.Choices[0].FinishReason)
	})

	t.Run("Completions", func(t *testing.T) {
		c, err := client.Completions.New(ctx, openai.CompletionNewParams{
			Model:  "demo-instruct",
			Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Once upon a time")},
		})
		require.NoError(t, err)
		require.NotEmpty(t, c.Choices[0].Text)
	})

	t.Run("ResponsesWithPreviousResponseID", func(t *testing.T) {
		first, err := client.Responses.New(ctx, responses.ResponseNewParams{
			Model: "demo-chat",
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("My name is Ada.")},
		})
		require.NoError(t, err)
		require.Equal(t, responses.ResponseStatusCompleted, first.Status)
		require.NotEmpty(t, first.OutputText())

		second, err := client.Responses.New(ctx, responses.ResponseNewParams{
			Model:              "demo-chat",
			Input:              responses.ResponseNewParamsInputUnion{OfString: openai.String("What is my name?")},
			PreviousResponseID: openai.String(first.ID),
		})
		require.NoError(t, err)
		require.Equal(t, first.ID, second.PreviousResponseID)
		require.NotEmpty(t, second.OutputText())

		_, err = client.Responses.New(ctx, responses.ResponseNewParams{
			Model:              "demo-chat",
			Input:              responses.ResponseNewParamsInputUnion{OfString: openai.String("?")},
			PreviousResponseID: openai.String("resp_unknown"),
		})
		var apiErr *openai.Error
		require.True(t, errors.As(err, &apiErr), "%v", err)
		require.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
	})

	t.Run("ConversationWithItems", func(t *testing.T) {
		// Served from the relay's store; the upstream is sent the
		// conversation's items as the input of each response.
		conversationflow.Run(t, client, client)
	})

	t.Run("Video", func(t *testing.T) {
		v, err := client.Videos.NewAndPoll(ctx, openai.VideoNewParams{Model: "demo-video", Prompt: "a kite", Seconds: "4", Size: "1280x720"}, 50)
		require.NoError(t, err)
		require.Equal(t, openai.VideoStatusCompleted, v.Status, "%+v", v.Error)
		res, err := client.Videos.DownloadContent(ctx, v.ID, openai.VideoDownloadContentParams{})
		require.NoError(t, err)
		mp4, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		require.Greater(t, len(mp4), 8)
		require.Equal(t, "ftyp", string(mp4[4:8]), "an MP4 file")

		res, err = client.Videos.DownloadContent(ctx, v.ID, openai.VideoDownloadContentParams{Variant: openai.VideoDownloadContentParamsVariantThumbnail})
		require.NoError(t, err)
		thumb, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(thumb, []byte("\x89PNG")), "a PNG thumbnail")
	})

	t.Run("EmptyQuotaKey", func(t *testing.T) {
		empty := sdk(gw, "sk-demo-empty")
		_, err := empty.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:    "demo-chat",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		})
		var apiErr *openai.Error
		require.True(t, errors.As(err, &apiErr), "%v", err)
		require.Equal(t, http.StatusForbidden, apiErr.StatusCode)
		require.Equal(t, "insufficient_quota", apiErr.Code)
	})
}

func TestRelayAccessPointsAnswerInTheirFormats(t *testing.T) {
	up := exampleServer(t)
	gw := relayTo(t, up.URL+"/v1")
	for _, tc := range []struct {
		name, path string
		header     map[string]string
		status     int
		want       string
	}{
		{"MessagesEmptyQuota", "/v1/messages", map[string]string{"X-Api-Key": "sk-demo-empty", "Anthropic-Version": "2023-06-01"}, 403,
			`{"type":"error","error":{"type":"permission_error"`},
		{"GeminiUnknownKey", "/v1beta/models/demo-chat:generateContent?key=sk-nobody", nil, 401, `"status":"UNAUTHENTICATED"`},
		{"EmbeddingsUnknownModel", "/v1/embeddings", map[string]string{"Authorization": "Bearer sk-demo"}, 404, `"code":"model_not_found"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, gw.URL+tc.path, strings.NewReader(`{"model":"no-such-model"}`))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tc.header {
				req.Header.Set(k, v)
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

func TestFetchModelsDefaultsAndErrors(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer up-key" {
			http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, `{"object":"list","data":[
			{"id":"gpt-plain","object":"model","owned_by":"openai","created":1},
			{"id":"vid","supported_endpoint_types":["compat-video","midjourney-proxy"]},
			{"id":"only-unknown","supported_endpoint_types":["suno-proxy"]},
			{"id":"embed","supported_endpoint_types":["embeddings"]},
			{"id":"gpt-plain"}]}`)
	}))
	t.Cleanup(up.Close)
	ms, err := fetchModels(context.Background(), up.Client(), up.URL+"/v1", "up-key")
	require.NoError(t, err)
	require.Equal(t, []models.Model{
		{ID: "gpt-plain", OwnedBy: "openai", Created: 1, EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse}},
		{ID: "vid", EndpointTypes: []models.EndpointType{models.CompatVideo}},
		{ID: "embed", EndpointTypes: []models.EndpointType{models.Embeddings}},
	}, ms)

	_, err = fetchModels(context.Background(), up.Client(), up.URL+"/v1", "wrong")
	require.ErrorContains(t, err, "401")

	_, _, err = newGateway(context.Background(), config{upstream: up.URL + "/v2", logger: slog.New(slog.DiscardHandler)})
	require.ErrorContains(t, err, "must end in /v1")
}

// TestRunBannerAndLimits runs the command's run on a bare port: the
// banner comes once the port is bound and names a URL that answers, and
// the server has package gateway's limits (a header over 64 KiB gets 431).
func TestRunBannerAndLimits(t *testing.T) {
	up := exampleServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, "0", config{upstream: up.URL + "/v1", key: "sk-demo", logger: slog.New(slog.DiscardHandler), maxConns: 8}, pw)
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
	br := bufio.NewReader(pr)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	for {
		// The models follow once the upstream has listed them: the relay
		// is then ready.
		more, err := br.ReadString('\n')
		require.NoError(t, err)
		if strings.HasPrefix(more, "  models:") {
			break
		}
	}
	go io.Copy(io.Discard, br)
	url, _, ok := strings.Cut(strings.TrimPrefix(line, "gatewaykit relay on "), ",")
	require.True(t, ok, line)
	require.True(t, strings.HasPrefix(url, "http://127.0.0.1:"), line)

	for _, tc := range []struct {
		padding int
		status  int
	}{{0, http.StatusOK}, {2 * gateway.DefaultMaxHeaderBytes, http.StatusRequestHeaderFieldsTooLarge}} {
		req, err := http.NewRequest("GET", url+"/v1/models", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer sk-demo")
		req.Header.Set("X-Padding", strings.Repeat("a", tc.padding))
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, res.Body.Close())
		require.Equal(t, tc.status, res.StatusCode)
	}
}

// TestAdminAddrInUseSaysWhatToDo: a relay started on one machine with
// another process's -admin-addr stops with an error that says to give
// each its own.
func TestAdminAddrInUseSaysWhatToDo(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { taken.Close() })
	err = run(t.Context(), "127.0.0.1:0", config{upstream: "http://127.0.0.1:1/v1", logger: slog.New(slog.DiscardHandler),
		maxConns: 1, adminAddr: taken.Addr().String()}, io.Discard)
	require.ErrorContains(t, err, "-admin-addr "+taken.Addr().String()+": ")
	require.ErrorContains(t, err, "give each its own -admin-addr")
}

func TestRunRefusesNoConnections(t *testing.T) {
	err := run(context.Background(), "127.0.0.1:0", config{upstream: "http://127.0.0.1:1/v1", logger: slog.New(slog.DiscardHandler)}, io.Discard)
	require.ErrorContains(t, err, "-max-conns 0")
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// attempts returns the attempt numbers of the failed-listing log lines.
func attempts(logs string) []int {
	var out []int
	for _, m := range regexp.MustCompile(`model list is not available.* attempt=(\d+)`).FindAllStringSubmatch(logs, -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	return out
}

// startRelay starts the relay's start-up loop against up, serving its
// handler; it returns the server, the logs and the channel of start's
// result.
func startRelay(t *testing.T, parent context.Context, up *relaytest.Upstream, key string) (*httptest.Server, *syncBuffer, chan error, *starting) {
	t.Helper()
	ctx, cancel := context.WithCancel(parent)
	logs := &syncBuffer{}
	st := &starting{}
	c := config{upstream: up.BaseURL(), key: key, logger: slog.New(slog.NewTextHandler(logs, nil)),
		retryMin: 5 * time.Millisecond, retryMax: 20 * time.Millisecond}
	done := make(chan error, 1)
	runs := make(chan struct{})
	go func() {
		defer close(runs)
		g, _, err := st.start(ctx, c)
		done <- err
		if err == nil {
			_ = g.Run(ctx) // the video runner, until the test ends
		}
	}()
	srv := httptest.NewServer(st)
	t.Cleanup(func() {
		srv.Close()
		cancel()
		<-runs
	})
	return srv, logs, done, st
}

func send(t *testing.T, method, url, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(b)
}

// TestRelayStartsWhileTheUpstreamIsDown: with its upstream down, the
// relay does not exit: it answers 503 service_unavailable with
// Retry-After (in each format's shape), retries the model listing with
// backoff, logging each failed attempt once, and serves as soon as the
// upstream is up.
func TestRelayStartsWhileTheUpstreamIsDown(t *testing.T) {
	up := relaytest.NewUpstream()
	t.Cleanup(up.Close)
	up.Key = "sk-up-secret-1"
	up.SetDown(true)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, logs, done, _ := startRelay(t, ctx, up, up.Key)

	require.Eventually(t, func() bool { return len(attempts(logs.String())) >= 3 }, 10*time.Second, time.Millisecond)
	res, body := send(t, http.MethodGet, srv.URL+"/v1/models", "", "Authorization", "Bearer sk-demo")
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, body)
	require.NotEmpty(t, res.Header.Get("Retry-After"))
	require.JSONEq(t, `{"error":{"message":"The gateway is starting: its upstream has not listed its models yet. Retry shortly.","type":"server_error","param":null,"code":"service_unavailable"}}`, body)
	res, body = send(t, http.MethodPost, srv.URL+"/v1beta/models/ok:generateContent", `{}`, "x-goog-api-key", "sk-demo")
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, body)
	require.Contains(t, body, `"status":"UNAVAILABLE"`)

	up.SetDown(false)
	require.NoError(t, <-done)
	res, body = send(t, http.MethodGet, srv.URL+"/v1/models", "", "Authorization", "Bearer sk-demo")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	require.Contains(t, body, `"id":"ok"`)
	res, body = send(t, http.MethodPost, srv.URL+"/v1/chat/completions", `{"model":"ok","messages":[{"role":"user","content":"Hi"}]}`,
		"Authorization", "Bearer sk-demo", "Content-Type", "application/json")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	require.Contains(t, body, relaytest.Text(8))

	got := attempts(logs.String())
	for i, n := range got {
		require.Equal(t, i+1, n, "each failed attempt is logged once: %v", got)
	}
	require.NotContains(t, logs.String(), up.Key)
}

// TestRelayStartupLogsNoUpstreamSecret: an upstream that refuses the
// relay's key and echoes it in its 401 has its reply logged, redacted.
func TestRelayStartupLogsNoUpstreamSecret(t *testing.T) {
	up := relaytest.NewUpstream()
	t.Cleanup(up.Close)
	up.Key = "sk-up-secret-1"
	ctx, cancel := context.WithCancel(context.Background())
	const wrong = "sk-wrong-key-123456"
	_, logs, done, _ := startRelay(t, ctx, up, wrong)
	require.Eventually(t, func() bool { return len(attempts(logs.String())) >= 2 }, 10*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	require.Contains(t, logs.String(), "401")
	require.Contains(t, logs.String(), "Bearer [redacted]")
	require.NotContains(t, logs.String(), wrong)
	require.NotContains(t, logs.String(), "Bearer sk-")
}

// TestRelayTranslatesTheMessagesFormat: a messages-format request is
// answered over the upstream's chat completions.
func TestRelayTranslatesTheMessagesFormat(t *testing.T) {
	up := exampleServer(t)
	gw := relayTo(t, up.URL+"/v1")
	req, err := http.NewRequest(http.MethodPost, gw.URL+"/v1/messages",
		strings.NewReader(`{"model":"demo-chat","max_tokens":64,"messages":[{"role":"user","content":"hello"}]}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", "sk-demo")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", b)
	require.Contains(t, string(b), `"type":"message"`)
	require.Contains(t, string(b), `You said: \"hello\".`)
}

func TestGCPercentFlagAndVariable(t *testing.T) {
	for _, tc := range []struct {
		name     string
		gogc     int
		explicit bool
		env      string
		want     int
		set      bool
	}{
		{"the default", defaultGOGC, false, "", defaultGOGC, true},
		{"GOGC rules over the default", defaultGOGC, false, "200", 0, false},
		{"GOGC=off rules over the default", defaultGOGC, false, "off", 0, false},
		{"-gogc rules over GOGC", 150, true, "200", 150, true},
		{"-gogc alone", 100, true, "", 100, true},
		{"-gogc -1 turns collection off", -1, true, "", -1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, set := gcPercent(tc.gogc, tc.explicit, tc.env)
			require.Equal(t, tc.set, set)
			require.Equal(t, tc.want, got)
		})
	}
}
