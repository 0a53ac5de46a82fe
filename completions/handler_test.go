package completions_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
)

const invalid = apierrors.TypeInvalidRequest

func TestHandlerRejectsBadRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		body       string
		wantStatus int
		wantBody   string
	}{
		{"empty body", ``, 400,
			errorBody("request body is empty; expected a JSON object", invalid, "", "invalid_request_error")},
		{"not JSON", `{"model"`, 400,
			errorBody("request body is not valid JSON: unexpected end of input", invalid, "", "invalid_request_error")},
		{"missing model", `{"prompt":"x"}`, 400,
			errorBody("model is required", invalid, "model", "invalid_request_error")},
		{"missing prompt", `{"model":"demo-chat"}`, 400,
			errorBody("prompt is required", invalid, "prompt", "invalid_request_error")},
		{"null prompt", `{"model":"demo-chat","prompt":null}`, 400,
			errorBody("prompt is required", invalid, "prompt", "invalid_request_error")},
		{"no prompts", `{"model":"demo-chat","prompt":[]}`, 400,
			errorBody("prompt must hold at least 1 items", invalid, "prompt", "invalid_request_error")},
		{"token prompt", `{"model":"demo-chat","prompt":[1,2,3]}`, 400,
			errorBody("prompt must be a string or an array of strings (arrays of token ids are not supported)", invalid, "prompt", "invalid_request_error")},
		{"prompt an object", `{"model":"demo-chat","prompt":{"text":"x"}}`, 400,
			errorBody("prompt must be a string or an array of strings (arrays of token ids are not supported)", invalid, "prompt", "invalid_request_error")},
		{"max_tokens zero", `{"model":"demo-chat","prompt":"x","max_tokens":0}`, 400,
			errorBody("max_tokens must be at least 1, got 0", invalid, "max_tokens", "invalid_request_error")},
		{"temperature too high", `{"model":"demo-chat","prompt":"x","temperature":2.01}`, 400,
			errorBody("temperature must be at most 2, got 2.01", invalid, "temperature", "invalid_request_error")},
		{"top_p negative", `{"model":"demo-chat","prompt":"x","top_p":-1}`, 400,
			errorBody("top_p must be at least 0, got -1", invalid, "top_p", "invalid_request_error")},
		{"n zero", `{"model":"demo-chat","prompt":"x","n":0}`, 400,
			errorBody("n must be at least 1, got 0", invalid, "n", "invalid_request_error")},
		{"n too large", `{"model":"demo-chat","prompt":"x","n":200}`, 400,
			errorBody("n must be at most 128, got 200", invalid, "n", "invalid_request_error")},
		{"batch too large", `{"model":"demo-chat","prompt":["a","b","c"],"n":50}`, 400,
			errorBody("n times the number of prompts must be at most 128, got 50 × 3", invalid, "n", "invalid_request_error")},
		{"five stop sequences", `{"model":"demo-chat","prompt":"x","stop":["a","b","c","d","e"]}`, 400,
			errorBody("stop must hold at most 4 items", invalid, "stop", "invalid_request_error")},
		{"stop an object", `{"model":"demo-chat","prompt":"x","stop":{}}`, 400,
			errorBody("stop must be a string or an array of strings", invalid, "stop", "invalid_request_error")},
		{"stream not a boolean", `{"model":"demo-chat","prompt":"x","stream":1}`, 400,
			errorBody("stream must be a boolean, got number", invalid, "stream", "invalid_request_error")},
		{"unknown model", `{"model":"davinci","prompt":"x"}`, 404,
			errorBody(`The model "davinci" does not exist or you do not have access to it.`, invalid, "model", "model_not_found")},
		{"model without compat", `{"model":"demo-video","prompt":"x"}`, 400,
			errorBody(`model "demo-video" does not support endpoint type "compat" (supported_endpoint_types: compat-video)`, invalid, "model", "invalid_request_error")},
		{"backend failure", `{"model":"demo-chat","prompt":"[demo:fail]"}`, 502,
			errorBody("demo: simulated upstream failure ([demo:fail])", apierrors.TypeUpstream, "", "bad_gateway")},
	}
	h := newTestHandler()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			endpointtest.RequireJSON(t, post(t, h, tc.body), tc.wantStatus, tc.wantBody)
		})
	}
}

// funcBackend is a Backend made of a function; funcStreamingBackend
// adds the stream (its complete may be nil); deltas makes a stream
// function that yields the deltas given.
type (
	funcBackend          = endpointtest.FuncBackend[completions.Params, completions.Result]
	funcStreamingBackend = endpointtest.FuncStreamingBackend[completions.Params, completions.Result, completions.Delta]
)

var deltas = endpointtest.Deltas[completions.Params, completions.Delta]

