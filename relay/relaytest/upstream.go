package relaytest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The model names that select a behaviour. Any other name is answered
// normally ([ModeOK]).
const (
	// ModeOK answers normally: a JSON reply, or a stream of Chunks chunks
	// ending with the usage chunk (when include_usage is asked) and
	// "data: [DONE]".
	ModeOK = "ok"
	// ModeSlow streams as ModeOK, waiting Delay before each chunk.
	ModeSlow = "slow"
	// ModeTools answers with a call of the function "get_weather".
	ModeTools = "tools"
	// ModeNoUsage streams as ModeOK but never sends usage, even when
	// asked.
	ModeNoUsage = "no-usage"
	// ModeDetails answers as ModeOK, with the usage's details as a
	// provider reports them: [CachedTokens] of the prompt tokens read
	// from its cache and [ReasoningTokens] of the completion tokens
	// spent reasoning (prompt_tokens_details, completion_tokens_details;
	// the responses format's input_tokens_details and
	// output_tokens_details).
	ModeDetails = "details"
	// ModeDie sends two chunks, then drops the connection.
	ModeDie = "die"
	// ModeNoDone sends the chunks, then ends the stream without [DONE].
	ModeNoDone = "no-done"
	// ModeHang never answers: it waits until the request is cancelled.
	ModeHang = "hang"
	// ModeHangMidStream sends two chunks, then waits until the request is
	// cancelled.
	ModeHangMidStream = "hang-mid-stream"
	// ModeMalformedJSON answers 200 with a body that is not JSON; when
	// streaming, one chunk and then an event whose data is not JSON.
	ModeMalformedJSON = "malformed-json"
	// ModeMalformedSSE streams one chunk, then ends the stream in the
	// middle of a line.
	ModeMalformedSSE = "malformed-sse"
	// ModeErrorEvent streams one chunk, then an error event
	// (data: {"error":{…}}).
	ModeErrorEvent = "error-event"
	// ModeStatus400, ModeStatus401, ModeStatus429 (with Retry-After: 7)
	// and ModeStatus500 answer that status with an OpenAI error envelope.
	ModeStatus400 = "status-400"
	ModeStatus401 = "status-401"
	ModeStatus429 = "status-429"
	ModeStatus500 = "status-500"
	// ModeStatus403 answers 403 with an OpenAI error envelope.
	ModeStatus403 = "status-403"

	// ModeLeak401, ModeLeak403, ModeLeak400 and ModeLeak500 answer that
	// status with an error envelope whose message echoes the credential
	// that the request carried (its Authorization, x-api-key or
	// x-goog-api-key header, in full) and the internal host [LeakHost],
	// as careless upstreams do: a relay must pass none of it on.
	ModeLeak401 = "leak-401"
	ModeLeak403 = "leak-403"
	ModeLeak400 = "leak-400"
	ModeLeak500 = "leak-500"
)

// LeakHost is the internal host name that the leak modes, and the error
// events of ModeErrorEvent, name in their messages.
const LeakHost = "llm-7.corp.internal"

// PromptTokens is the prompt_tokens of every usage the fake reports; the
// completion tokens are the number of chunks (one token each).
const PromptTokens = 11

// CachedTokens and ReasoningTokens are the details of [ModeDetails]'s
// usage. ReasoningTokens is at most the completion tokens of a reply of
// the default length.
const (
	CachedTokens    = 7
	ReasoningTokens = 3
)

// A Request is a request that the fake received.
type Request struct {
	Method string
	Path   string // with the query, if any
	Header http.Header
	Body   []byte
	// Cancelled is closed when the fake saw the request's context end
	// before it had answered in full: the client (the relay) went away.
	Cancelled chan struct{}
	// Finished is closed when the fake's handler returned.
	Finished chan struct{}
}

// Upstream is the fake upstream. Set its fields before the first request;
// it is safe for concurrent use after that.
type Upstream struct {
	*httptest.Server

	// Chunks is the number of content chunks of a stream (and of words
	// of a JSON reply); 8 if zero.
	Chunks int
	// Delay is the wait before each chunk in ModeSlow.
	Delay time.Duration
	// Key, when set, is the only key accepted (Authorization: Bearer);
	// other requests get a 401.
	Key string
	// Video is the video task behaviour; see [VideoOptions].
	Video VideoOptions
	// Models are the ids that GET /v1/models lists (without
	// supported_endpoint_types, as plain OpenAI-compatible servers list
	// them); [ModeOK] if empty.
	Models []string

	down     atomic.Bool
	mu       sync.Mutex
	requests []*Request
	videos   map[string]*video
	nextID   int
}

