package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
)

// setup starts the service in-process, relaying the model "upstream-chat"
// to a fake upstream, and returns its URL and the upstream.
func setup(t *testing.T) (string, *relaytest.Upstream) {
	t.Helper()
	url, up, _ := setupKeys(t)
	return url, up
}

// setupKeys is setup, and returns the users' key store too. Carol
// (sess-carol) may spend 30 tokens.
func setupKeys(t *testing.T) (string, *relaytest.Upstream, *auth.MemoryKeyStore) {
	t.Helper()
	up := relaytest.NewUpstream()
	t.Cleanup(up.Close)
	keys := auth.NewMemoryKeyStore()
	h, err := newService(config{
		users: users{"sess-alice": {ID: "u1", Name: "Alice", Team: "research"}, "sess-bob": {ID: "u2", Name: "Bob", Team: "sales"},
			"sess-carol": {ID: "u3", Name: "Carol", Team: "sales", Quota: 30}},
		keys:        keys,
		upstreamURL: up.BaseURL(),
		upstreamKey: "sk-upstream",
		relayed:     []string{"upstream-chat"},
	})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL, up, keys
}

// client is the official SDK as the session's user: the session in its
// header, no API key.
func client(url, session string) *openai.Client {
	c := openai.NewClient(option.WithBaseURL(url+"/v1/"), option.WithAPIKey(""),
		option.WithHeader("X-Session", session), option.WithMaxRetries(0))
	return &c
}

func TestTheSDKThroughChi(t *testing.T) {
	t.Parallel()
	url, up := setup(t)
	ctx := context.Background()
	c := client(url, "sess-alice")

	t.Run("ModelList", func(t *testing.T) {
		page, err := c.Models.List(ctx)
		require.NoError(t, err)
		var ids []string
		for _, m := range page.Data {
			ids = append(ids, m.ID)
		}
		require.Equal(t, []string{"demo-chat", "demo-reasoner", "demo-instruct", "upstream-chat"}, ids)
		m, err := c.Models.Get(ctx, "upstream-chat") // GET /v1/models/{id...}
		require.NoError(t, err)
		require.Equal(t, "upstream", m.OwnedBy)
	})
	t.Run("DemoModel", func(t *testing.T) {
		res, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:    "demo-chat",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello!")},
		})
		require.NoError(t, err)
		require.Contains(t, res.Choices[0].Message.Content, "Hello!")
	})
	t.Run("RelayedModel", func(t *testing.T) {
		stream := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model:    "upstream-chat",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello!")},
		})
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		require.NoError(t, stream.Err())
		require.Equal(t, relaytest.Text(8), acc.Choices[0].Message.Content) // the fake's 8 chunks
		last := up.Last()
		require.NotNil(t, last)
		require.Equal(t, "/v1/chat/completions", last.Path)
		require.Equal(t, "Bearer sk-upstream", last.Header.Get("Authorization"), "the upstream's key, never the session")
		require.Empty(t, last.Header.Get("X-Session"))
	})
	t.Run("Completions", func(t *testing.T) {
		res, err := c.Completions.New(ctx, openai.CompletionNewParams{
			Model:     "demo-instruct",
			Prompt:    openai.CompletionNewParamsPromptUnion{OfString: openai.String("Once upon a time")},
			MaxTokens: openai.Int(8),
		})
		require.NoError(t, err)
		require.NotEmpty(t, res.Choices[0].Text)
	})
	// GET /v1/responses/{response_id}: a path value on chi.
	t.Run("StoredResponse", func(t *testing.T) {
		created, err := c.Responses.New(ctx, responses.ResponseNewParams{
			Model: "demo-chat",
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hello!")},
		})
		require.NoError(t, err)
		got, err := c.Responses.Get(ctx, created.ID, responses.ResponseGetParams{})
		require.NoError(t, err)
		require.Equal(t, created.ID, got.ID)
		require.Equal(t, created.OutputText(), got.OutputText())

		// Another user's response does not exist for Bob.
		_, err = client(url, "sess-bob").Responses.Get(ctx, created.ID, responses.ResponseGetParams{})
		requireAPIError(t, err, http.StatusNotFound, "not_found")
	})
	t.Run("UnknownPath", func(t *testing.T) {
		err := c.Get(ctx, "nope", nil, nil)
		requireAPIError(t, err, http.StatusNotFound, "not_found")
	})
	t.Run("NoSession", func(t *testing.T) {
		_, err := client(url, "").Models.List(ctx)
		requireAPIError(t, err, http.StatusUnauthorized, "missing_authorization")
		_, err = client(url, "sess-mallory").Models.List(ctx)
		requireAPIError(t, err, http.StatusUnauthorized, "invalid_api_key")
	})
}

// requireAPIError checks that err is the API's error of status and code.
func requireAPIError(t *testing.T, err error, status int, code string) {
	t.Helper()
	var apiErr *openai.Error
	require.True(t, errors.As(err, &apiErr), "%v", err)
	require.Equal(t, status, apiErr.StatusCode)
	require.Equal(t, code, apiErr.Code)
}

