package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/gatewaykit/gatewaykit/chat"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/messages"
	"github.com/gatewaykit/gatewaykit/sse"
)

// This file is the chat backend's way to an upstream whose API is the
// messages format ([APIAnthropic]): the chat request translated into a
// messages request for POST {BaseURL}/messages, and the reply, its
// events, its usage and its errors translated back. See [Relay.Chat].

// anthropicChat translates chat requests for an Anthropic-format
// upstream.
type anthropicChat struct{}

// defaultAnthropicMaxTokens is the max_tokens of a translated request
// that sets none, for a model without an OutputTokenLimit: the format
// requires one.
const defaultAnthropicMaxTokens = 4096

// The thinking budgets of the chat request's reasoning_effort.
var anthropicBudgets = map[string]int{"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}

// request builds the upstream request of p for u: the translated body,
// the key as x-api-key (see keyHeader) and anthropic-version.
func (anthropicChat) request(ctx context.Context, u *Upstream, p *chat.Params, stream bool) (*http.Request, error) {
	mr, err := anthropicRequest(p, u.Model, stream)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(mr)
	if err != nil {
		return nil, apierrors.Internal(fmt.Errorf("relay: encoding a messages request: %w", err))
	}
	req, err := newJSONRequest(ctx, http.MethodPost, u.URL("/messages"), body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Anthropic-Version", DefaultAnthropicVersion)
	req.Header.Set(keyHeader, "X-Api-Key")
	if stream {
		req.Header["Accept"] = []string{"text/event-stream"}
	}
	return req, nil
}

// anthropicRequest translates a chat request into a messages request for
// the upstream's model name model.
func anthropicRequest(p *chat.Params, model string, stream bool) (*messages.Request, error) {
	req := p.Request
	if req.Choices() != 1 {
		return nil, apierrors.InvalidRequest("n", "n must be 1 for this model: its upstream returns one choice")
	}
	out := &messages.Request{
		Model:         model,
		Stream:        stream,
		TopP:          req.TopP,
		StopSequences: req.Stop,
	}
	out.MaxTokens = req.TokenLimit()
	if out.MaxTokens <= 0 && p.Model != nil {
		out.MaxTokens = p.Model.OutputTokenLimit
	}
	if out.MaxTokens <= 0 {
		out.MaxTokens = defaultAnthropicMaxTokens
	}
	if t := req.Temperature; t != nil {
		v := min(*t, 1) // the format's temperature is 0 to 1
		out.Temperature = &v
	}
	if raw, ok := req.Extra["top_k"]; ok {
		k, err := strconv.Atoi(string(raw))
		if err != nil || k < 0 {
			return nil, apierrors.InvalidRequest("top_k", "top_k must be a non-negative integer")
		}
		out.TopK = &k
	}
	if raw, ok := req.Extra["user"]; ok {
		var user string
		if json.Unmarshal(raw, &user) == nil && user != "" {
			out.Metadata = &messages.Metadata{UserID: user}
		}
	}
	if raw, ok := req.Extra["reasoning_effort"]; ok && p.Model != nil && p.Model.Reasoning {
		var effort string
		_ = json.Unmarshal(raw, &effort)
		if budget, ok := anthropicBudgets[effort]; ok {
			out.Thinking = &messages.Thinking{Type: "enabled", BudgetTokens: budget}
			if out.MaxTokens <= budget {
				out.MaxTokens += budget
			}
		}
	}
	var system []string
	for i := range req.Messages {
		m := &req.Messages[i]
		param := fmt.Sprintf("messages[%d]", i)
		switch m.Role {
		case chat.RoleSystem, chat.RoleDeveloper:
			system = append(system, m.Content.String())
		case chat.RoleUser:
			blocks, err := anthropicBlocks(&m.Content, param)
			if err != nil {
				return nil, err
			}
			out.Messages = appendTurn(out.Messages, messages.RoleUser, blocks)
		case chat.RoleTool:
			text := m.Content.String()
			out.Messages = appendTurn(out.Messages, messages.RoleUser, []messages.ContentBlock{{
				Type: messages.BlockToolResult, ToolUseID: m.ToolCallID, Content: &messages.Content{Text: &text},
			}})
		case chat.RoleAssistant:
			var blocks []messages.ContentBlock
			if s := m.Content.String(); s != "" {
				blocks = append(blocks, messages.ContentBlock{Type: messages.BlockText, Text: s})
			}
			for j, tc := range m.ToolCalls {
				input := json.RawMessage(tc.Function.Arguments)
				if strings.TrimSpace(tc.Function.Arguments) == "" {
					input = json.RawMessage("{}")
				} else if !isJSONObject(input) {
					return nil, apierrors.InvalidRequestf(fmt.Sprintf("%s.tool_calls[%d].function.arguments", param, j),
						"%s.tool_calls[%d].function.arguments must be a JSON object for this model", param, j)
				}
				blocks = append(blocks, messages.ContentBlock{Type: messages.BlockToolUse, ID: tc.ID, Name: tc.Function.Name, Input: input})
			}
			if len(blocks) > 0 {
				out.Messages = appendTurn(out.Messages, messages.RoleAssistant, blocks)
			}
		}
	}
	if len(system) > 0 {
		s := strings.Join(system, "\n\n")
		out.System = &messages.Content{Text: &s}
	}
	for _, t := range req.Tools {
		if t.Function == nil {
			continue
		}
		schema := t.Function.Parameters
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out.Tools = append(out.Tools, messages.Tool{Name: t.Function.Name, Description: t.Function.Description, InputSchema: schema})
	}
	if len(out.Tools) > 0 {
		tc := &messages.ToolChoice{Type: "auto"}
		if c := req.ToolChoice; c != nil {
			switch {
			case c.Function != "":
				tc = &messages.ToolChoice{Type: "tool", Name: c.Function}
			case c.Mode == chat.ToolChoiceRequired:
				tc.Type = "any"
			case c.Mode == chat.ToolChoiceNone:
				tc.Type = "none"
			}
		}
		if raw, ok := req.Extra["parallel_tool_calls"]; ok && string(raw) == "false" {
			tc.DisableParallelToolUse = true
		}
		out.ToolChoice = tc
	}
	return out, nil
}

// appendTurn appends blocks as a turn of role, merged into the last turn
// when it has the same role (tool results and the user's next words are
// one user turn in the format).
func appendTurn(turns []messages.Message, role string, blocks []messages.ContentBlock) []messages.Message {
	if n := len(turns); n > 0 && turns[n-1].Role == role {
		turns[n-1].Content.Blocks = append(turns[n-1].Content.Blocks, blocks...)
		return turns
	}
	if blocks == nil {
		blocks = []messages.ContentBlock{}
	}
	return append(turns, messages.Message{Role: role, Content: messages.Content{Blocks: blocks}})
}

// anthropicBlocks translates a user message's content: text, and
// image_url parts as image blocks (a data: URI as base64 data).
func anthropicBlocks(c *chat.Content, param string) ([]messages.ContentBlock, error) {
	if c.Text != nil {
		return []messages.ContentBlock{{Type: messages.BlockText, Text: *c.Text}}, nil
	}
	blocks := make([]messages.ContentBlock, 0, len(c.Parts))
	for k, part := range c.Parts {
		switch {
		case part.Type == chat.PartText:
			blocks = append(blocks, messages.ContentBlock{Type: messages.BlockText, Text: part.Text})
		case part.Type == chat.PartImageURL && part.ImageURL != nil:
			blocks = append(blocks, messages.ContentBlock{Type: messages.BlockImage, Source: imageSource(part.ImageURL.URL)})
		default:
			return nil, apierrors.InvalidRequestf(fmt.Sprintf("%s.content[%d].type", param, k),
				"%s.content[%d]: %s parts are not supported by this model", param, k, apierrors.Quote(part.Type))
		}
	}
	return blocks, nil
}

// imageSource is the image source of an image URL: base64 data for a
// data: URI, the URL otherwise.
func imageSource(u string) *messages.ImageSource {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		meta, data, _ := strings.Cut(rest, ",")
		return &messages.ImageSource{Type: "base64", MediaType: strings.TrimSuffix(meta, ";base64"), Data: data}
	}
	return &messages.ImageSource{Type: "url", URL: u}
}

func isJSONObject(raw []byte) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

// complete reads the upstream's reply to a non-streaming request.
func (anthropicChat) complete(res *http.Response, u *Upstream) (*chat.Result, error) {
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, anthropicError(res, u)
	}
	var reply messages.Reply
	if err := readReply(res.Body, u, unmarshalInto(&reply)); err != nil {
		return nil, err
	}
	if reply.Type != "message" {
		return nil, malformed(u, "reply", fmt.Errorf("type %q, want message", reply.Type), nil)
	}
	return anthropicResult(&reply, u)
}