// NewUpstream starts a fake upstream, which the caller stops with Close,
// as with httptest.NewServer. Its base URL for a relay is its URL and
// "/v1" ([Upstream.BaseURL]).
func NewUpstream() *Upstream {
	u := &Upstream{videos: map[string]*video{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", u.chat)
	mux.HandleFunc("POST /v1/completions", u.completions)
	mux.HandleFunc("POST /v1/responses", u.responses)
	mux.HandleFunc("POST /v1/responses/compact", u.compact)
	mux.HandleFunc("POST /v1/videos", u.createVideo)
	mux.HandleFunc("POST /v1/vendorai/videos", u.createVideo)
	mux.HandleFunc("GET /v1/videos/{id}", u.getVideo)
	mux.HandleFunc("GET /v1/videos/{id}/content", u.videoContent)
	mux.HandleFunc("GET /cdn/{name}", cdn)
	mux.HandleFunc("GET /v1/models", u.models)
	mux.HandleFunc("POST /v1/embeddings", u.embeddings)
	mux.HandleFunc("POST /v1/messages", u.messages)
	mux.HandleFunc("POST /v1beta/models/{action...}", u.gemini)
	u.Server = httptest.NewServer(u.record(mux))
	return u
}

// SetDown makes the fake go down (every request it receives is recorded,
// then its connection dropped without a reply, as a dead server's would
// be) or come back up.
func (u *Upstream) SetDown(down bool) { u.down.Store(down) }

// models answers GET /v1/models.
func (u *Upstream) models(w http.ResponseWriter, r *http.Request) {
	ids := u.Models
	if len(ids) == 0 {
		ids = []string{ModeOK}
	}
	data := make([]any, len(ids))
	for i, id := range ids {
		data[i] = map[string]any{"id": id, "object": "model", "created": 1, "owned_by": "relaytest"}
	}
	writeJSON(w, 200, map[string]any{"object": "list", "data": data})
}

// BaseURL is the base URL a relay's Upstream takes: the server's URL and
// /v1.
func (u *Upstream) BaseURL() string { return u.URL + "/v1" }

// Requests returns the requests received so far, in order.
func (u *Upstream) Requests() []*Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*Request(nil), u.requests...)
}

// Last returns the last request received; nil if none.
func (u *Upstream) Last() *Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.requests) == 0 {
		return nil
	}
	return u.requests[len(u.requests)-1]
}

func (u *Upstream) chunks() int {
	if u.Chunks <= 0 {
		return 8
	}
	return u.Chunks
}

type recordKey struct{}

// record keeps each request and watches its context.
func (u *Upstream) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec := &Request{
			Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body,
			Cancelled: make(chan struct{}), Finished: make(chan struct{}),
		}
		u.mu.Lock()
		u.requests = append(u.requests, rec)
		u.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		stop := make(chan struct{})
		watched := make(chan struct{})
		var cancelled bool // set by the watcher before it closes watched
		go func() {
			defer close(watched)
			select {
			case <-r.Context().Done():
				cancelled = true
				close(rec.Cancelled)
			case <-stop:
			}
		}()
		defer func() {
			close(stop)
			<-watched
			// A handler that returned because the context ended (the hang
			// modes) closes stop when the context is already done: the
			// watcher may then have picked stop. The context cannot end
			// for another reason before this handler returns.
			if !cancelled && r.Context().Err() != nil {
				close(rec.Cancelled)
			}
			close(rec.Finished)
		}()
		if u.down.Load() {
			panic(http.ErrAbortHandler)
		}
		if u.Key != "" && !strings.HasPrefix(r.URL.Path, "/cdn/") && r.Header.Get("Authorization") != "Bearer "+u.Key &&
			r.Header.Get("X-Api-Key") != u.Key && r.Header.Get("X-Goog-Api-Key") != u.Key {
			writeError(w, 401, "Incorrect API key provided: "+credential(r)+" (at "+LeakHost+").", "invalid_request_error", "invalid_api_key")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// textRequest is what the fake reads of a chat or completions request.
type textRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	N             *int   `json:"n"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Include []string `json:"include"`
}

func (u *Upstream) chat(w http.ResponseWriter, r *http.Request)        { u.text(w, r, true) }
func (u *Upstream) completions(w http.ResponseWriter, r *http.Request) { u.text(w, r, false) }

func (u *Upstream) text(w http.ResponseWriter, r *http.Request, isChat bool) {
	var req textRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, 400, "We could not parse the JSON body of your request.", "invalid_request_error", "")
		return
	}
	if leakMode(w, r, req.Model) || statusMode(w, req.Model) {
		return
	}
	switch req.Model {
	case ModeHang:
		<-r.Context().Done()
		return
	case ModeMalformedJSON:
		if req.Stream {
			break
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","choices":[{"index":0,`)
		return
	}
	n := 1
	if req.N != nil {
		n = *req.N
	}
	if !req.Stream {
		u.textReply(w, req.Model, n, isChat)
		return
	}
	u.stream(w, r, &req, n, isChat)
}

