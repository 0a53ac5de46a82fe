package relaytest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// GeminiUpstream is a fake Gemini-format upstream: an httptest server that
// answers POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent?alt=sse as Google's Gemini API documents them,
// for testing a relay's native Gemini backend:
//
//   - replies are GenerateContentResponse objects in camelCase
//     (candidates with content.parts, finishReason, index; usageMetadata
//     with promptTokenCount, candidatesTokenCount, thoughtsTokenCount and
//     totalTokenCount; modelVersion; responseId);
//   - a stream (alt=sse) is one "data: <json>" line per event, each event
//     ending with "\r\n\r\n", no event: line and no [DONE]; every event
//     carries the usageMetadata so far, and the last one the
//     finishReason; function calls come whole, in one event;
//   - errors are Google's error object {"error":{"code","message",
//     "status","details"}}: a request that carries an Authorization
//     header is a 401 UNAUTHENTICATED (Google takes it for an OAuth
//     token), one without x-goog-api-key a 403 PERMISSION_DENIED, one
//     with another key than Key a 400 INVALID_ARGUMENT whose ErrorInfo
//     reason is API_KEY_INVALID, and ModeStatus429 a 429
//     RESOURCE_EXHAUSTED with a RetryInfo detail (retryDelay "7s");
//   - as Gemini 3 models do, a request whose history holds a model turn
//     whose first functionCall part has no thoughtSignature is a 400
//     INVALID_ARGUMENT.
//
// The model of the path selects the behaviour: [ModeOK] (the default)
// answers [Text] of Chunks words (8 by default), one word per event;
// [ModeTools] calls "get_weather" with {"city":"Paris"}, the call signed
// with GeminiSignature; [ModeReasoning]
// sends a thought part first (GeminiThought) and counts its tokens in
// thoughtsTokenCount; [ModeNoDone] ends the stream before the
// finishReason; [ModeErrorEvent] sends one event and then an error
// object; [ModeStatus400], [ModeStatus429] and [ModeStatus500] answer
// those statuses.
type GeminiUpstream struct {
	*httptest.Server
	// Key is the only key accepted, in x-goog-api-key.
	Key string
	// Chunks is the number of words of a reply; 8 when zero.
	Chunks int

	mu       sync.Mutex
	requests []*Request
}

// GeminiSignature is the thoughtSignature of the function call of a
// [ModeTools] reply, as Gemini 3 models sign theirs.
const GeminiSignature = "CiQBjz1rX0Zha2VTaWduYXR1cmU="

// GeminiThought is the thought of a [ModeReasoning] reply.
const GeminiThought = "Thinking about it."

// NewGeminiUpstream starts a fake Gemini-format upstream, which the
// caller stops with Close. Its base URL for a relay is
// [GeminiUpstream.BaseURL].
func NewGeminiUpstream() *GeminiUpstream {
	g := &GeminiUpstream{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1beta/models/{action...}", g.serve)
	g.Server = httptest.NewServer(mux)
	return g
}

// BaseURL is the base URL of the fake for a relay's Upstream: its URL and
// /v1beta, as Google's is https://generativelanguage.googleapis.com/v1beta.
func (g *GeminiUpstream) BaseURL() string { return g.URL + "/v1beta" }

// Last returns the last request received; nil if none.
func (g *GeminiUpstream) Last() *Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.requests) == 0 {
		return nil
	}
	return g.requests[len(g.requests)-1]
}

func (g *GeminiUpstream) chunks() int {
	if g.Chunks <= 0 {
		return 8
	}
	return g.Chunks
}

// googleError writes Google's error object.
func googleError(w http.ResponseWriter, code int, status, message string, details ...any) {
	e := map[string]any{"code": code, "message": message, "status": status}
	if len(details) > 0 {
		e["details"] = details
	}
	writeJSON(w, code, map[string]any{"error": e})
}