// anthropicResult translates a reply: text blocks make the content,
// thinking blocks the reasoning, tool_use blocks the tool calls; the
// usage's input tokens count the cached ones too.
func anthropicResult(reply *messages.Reply, u *Upstream) (*chat.Result, error) {
	var o chat.Output
	var text, reasoning strings.Builder
	for _, b := range reply.Content {
		switch b.Type {
		case messages.BlockText:
			text.WriteString(b.Text)
		case messages.BlockThinking:
			reasoning.WriteString(b.Thinking)
		case messages.BlockToolUse:
			if b.Name == "" {
				return nil, malformed(u, "reply", errors.New("a tool_use block without a name"), nil)
			}
			args := string(b.Input)
			if args == "" {
				args = "{}"
			}
			o.ToolCalls = append(o.ToolCalls, chat.ToolCall{ID: b.ID, Type: "function", Function: chat.FunctionCall{Name: b.Name, Arguments: args}})
		}
	}
	o.Content, o.Reasoning = text.String(), reasoning.String()
	o.FinishReason = messages.FinishReasonOf(reply.StopReason)
	return &chat.Result{Choices: []chat.Output{o}, Usage: anthropicUsage(&reply.Usage)}, nil
}

// anthropicUsage is the chat usage of a messages-format usage: the
// prompt tokens are the input tokens with the cache's reads and writes,
// which the format counts apart, and those are the prompt's cached_tokens
// and cache_write_tokens (prompt_tokens_details, set when the upstream
// reports either).
func anthropicUsage(u *messages.Usage) chat.Usage {
	in := u.InputTokens
	var d *chat.PromptTokensDetails
	if u.CacheCreationInputTokens != nil || u.CacheReadInputTokens != nil {
		d = new(chat.PromptTokensDetails)
	}
	if u.CacheCreationInputTokens != nil {
		in = addInts(in, *u.CacheCreationInputTokens)
		d.CacheWriteTokens = *u.CacheCreationInputTokens
	}
	if u.CacheReadInputTokens != nil {
		in = addInts(in, *u.CacheReadInputTokens)
		d.CachedTokens = *u.CacheReadInputTokens
	}
	return chat.Usage{PromptTokens: in, CompletionTokens: u.OutputTokens, TotalTokens: addInts(in, u.OutputTokens), PromptTokensDetails: d}
}