// credential is the credential that r carries, as it was sent:
// "Bearer <key>", "x-api-key: <key>" or "x-goog-api-key: <key>"; "" if none.
func credential(r *http.Request) string {
	switch {
	case r.Header.Get("Authorization") != "":
		return r.Header.Get("Authorization")
	case r.Header.Get("X-Api-Key") != "":
		return "x-api-key: " + r.Header.Get("X-Api-Key")
	case r.Header.Get("X-Goog-Api-Key") != "":
		return "x-goog-api-key: " + r.Header.Get("X-Goog-Api-Key")
	}
	return ""
}

// leakMode answers the leak-* modes.
func leakMode(w http.ResponseWriter, r *http.Request, model string) bool {
	var status int
	switch model {
	case ModeLeak401:
		status = 401
	case ModeLeak403:
		status = 403
	case ModeLeak400:
		status = 400
	case ModeLeak500:
		status = 500
	default:
		return false
	}
	writeError(w, status, fmt.Sprintf("Request refused by %s: the credential %q, key=%s.", LeakHost, credential(r), bareKey(r)), "invalid_request_error", "")
	return true
}

// bareKey is the key of r's credential, without its scheme or header name.
func bareKey(r *http.Request) string {
	c := credential(r)
	if i := strings.LastIndexAny(c, " "); i >= 0 {
		return c[i+1:]
	}
	return c
}

// statusMode answers the error statuses of the status-* modes.
func statusMode(w http.ResponseWriter, model string) bool {
	switch model {
	case ModeStatus400:
		writeError(w, 400, "Invalid value for 'temperature'.", "invalid_request_error", "invalid_value")
	case ModeStatus401:
		writeError(w, 401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
	case ModeStatus429:
		w.Header().Set("Retry-After", "7")
		writeError(w, 429, "Rate limit reached for requests.", "requests", "rate_limit_exceeded")
	case ModeStatus500:
		writeError(w, 500, "The server had an error while processing your request.", "server_error", "")
	case ModeStatus403:
		writeError(w, 403, "You are not allowed to sample from this model.", "invalid_request_error", "model_not_allowed")
	default:
		return false
	}
	return true
}

// Word returns the text of content chunk i: "tok0", then " tok1", …
func Word(i int) string {
	if i == 0 {
		return "tok0"
	}
	return " tok" + strconv.Itoa(i)
}

// Text is the whole text of a reply of n chunks.
func Text(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(Word(i))
	}
	return b.String()
}

