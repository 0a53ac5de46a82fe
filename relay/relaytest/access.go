package relaytest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The access points of the fake: POST /v1/embeddings, POST /v1/messages
// (the messages format) and POST /v1beta/models/{model}:generateContent
// or :streamGenerateContent (the Gemini style). Each answers a small
// reply of its format; the status and leak modes answer as on chat
// completions, and ModeErrorEvent streams (messages and Gemini) send one
// event and then an error event whose message names LeakHost and echoes
// the request's credential.

// embeddings answers POST /v1/embeddings.
func (u *Upstream) embeddings(w http.ResponseWriter, r *http.Request) {
	var req textRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, 400, "We could not parse the JSON body of your request.", "invalid_request_error", "")
		return
	}
	if leakMode(w, r, req.Model) || statusMode(w, req.Model) {
		return
	}
	writeJSON(w, 200, map[string]any{
		"object": "list", "model": req.Model,
		"data":  []any{map[string]any{"object": "embedding", "index": 0, "embedding": []float64{0.25, -0.5}}},
		"usage": map[string]int{"prompt_tokens": PromptTokens, "total_tokens": PromptTokens},
	})
}

// messages answers POST /v1/messages in the messages format.
func (u *Upstream) messages(w http.ResponseWriter, r *http.Request) {
	var req textRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, 400, "We could not parse the JSON body of your request.", "invalid_request_error", "")
		return
	}
	if leakMode(w, r, req.Model) || statusMode(w, req.Model) {
		return
	}
	msg := map[string]any{"id": "msg_up", "type": "message", "role": "assistant", "model": req.Model,
		"content": []any{map[string]any{"type": "text", "text": Text(u.chunks())}}, "stop_reason": "end_turn",
		"usage": map[string]int{"input_tokens": PromptTokens, "output_tokens": u.chunks()}}
	if !req.Stream {
		writeJSON(w, 200, msg)
		return
	}
	send := startEvents(w)
	send("message_start", map[string]any{"type": "message_start", "message": msg})
	if req.Model == ModeErrorEvent {
		send("error", map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error",
			"message": "upstream overloaded at " + LeakHost + " serving " + credential(r)}})
		return
	}
	send("message_stop", map[string]any{"type": "message_stop"})
}

// gemini answers POST /v1beta/models/{model}:{method} in the Gemini
// style.
func (u *Upstream) gemini(w http.ResponseWriter, r *http.Request) {
	action := r.PathValue("action")
	i := strings.LastIndexByte(action, ':')
	if i < 0 {
		http.NotFound(w, r)
		return
	}
	model, method := action[:i], action[i+1:]
	if leakMode(w, r, model) || statusMode(w, model) {
		return
	}
	reply := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": Text(u.chunks())}}}, "finishReason": "STOP"}},
		"usageMetadata": map[string]int{"promptTokenCount": PromptTokens, "candidatesTokenCount": u.chunks(), "totalTokenCount": PromptTokens + u.chunks()},
	}
	if method != "streamGenerateContent" {
		writeJSON(w, 200, reply)
		return
	}
	send := startEvents(w)
	if model == ModeErrorEvent {
		send("", map[string]any{"candidates": reply["candidates"]})
		send("", map[string]any{"error": map[string]any{"code": 503, "status": "UNAVAILABLE",
			"message": "upstream overloaded at " + LeakHost + " serving " + credential(r)}})
		return
	}
	send("", reply)
}

// startEvents starts an event stream and returns the function that
// sends one event (named typ unless it is empty), flushed.
func startEvents(w http.ResponseWriter) func(typ string, v any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	fl := w.(http.Flusher)
	return func(typ string, v any) {
		b, _ := json.Marshal(v)
		if typ != "" {
			fmt.Fprintf(w, "event: %s\n", typ)
		}
		fmt.Fprintf(w, "data: %s\n\n", b)
		fl.Flush()
	}
}
