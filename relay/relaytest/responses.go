package relaytest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// The modes that only the responses endpoint knows.
const (
	// ModeIncomplete answers a response that stops at max_output_tokens
	// (status incomplete).
	ModeIncomplete = "incomplete"
	// ModeReasoning answers as ModeOK, with a reasoning item whose summary
	// has two parts (ReasoningSummary), streamed as
	// response.reasoning_summary_text.delta events.
	ModeReasoning = "reasoning"
	// ModeReasoningAtDone answers as ModeReasoning, but streams no summary
	// deltas: the summary comes only in the reasoning item's
	// response.output_item.done, as some servers send it.
	ModeReasoningAtDone = "reasoning-at-done"
	// ModeNotAResponse answers 200 with a JSON list, streaming or not.
	ModeNotAResponse = "not-a-response"
	// ModeErrorObject answers 200 with an error object, streaming or not,
	// whose message echoes the request's credential.
	ModeErrorObject = "error-object"
)

// EncryptedReasoning is the encrypted_content of the reasoning item "rs_up"
// of every response, when the request's include lists
// "reasoning.encrypted_content" (in the finished item: the
// response.output_item.done event and the response's output).
const EncryptedReasoning = "gAAAAB-relaytest-encrypted-reasoning=="

// ReasoningSummary are the summary parts of ModeReasoning's reasoning
// item; each is streamed in two deltas, split at its first space.
var ReasoningSummary = []string{"**Planning** the answer.", "Counting the tokens."}