func TestHandlerRejectsBrokenBackends(t *testing.T) {
	t.Parallel()
	internal := errorBody("internal server error", apierrors.TypeServer, "", "internal_server_error")
	h := newHandlerWith(funcBackend{CompleteFunc: func(context.Context, *completions.Params) (*completions.Result, error) {
		return &completions.Result{}, nil
	}})
	w := post(t, h, `{"model":"demo-chat","prompt":"x"}`)
	require.Equal(t, 500, w.Code)
	require.JSONEq(t, internal, w.Body.String())

	for name, ds := range map[string][]completions.Delta{
		"choice out of range": {{Text: "a"}, {Choice: 1, Text: "b"}},
		"delta after finish":  {{Text: "a", FinishReason: endpoint.FinishStop}, {Text: "b"}},
	} {
		h := newHandlerWith(funcStreamingBackend{StreamFunc: deltas(ds...)})
		w := post(t, h, `{"model":"demo-chat","prompt":"x","stream":true}`)
		evs := readEvents(t, w.Body.String())
		checkStream(t, evs, 1, false)
		require.JSONEq(t, internal, evs[len(evs)-1].Raw, name)
	}
}

func TestHandlerFinishesChoicesTheBackendLeavesOpen(t *testing.T) {
	t.Parallel()
	h := newHandlerWith(funcStreamingBackend{StreamFunc: deltas(
		completions.Delta{Choice: 1, Text: "b"},
		completions.Delta{Usage: &endpoint.Usage{PromptTokens: 2, CompletionTokens: 1}},
	)})
	w := post(t, h, `{"model":"demo-chat","prompt":["x","y"],"stream":true,"stream_options":{"include_usage":true}}`)
	evs := readEvents(t, w.Body.String())
	checkStream(t, evs, 2, true)
	var got []string
	for _, ev := range evs {
		got = append(got, normalizeIDs(ev.Raw))
	}
	require.Equal(t, []string{
		`{"id":"cmpl-*","object":"text_completion","created":1700000000,"choices":[{"index":1,"text":"b","finish_reason":null}]}`,
		`{"id":"cmpl-*","object":"text_completion","created":1700000000,"choices":[{"index":0,"text":"","finish_reason":"stop"}]}`,
		`{"id":"cmpl-*","object":"text_completion","created":1700000000,"choices":[{"index":1,"text":"","finish_reason":"stop"}]}`,
		`{"id":"cmpl-*","object":"text_completion","created":1700000000,"choices":[],"usage":{"prompt_tokens":2,"completion_tokens":1,"total_tokens":3}}`,
		`[DONE]`,
	}, got)
}

func TestHandlerStreamsTheResultOfABackendThatDoesNotStream(t *testing.T) {
	t.Parallel()
	h := newHandlerWith(funcBackend{CompleteFunc: func(context.Context, *completions.Params) (*completions.Result, error) {
		return &completions.Result{Choices: []completions.Output{{Text: "one"}, {Text: "two", FinishReason: endpoint.FinishLength}}}, nil
	}})
	w := post(t, h, `{"model":"demo-chat","prompt":"x","n":2,"stream":true}`)
	evs := readEvents(t, w.Body.String())
	checkStream(t, evs, 2, false)
	require.Len(t, evs, 3)
	require.Equal(t, "length", evs[1].JSON["choices"].([]any)[0].(map[string]any)["finish_reason"])
}

func TestHandlerKeepsUnknownFields(t *testing.T) {
	t.Parallel()
	var (
		mu  sync.Mutex
		got *completions.Request
	)
	h := newHandlerWith(funcBackend{CompleteFunc: func(_ context.Context, p *completions.Params) (*completions.Result, error) {
		mu.Lock()
		got = p.Request
		mu.Unlock()
		return &completions.Result{Choices: make([]completions.Output, 1)}, nil
	}})
	body := `{"model":"demo-chat","prompt":"x","suffix":"!","echo":true,"logprobs":2,"best_of":1,"stop":["a"],"stream_options":{"include_usage":true}}`
	require.Equal(t, 200, post(t, h, body).Code)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, json.RawMessage(`"!"`), got.Extra["suffix"])
	out, err := json.Marshal(got)
	require.NoError(t, err)
	require.JSONEq(t, body, string(out))
}

func TestPromptEncodesInTheFormItWasSent(t *testing.T) {
	t.Parallel()
	for _, s := range []string{`"one"`, `["one","two"]`} {
		var p completions.Prompt
		require.NoError(t, json.Unmarshal([]byte(s), &p))
		out, err := json.Marshal(p)
		require.NoError(t, err)
		require.Equal(t, s, string(out))
	}
}

func TestHandlerChargesTheKey(t *testing.T) {
	t.Parallel()
	h, keys := servedtest.Keyed(t, newTestHandler(), auth.LimitedQuota(1000))
	w := post(t, h, `{"model":"demo-chat","prompt":"Hi"}`)
	require.Equal(t, 200, w.Code)
	var c completions.Completion
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &c))
	require.Equal(t, 200, post(t, h, `{"model":"demo-chat","prompt":"Hi","stream":true}`).Code)
	require.Equal(t, int64(1000-2*c.Usage.TotalTokens), keys.Quota(t).Remaining)
}

func TestNewHandlerPanicsOnNilDependencies(t *testing.T) {
	t.Parallel()
	require.PanicsWithValue(t, "completions: NewHandler: nil Catalog", func() { completions.NewHandler(nil, funcBackend{}) })
	require.PanicsWithValue(t, "completions: NewHandler: nil Backend", func() { completions.NewHandler(testCatalog(), nil) })
}