// anthropicError is the client's error for an upstream reply that is not
// a success: as [UpstreamError] makes it, with the type and code of the
// status (the format's error types, such as not_found_error, are not the
// OpenAI format's).
func anthropicError(res *http.Response, u *Upstream) error {
	err := UpstreamError(res, u)
	var e *apierrors.Error
	if errors.As(err, &e) && e.Status >= 400 && e.Status < 500 {
		typ, code := defaultTypeAndCode(e.Status)
		e.Type, e.Code = typ, apierrors.Code(code)
	}
	return err
}

// stream reads the upstream's event stream, and yields its deltas.
func (anthropicChat) stream(res *http.Response, u *Upstream, p *chat.Params) iter.Seq2[chat.Delta, error] {
	return func(yield func(chat.Delta, error) bool) {
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			yield(chat.Delta{}, anthropicError(res, u))
			return
		}
		if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == "application/json" {
			yield(chat.Delta{}, malformed(u, "reply", errors.New("a JSON reply to a streaming request"), nil))
			return
		}
		st := newAnthropicStream(u, chatPromptTokens(p.Request))
		for ev, err := range sse.Read(res.Body) {
			if err != nil {
				yield(chat.Delta{}, streamReadError(err, u))
				return
			}
			if ev.Data == "" {
				continue
			}
			more, done, err := st.event([]byte(ev.Data), yield)
			if err != nil {
				yield(chat.Delta{}, err)
				return
			}
			if !more {
				return
			}
			if done {
				finishStream(res.Body)
				return
			}
		}
		yield(chat.Delta{}, apierrors.BadGateway("The upstream's stream ended early.",
			fmt.Errorf("relay: upstream %s: the stream ended without message_stop", u.Name)))
	}
}

// anthropicStream turns the events of a messages-format stream into chat
// deltas, checking the format's order: message_start first, blocks
// started in index order, deltas of a started block, message_stop last.
type anthropicStream struct {
	u        *Upstream
	started  bool
	blocks   int         // blocks started
	tools    map[int]int // block index → tool call index
	calls    int
	input    int
	estimate chat.Usage // running estimate, until message_delta reports the output
	final    bool       // message_delta's usage is reported
	finished bool       // the stop reason is sent
	ev       messages.Event
	buf      [1]chat.ToolCallDelta
}

func newAnthropicStream(u *Upstream, prompt int) *anthropicStream {
	return &anthropicStream{u: u, estimate: chat.Usage{PromptTokens: prompt}}
}