// responses answers POST /v1/responses as OpenAI's API does: a response
// object whose output is a reasoning item and then a message (or, in
// ModeTools, a function call), or the typed event stream of that
// response. The modes are those of chat completions; ModeNoDone ends the
// stream without its terminal event.
func (u *Upstream) responses(w http.ResponseWriter, r *http.Request) {
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
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"resp_up","output":[`)
			return
		}
	case ModeNotAResponse:
		writeJSON(w, 200, []any{map[string]any{"id": "resp_up", "object": "response"}})
		return
	case ModeErrorObject:
		writeJSON(w, 200, map[string]any{"error": map[string]any{"message": "upstream overloaded at " + LeakHost + " serving " + credential(r), "type": "server_error"}})
		return
	}
	k := u.chunks()
	reasoning := map[string]any{"type": "reasoning", "id": "rs_up", "summary": []any{}}
	if req.Model == ModeReasoning || req.Model == ModeReasoningAtDone {
		parts := make([]any, len(ReasoningSummary))
		for i, s := range ReasoningSummary {
			parts[i] = map[string]any{"type": "summary_text", "text": s}
		}
		reasoning["summary"] = parts
	}
	if slices.Contains(req.Include, "reasoning.encrypted_content") {
		reasoning["encrypted_content"] = EncryptedReasoning
	}
	var item map[string]any
	if req.Model == ModeTools {
		item = map[string]any{"type": "function_call", "id": "fc_up", "call_id": "call_up1", "name": "get_weather", "arguments": `{"city":"Paris"}`, "status": "completed"}
	} else {
		item = map[string]any{"type": "message", "id": "msg_up", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": Text(k), "annotations": []any{}}}}
	}
	resp := func(status string, output []any, withUsage bool) map[string]any {
		out := map[string]any{"id": "resp_up", "object": "response", "created_at": 1, "status": status, "model": req.Model + "-upstream", "output": output}
		if withUsage {
			out["usage"] = map[string]any{"input_tokens": PromptTokens, "output_tokens": k, "total_tokens": PromptTokens + k}
			if req.Model == ModeDetails {
				out["usage"] = map[string]any{"input_tokens": PromptTokens, "input_tokens_details": map[string]int{"cached_tokens": CachedTokens},
					"output_tokens": k, "output_tokens_details": map[string]int{"reasoning_tokens": ReasoningTokens}, "total_tokens": PromptTokens + k}
			}
		}
		if status == "incomplete" {
			out["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
		}
		return out
	}
	final := "completed"
	if req.Model == ModeIncomplete {
		final = "incomplete"
	}
	if !req.Stream {
		writeJSON(w, 200, resp(final, []any{reasoning, item}, true))
		return
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	fl := w.(http.Flusher)
	seq := 0
	send := func(typ string, v map[string]any) bool {
		v["type"] = typ
		v["sequence_number"] = seq
		seq++
		b, _ := json.Marshal(v)
		_, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		fl.Flush()
		return err == nil && r.Context().Err() == nil
	}
	if !send("response.created", map[string]any{"response": resp("in_progress", []any{}, false)}) ||
		!send("response.in_progress", map[string]any{"response": resp("in_progress", []any{}, false)}) ||
		!send("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"type": "reasoning", "id": "rs_up", "summary": []any{}}}) {
		return
	}
	if req.Model == ModeReasoning {
		for i, s := range ReasoningSummary {
			ref := map[string]any{"output_index": 0, "item_id": "rs_up", "summary_index": i}
			with := func(k string, v any) map[string]any {
				m := map[string]any{k: v}
				for k, v := range ref {
					m[k] = v
				}
				return m
			}
			head, tail, _ := strings.Cut(s, " ")
			if !send("response.reasoning_summary_part.added", with("part", map[string]any{"type": "summary_text", "text": ""})) ||
				!send("response.reasoning_summary_text.delta", with("delta", head)) ||
				!send("response.reasoning_summary_text.delta", with("delta", " "+tail)) ||
				!send("response.reasoning_summary_text.done", with("text", s)) ||
				!send("response.reasoning_summary_part.done", with("part", map[string]any{"type": "summary_text", "text": s})) {
				return
			}
		}
	}
	if !send("response.output_item.done", map[string]any{"output_index": 0, "item": reasoning}) {
		return
	}
	if req.Model == ModeTools {
		added := map[string]any{"type": "function_call", "id": "fc_up", "call_id": "call_up1", "name": "get_weather", "arguments": "", "status": "in_progress"}
		if !send("response.output_item.added", map[string]any{"output_index": 1, "item": added}) {
			return
		}
		for _, part := range []string{`{"city":`, `"Paris"}`} {
			if !send("response.function_call_arguments.delta", map[string]any{"output_index": 1, "item_id": "fc_up", "delta": part}) {
				return
			}
		}
		if !send("response.function_call_arguments.done", map[string]any{"output_index": 1, "item_id": "fc_up", "arguments": `{"city":"Paris"}`}) {
			return
		}
	} else {
		added := map[string]any{"type": "message", "id": "msg_up", "status": "in_progress", "role": "assistant", "content": []any{}}
		if !send("response.output_item.added", map[string]any{"output_index": 1, "item": added}) ||
			!send("response.content_part.added", map[string]any{"output_index": 1, "item_id": "msg_up", "content_index": 0, "part": map[string]any{"type": "output_text", "text": ""}}) {
			return
		}
		for i := 0; i < k; i++ {
			if breakStream(w, r, req.Model, i,
				"event: response.output_text.delta\ndata: {\"type\":\n\n", "data: {\"type\":",
				func() {
					send("error", map[string]any{"code": "server_error", "message": "upstream overloaded at " + LeakHost + " serving " + credential(r), "param": nil})
				}) {
				return
			}
			if !send("response.output_text.delta", map[string]any{"output_index": 1, "item_id": "msg_up", "content_index": 0, "delta": Word(i)}) {
				return
			}
		}
		if !send("response.output_text.done", map[string]any{"output_index": 1, "item_id": "msg_up", "content_index": 0, "text": Text(k)}) {
			return
		}
	}
	if !send("response.output_item.done", map[string]any{"output_index": 1, "item": item}) || req.Model == ModeNoDone {
		return
	}
	send("response."+final, map[string]any{"response": resp(final, []any{reasoning, item}, req.Model != ModeNoUsage)})
}

// compact answers POST /v1/responses/compact: the user messages of the
// input, then a compaction item whose encrypted content names the number
// of input items ("enc:<n>").
func (u *Upstream) compact(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string            `json:"model"`
		Input []json.RawMessage `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, 400, "We could not parse the JSON body of your request.", "invalid_request_error", "")
		return
	}
	if leakMode(w, r, req.Model) || statusMode(w, req.Model) {
		return
	}
	writeJSON(w, 200, map[string]any{
		"id": "resp_upc", "object": "response.compaction", "created_at": 1,
		"output": []any{map[string]any{"type": "compaction", "id": "cmp_up", "encrypted_content": fmt.Sprintf("enc:%d", len(req.Input))}},
		"usage":  map[string]any{"input_tokens": PromptTokens, "output_tokens": 3, "total_tokens": PromptTokens + 3},
	})
}