func usage(model string, completion int) map[string]any {
	u := map[string]any{"prompt_tokens": PromptTokens, "completion_tokens": completion, "total_tokens": PromptTokens + completion}
	if model == ModeDetails {
		u["prompt_tokens_details"] = map[string]int{"cached_tokens": CachedTokens, "audio_tokens": 0}
		u["completion_tokens_details"] = map[string]int{"reasoning_tokens": ReasoningTokens, "audio_tokens": 0,
			"accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
	}
	return u
}

func (u *Upstream) textReply(w http.ResponseWriter, model string, n int, isChat bool) {
	k := u.chunks()
	choices := make([]map[string]any, n)
	for i := range choices {
		if !isChat {
			choices[i] = map[string]any{"index": i, "text": Text(k), "finish_reason": "stop", "logprobs": nil}
			continue
		}
		msg := map[string]any{"role": "assistant", "content": Text(k), "refusal": nil}
		finish := "stop"
		if model == ModeTools {
			msg["content"] = nil
			msg["tool_calls"] = []map[string]any{{"id": "call_up1", "type": "function",
				"function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}}}
			finish = "tool_calls"
		}
		choices[i] = map[string]any{"index": i, "message": msg, "finish_reason": finish, "logprobs": nil}
	}
	obj := "text_completion"
	if isChat {
		obj = "chat.completion"
	}
	writeJSON(w, 200, map[string]any{
		"id": "upstream-id", "object": obj, "created": 1, "model": model + "-upstream",
		"choices": choices, "usage": usage(model, k*n), "system_fingerprint": "fp_up",
	})
}

func (u *Upstream) stream(w http.ResponseWriter, r *http.Request, req *textRequest, n int, isChat bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	fl := w.(http.Flusher)
	fl.Flush()
	send := func(v any) bool {
		b, _ := json.Marshal(v)
		_, err := fmt.Fprintf(w, "data: %s\n\n", b)
		fl.Flush()
		return err == nil && r.Context().Err() == nil
	}
	obj := "text_completion"
	if isChat {
		obj = "chat.completion.chunk"
	}
	chunk := func(choices ...map[string]any) map[string]any {
		return map[string]any{"id": "upstream-id", "object": obj, "created": 1, "model": req.Model + "-upstream", "choices": choices}
	}
	k := u.chunks()
	for c := 0; c < n; c++ {
		if isChat && !send(chunk(map[string]any{"index": c, "delta": map[string]any{"role": "assistant", "content": ""}, "finish_reason": nil})) {
			return
		}
	}
	if isChat && req.Model == ModeTools {
		for c := 0; c < n; c++ {
			first := map[string]any{"index": 0, "id": "call_up1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": ""}}
			rest := map[string]any{"index": 0, "function": map[string]any{"arguments": `{"city":"Paris"}`}}
			for _, tc := range []map[string]any{first, rest} {
				if !send(chunk(map[string]any{"index": c, "delta": map[string]any{"tool_calls": []any{tc}}, "finish_reason": nil})) {
					return
				}
			}
			if !send(chunk(map[string]any{"index": c, "delta": map[string]any{}, "finish_reason": "tool_calls"})) {
				return
			}
		}
		k = 2
	} else {
		for i := 0; i < k; i++ {
			switch {
			case req.Model == ModeSlow:
				select {
				case <-time.After(u.Delay):
				case <-r.Context().Done():
					return
				}
			case breakStream(w, r, req.Model, i,
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}\n\n", "data: {\"choices\":[",
				func() {
					send(map[string]any{"error": map[string]any{"message": "upstream overloaded at " + LeakHost + " serving " + credential(r), "type": "server_error", "code": nil}})
				}):
				return
			}
			for c := 0; c < n; c++ {
				var ch map[string]any
				if isChat {
					ch = map[string]any{"index": c, "delta": map[string]any{"content": Word(i)}, "finish_reason": nil}
				} else {
					ch = map[string]any{"index": c, "text": Word(i), "finish_reason": nil, "logprobs": nil}
				}
				if !send(chunk(ch)) {
					return
				}
			}
		}
		for c := 0; c < n; c++ {
			var ch map[string]any
			if isChat {
				ch = map[string]any{"index": c, "delta": map[string]any{}, "finish_reason": "stop"}
			} else {
				ch = map[string]any{"index": c, "text": "", "finish_reason": "stop", "logprobs": nil}
			}
			if !send(chunk(ch)) {
				return
			}
		}
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage && req.Model != ModeNoUsage {
		c := chunk()
		c["usage"] = usage(req.Model, k*n)
		if !send(c) {
			return
		}
	}
	if req.Model == ModeNoDone {
		return
	}
	io.WriteString(w, "data: [DONE]\n\n")
	fl.Flush()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, message, typ, code string) {
	e := map[string]any{"message": message, "type": typ, "param": nil, "code": nil}
	if code != "" {
		e["code"] = code
	}
	writeJSON(w, status, map[string]any{"error": e})
}

// breakStream breaks a stream at its event i as the failure modes do:
// ModeDie aborts the connection and ModeHangMidStream waits for the
// client to leave (at event 2); ModeMalformedJSON writes malformedJSON,
// ModeMalformedSSE writes malformedSSE, and ModeErrorEvent calls
// errorEvent (at event 1). It reports whether the stream must end.
func breakStream(w http.ResponseWriter, r *http.Request, mode string, i int, malformedJSON, malformedSSE string, errorEvent func()) bool {
	switch {
	case i == 2 && mode == ModeDie:
		panic(http.ErrAbortHandler)
	case i == 2 && mode == ModeHangMidStream:
		<-r.Context().Done()
	case i == 1 && mode == ModeMalformedJSON:
		io.WriteString(w, malformedJSON)
		w.(http.Flusher).Flush()
	case i == 1 && mode == ModeMalformedSSE:
		io.WriteString(w, malformedSSE)
		w.(http.Flusher).Flush()
	case i == 1 && mode == ModeErrorEvent:
		errorEvent()
	default:
		return false
	}
	return true
}