// event handles the data of one event: more is false when the consumer
// stopped, done true at message_stop.
func (st *anthropicStream) event(data []byte, yield func(chat.Delta, error) bool) (more, done bool, err error) {
	e := &st.ev
	*e = messages.Event{}
	if err := json.Unmarshal(data, e); err != nil {
		return false, false, malformed(st.u, "stream event", err, data)
	}
	bad := func(format string, args ...any) (bool, bool, error) {
		return false, false, malformed(st.u, "stream event", fmt.Errorf(format, args...), data)
	}
	if !st.started && e.Type != messages.EventMessageStart && e.Type != messages.EventPing && e.Type != messages.EventError {
		return bad("%s before message_start", e.Type)
	}
	var d chat.Delta
	switch e.Type {
	case messages.EventPing:
		return true, false, nil
	case messages.EventError:
		return false, false, streamError(st.u, data)
	case messages.EventMessageStart:
		if st.started || e.Message == nil {
			return bad("a second message_start, or one without a message")
		}
		st.started = true
		start := anthropicUsage(&e.Message.Usage)
		st.input = start.PromptTokens
		if st.input > 0 {
			st.estimate.PromptTokens = st.input
			st.estimate.PromptTokensDetails = start.PromptTokensDetails
		}
		st.estimate.TotalTokens = st.estimate.PromptTokens + st.estimate.CompletionTokens
		d.Usage = &st.estimate
	case messages.EventContentBlockStart:
		if e.Index == nil || *e.Index != st.blocks || e.ContentBlock == nil {
			return bad("content_block_start out of order")
		}
		st.blocks++
		b := e.ContentBlock
		switch b.Type {
		case messages.BlockText:
			d.Content = b.Text
		case messages.BlockThinking:
			d.Reasoning = b.Thinking
		case messages.BlockToolUse:
			if b.Name == "" {
				return bad("a tool_use block without a name")
			}
			if st.tools == nil {
				st.tools = make(map[int]int)
			}
			st.tools[*e.Index] = st.calls
			st.buf[0] = chat.ToolCallDelta{Index: st.calls, ID: b.ID, Name: b.Name}
			if in := string(b.Input); in != "" && in != "{}" {
				st.buf[0].Arguments = in
			}
			st.calls++
			d.ToolCalls = st.buf[:]
		}
	case messages.EventContentBlockDelta:
		if e.Index == nil || *e.Index < 0 || *e.Index >= st.blocks || e.Delta == nil {
			return bad("content_block_delta of a block not started")
		}
		switch e.Delta.Type {
		case messages.DeltaText:
			d.Content = e.Delta.Text
		case messages.DeltaThinking:
			d.Reasoning = e.Delta.Thinking
		case messages.DeltaInputJSON:
			k, ok := st.tools[*e.Index]
			if !ok {
				return bad("input_json_delta of a block that is not a tool_use")
			}
			if e.Delta.PartialJSON == "" {
				return true, false, nil
			}
			st.buf[0] = chat.ToolCallDelta{Index: k, Arguments: e.Delta.PartialJSON}
			d.ToolCalls = st.buf[:]
		}
	case messages.EventContentBlockStop:
		return true, false, nil
	case messages.EventMessageDelta:
		if e.Delta != nil && e.Delta.StopReason != "" {
			d.FinishReason = messages.FinishReasonOf(e.Delta.StopReason)
		}
		if e.Usage != nil {
			u := anthropicUsage(e.Usage)
			if u.PromptTokens == 0 {
				// message_delta without the input: message_start's
				u.PromptTokens, u.PromptTokensDetails = st.estimate.PromptTokens, st.estimate.PromptTokensDetails
			}
			u.TotalTokens = u.PromptTokens + u.CompletionTokens
			st.estimate, st.final = u, true
			d.Usage = &st.estimate
		}
	case messages.EventMessageStop:
		return true, true, nil
	default:
		// An event type the format may add later: skipped, as its
		// clients do.
		return true, false, nil
	}
	if !st.final {
		n := fragmentTokens(d.Content) + fragmentTokens(d.Reasoning)
		for _, tc := range d.ToolCalls {
			n += fragmentTokens(tc.Name) + fragmentTokens(tc.Arguments)
		}
		if n > 0 {
			st.estimate.CompletionTokens += n
			st.estimate.TotalTokens = st.estimate.PromptTokens + st.estimate.CompletionTokens
			d.Usage = &st.estimate
		}
	}
	if d.Content == "" && d.Reasoning == "" && len(d.ToolCalls) == 0 && d.FinishReason == "" && d.Usage == nil {
		return true, false, nil
	}
	if st.finished && (d.Content != "" || d.Reasoning != "" || len(d.ToolCalls) > 0 || d.FinishReason != "") {
		return bad("content after the stop reason")
	}
	st.finished = st.finished || d.FinishReason != ""
	return yield(d, nil), false, nil
}