// The service's own routes, and what no route serves, on the same router.
func TestTheServicesRoutesAndJSONErrors(t *testing.T) {
	t.Parallel()
	url, _ := setup(t)
	tests := []struct {
		name, method, path, session string
		status                      int
		allow                       string
		body                        string
	}{
		{name: "Healthz", method: "GET", path: "/healthz", status: 200, body: `{"status":"ok"}`},
		{name: "Profile", method: "GET", path: "/api/profile", session: "sess-alice", status: 200,
			body: `{"id":"u1","name":"Alice","team":"research"}`},
		{name: "ProfileWithoutSession", method: "GET", path: "/api/profile", status: 401, body: `{"error":"sign in first"}`},
		{name: "UnknownPath", method: "GET", path: "/v1/nope", session: "sess-alice", status: 404,
			body: `{"error":{"message":"Unknown request URL: GET /v1/nope. Please check the URL and the method.","type":"invalid_request_error","param":null,"code":"not_found"}}`},
		{name: "WrongMethod", method: "GET", path: "/v1/chat/completions", session: "sess-alice", status: 405, allow: "POST",
			body: `{"error":{"message":"The method GET is not allowed on /v1/chat/completions; use POST.","type":"invalid_request_error","param":null,"code":"method_not_allowed"}}`},
		{name: "WrongMethodOnAPathValueRoute", method: "PUT", path: "/v1/responses/resp_1", session: "sess-alice", status: 405, allow: "GET, HEAD, DELETE",
			body: `{"error":{"message":"The method PUT is not allowed on /v1/responses/resp_1; use GET or HEAD or DELETE.","type":"invalid_request_error","param":null,"code":"method_not_allowed"}}`},
		{name: "WrongMethodOnTheServicesRoute", method: "POST", path: "/healthz", status: 405, allow: "GET, HEAD",
			body: `{"error":{"message":"The method POST is not allowed on /healthz; use GET or HEAD.","type":"invalid_request_error","param":null,"code":"method_not_allowed"}}`},
		// The Gemini-style family answers in Google's error object: the
		// service serves its model routes, for GET only.
		{name: "GeminiStyleWrongMethod", method: "POST", path: "/v1beta/models/demo-chat:generateContent", status: 405, allow: "GET, HEAD",
			body: `{"error":{"code":405,"message":"The method POST is not allowed on /v1beta/models/demo-chat:generateContent; use GET or HEAD.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"METHOD_NOT_ALLOWED","domain":"gatewaykit"}]}}`},
		{name: "GeminiStyleUnknownPath", method: "GET", path: "/v1beta/nope", status: 404,
			body: `{"error":{"code":404,"message":"Unknown request URL: GET /v1beta/nope. Please check the URL and the method.","status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"NOT_FOUND","domain":"gatewaykit"}]}}`},
		{name: "HEADOfAGETRoute", method: "HEAD", path: "/v1/models", session: "sess-alice", status: 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(tc.method, url+tc.path, strings.NewReader(""))
			require.NoError(t, err)
			if tc.session != "" {
				req.Header.Set("X-Session", tc.session)
			}
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			body, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			require.Equal(t, tc.status, res.StatusCode, string(body))
			require.Equal(t, tc.allow, res.Header.Get("Allow"))
			if tc.body == "" {
				require.Empty(t, body)
				return
			}
			require.Equal(t, "application/json", res.Header.Get("Content-Type"))
			require.JSONEq(t, tc.body, string(body))
		})
	}
}

// TestSessionsAreCharged checks that a user's session is charged like an
// API key: Carol, with 30 tokens, gets 200s until her quota is spent,
// then 403 insufficient_quota; her usage is recorded against her key, by
// model; and a prompt that the guardrail refuses is a 400 charged
// nothing, for a demo model as for a relayed one.
func TestSessionsAreCharged(t *testing.T) {
	t.Parallel()
	url, up, keys := setupKeys(t)
	ctx := context.Background()
	c := client(url, "sess-carol")

	for _, model := range []string{"demo-chat", "upstream-chat"} {
		_, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:    model,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is Project Nightingale?")},
		})
		requireAPIError(t, err, http.StatusBadRequest, "invalid_request_error")
	}
	require.Nil(t, up.Last(), "the refused call never reached the upstream")
	k, err := keys.GetKey(ctx, "user-u3")
	require.NoError(t, err)
	require.Zero(t, k.Quota.Used, "a refusal is charged nothing")

	served := 0
	for range 10 {
		_, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:     "demo-chat",
			Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")},
			MaxTokens: openai.Int(4),
		})
		if err != nil {
			requireAPIError(t, err, http.StatusForbidden, "insufficient_quota")
			break
		}
		served++
	}
	require.Positive(t, served, "200s first")
	require.Less(t, served, 10, "then 403 insufficient_quota")

	k, err = keys.GetKey(ctx, "user-u3")
	require.NoError(t, err)
	require.GreaterOrEqual(t, k.Quota.Used, int64(30))
	rows, err := keys.Usage(ctx, auth.UsageParams{KeyID: "user-u3", GroupBy: auth.GroupByModel})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, "demo-chat", rows[0].Model)
	require.Equal(t, int64(served), rows[0].Requests)
	require.Equal(t, k.Quota.Used, rows[0].InputTokens+rows[0].OutputTokens)
}