func (g *GeminiUpstream) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	g.mu.Lock()
	g.requests = append(g.requests, &Request{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body,
		Cancelled: make(chan struct{}), Finished: make(chan struct{})})
	g.mu.Unlock()

	action := r.PathValue("action")
	i := strings.LastIndexByte(action, ':')
	if i < 0 {
		googleError(w, 404, "NOT_FOUND", "Method not found.")
		return
	}
	model, method := action[:i], action[i+1:]
	switch {
	case r.Header.Get("Authorization") != "":
		googleError(w, 401, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
		return
	case r.Header.Get("X-Goog-Api-Key") == "":
		googleError(w, 403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.")
		return
	case g.Key != "" && r.Header.Get("X-Goog-Api-Key") != g.Key:
		googleError(w, 400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.",
			map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"})
		return
	}
	var req struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				FunctionCall     json.RawMessage `json:"functionCall"`
				ThoughtSignature string          `json:"thoughtSignature"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Contents) == 0 {
		googleError(w, 400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: contents is not specified")
		return
	}
	for i, c := range req.Contents {
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				if p.ThoughtSignature == "" {
					googleError(w, 400, "INVALID_ARGUMENT", fmt.Sprintf("Function call is missing a thought_signature in functionCall parts. "+
						"This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. "+
						"Additional data, function call `default_api:x` , position %d.", i+1))
					return
				}
				break // the first call of a turn carries it
			}
		}
	}
	switch model {
	case ModeStatus400:
		googleError(w, 400, "INVALID_ARGUMENT", "Invalid value at 'generation_config.temperature' (TYPE_FLOAT), \"hot\"")
		return
	case ModeStatus429:
		googleError(w, 429, "RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan and billing details.",
			map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []any{map[string]any{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests"}}},
			map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"})
		return
	case ModeStatus500:
		googleError(w, 500, "INTERNAL", "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting")
		return
	}
	switch method {
	case "generateContent":
		writeJSON(w, 200, g.whole(model))
	case "streamGenerateContent":
		if r.URL.Query().Get("alt") != "sse" {
			googleError(w, 400, "INVALID_ARGUMENT", "this fake streams with alt=sse only")
			return
		}
		g.stream(w, model)
	default:
		googleError(w, 404, "NOT_FOUND", fmt.Sprintf("models/%s is not found for API version v1beta, or is not supported for %s.", model, method))
	}
}

// geminiUsage is the usageMetadata of a reply of out words (and thoughts).
func geminiUsage(out, thoughts int) map[string]int {
	u := map[string]int{"promptTokenCount": PromptTokens, "totalTokenCount": PromptTokens + out + thoughts}
	if out > 0 {
		u["candidatesTokenCount"] = out
	}
	if thoughts > 0 {
		u["thoughtsTokenCount"] = thoughts
	}
	return u
}

const thoughtTokens = 4

// whole is the reply of generateContent.
func (g *GeminiUpstream) whole(model string) map[string]any {
	var parts []any
	thoughts, out := 0, g.chunks()
	switch model {
	case ModeTools:
		parts = []any{map[string]any{"functionCall": map[string]any{"name": "get_weather", "args": map[string]any{"city": "Paris"}}, "thoughtSignature": GeminiSignature}}
		out = 5
	case ModeReasoning:
		parts = []any{map[string]any{"text": GeminiThought, "thought": true}, map[string]any{"text": Text(g.chunks())}}
		thoughts = thoughtTokens
	default:
		parts = []any{map[string]any{"text": Text(g.chunks())}}
	}
	return map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"parts": parts, "role": "model"}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": geminiUsage(out, thoughts),
		"modelVersion":  model,
		"responseId":    "resp-fake-1",
	}
}

// stream writes the events of streamGenerateContent?alt=sse.
func (g *GeminiUpstream) stream(w http.ResponseWriter, model string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	fl := w.(http.Flusher)
	send := func(v any) {
		var b bytes.Buffer
		_ = json.NewEncoder(&b).Encode(v)
		fmt.Fprintf(w, "data: %s\r\n\r\n", bytes.TrimSpace(b.Bytes()))
		fl.Flush()
	}
	event := func(parts []any, finish string, out, thoughts int) map[string]any {
		c := map[string]any{"content": map[string]any{"parts": parts, "role": "model"}, "index": 0}
		if finish != "" {
			c["finishReason"] = finish
		}
		return map[string]any{"candidates": []any{c}, "usageMetadata": geminiUsage(out, thoughts), "modelVersion": model, "responseId": "resp-fake-1"}
	}
	if model == ModeTools {
		send(event([]any{map[string]any{"functionCall": map[string]any{"name": "get_weather", "args": map[string]any{"city": "Paris"}}, "thoughtSignature": GeminiSignature}}, "STOP", 5, 0))
		return
	}
	thoughts := 0
	if model == ModeReasoning {
		thoughts = thoughtTokens
		send(event([]any{map[string]any{"text": GeminiThought, "thought": true}}, "", 0, thoughts))
	}
	n := g.chunks()
	for i := range n {
		finish := ""
		if i == n-1 {
			if model == ModeNoDone {
				return
			}
			finish = "STOP"
		}
		send(event([]any{map[string]any{"text": Word(i)}}, finish, i+1, thoughts))
		if model == ModeErrorEvent {
			send(map[string]any{"error": map[string]any{"code": 503, "status": "UNAVAILABLE", "message": "The model is overloaded. Please try again later."}})
			return
		}
	}
}
