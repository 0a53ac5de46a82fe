package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"

	"github.com/gatewaykit/gatewaykit/chat"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/responses"
)

// This file is the responses backend's way to an upstream whose API is
// the messages format ([APIAnthropic]): the conversation is made a chat
// request, translated as the chat backend translates it (anthropic.go),
// and the reply and its events come back as output items.

// anthropicResponses translates responses requests for an
// Anthropic-format upstream.
type anthropicResponses struct{}

// request builds the upstream request of p for u.
func (anthropicResponses) request(ctx context.Context, u *Upstream, p *responses.Params, stream bool) (*http.Request, error) {
	cp, err := responsesAsChat(p)
	if err != nil {
		return nil, err
	}
	return anthropicChat{}.request(ctx, u, cp, stream)
}

// responsesAsChat makes the chat params of a responses request: the
// instructions as a system message, then each item of the conversation
// (messages with their text and images, function calls as an assistant's
// tool calls, their outputs as tool messages; reasoning items are left
// out), and the request's sampling, token cap, tools and reasoning
// effort.
func responsesAsChat(p *responses.Params) (*chat.Params, error) {
	req := p.Request
	out := &chat.Request{Model: req.Model, Temperature: req.Temperature, TopP: req.TopP, MaxTokens: req.MaxOutputTokens}
	extra := map[string]json.RawMessage{}
	if req.Instructions != nil && *req.Instructions != "" {
		out.Messages = append(out.Messages, chat.Message{Role: chat.RoleSystem, Content: chat.TextContent(*req.Instructions)})
	}
	for i, it := range p.Items() {
		param := fmt.Sprintf("input[%d]", i)
		switch it.Kind() {
		case responses.ItemMessage:
			m := chat.Message{Role: it.Role}
			if it.Role == chat.RoleAssistant {
				m.Content = chat.TextContent(it.Content.String())
			} else {
				c, err := responsesContent(&it.Content, param)
				if err != nil {
					return nil, err
				}
				m.Content = c
			}
			out.Messages = append(out.Messages, m)
		case responses.ItemFunctionCall:
			tc := chat.ToolCall{ID: it.CallID, Type: "function", Function: chat.FunctionCall{Name: it.Name, Arguments: it.Arguments}}
			if n := len(out.Messages); n > 0 && out.Messages[n-1].Role == chat.RoleAssistant {
				out.Messages[n-1].ToolCalls = append(out.Messages[n-1].ToolCalls, tc)
			} else {
				out.Messages = append(out.Messages, chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{tc}})
			}
		case responses.ItemFunctionCallOutput:
			var text string
			if it.Output != nil {
				text = it.Output.String()
			}
			out.Messages = append(out.Messages, chat.Message{Role: chat.RoleTool, ToolCallID: it.CallID, Content: chat.TextContent(text)})
		case responses.ItemReasoning:
		default:
			return nil, apierrors.InvalidRequestf(param+".type", "%s: %q items cannot go to this model's upstream", param, it.Kind())
		}
	}
	for i, t := range req.Tools {
		if t.Type != "function" {
			return nil, apierrors.InvalidRequestf(fmt.Sprintf("tools[%d].type", i), "tools[%d]: %q tools are not supported by this model's upstream", i, t.Type)
		}
		out.Tools = append(out.Tools, chat.Tool{Type: "function", Function: &chat.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	if tc := req.ToolChoice; tc != nil {
		out.ToolChoice = &chat.ToolChoice{Mode: tc.Mode, Function: tc.Function}
	}
	if req.ParallelToolCalls != nil && !*req.ParallelToolCalls {
		extra["parallel_tool_calls"] = json.RawMessage("false")
	}
	if raw, ok := req.Extra["reasoning"]; ok {
		var r struct {
			Effort string `json:"effort"`
		}
		if json.Unmarshal(raw, &r) == nil && r.Effort != "" {
			extra["reasoning_effort"], _ = json.Marshal(r.Effort)
		}
	}
	for _, k := range [...]string{"top_k", "user"} {
		if raw, ok := req.Extra[k]; ok {
			extra[k] = raw
		}
	}
	if len(extra) > 0 {
		out.Extra = extra
	}
	return &chat.Params{Request: out, Model: p.Model}, nil
}

// responsesContent is the chat content of a message item's content:
// input_text and output_text parts as text, input_image parts as images.
func responsesContent(c *responses.Content, param string) (chat.Content, error) {
	if c.Text != nil {
		return chat.TextContent(*c.Text), nil
	}
	parts := make([]chat.ContentPart, 0, len(c.Parts))
	for k, part := range c.Parts {
		switch part.Type {
		case responses.PartInputText, responses.PartOutputText:
			parts = append(parts, chat.ContentPart{Type: chat.PartText, Text: part.Text})
		case responses.PartInputImage:
			if part.ImageURL == "" {
				return chat.Content{}, apierrors.InvalidRequestf(fmt.Sprintf("%s.content[%d].image_url", param, k), "%s.content[%d]: images by file_id are not supported by this model's upstream", param, k)
			}
			parts = append(parts, chat.ContentPart{Type: chat.PartImageURL, ImageURL: &chat.ImageURL{URL: part.ImageURL}})
		default:
			return chat.Content{}, apierrors.InvalidRequestf(fmt.Sprintf("%s.content[%d].type", param, k), "%s.content[%d]: %q parts are not supported by this model's upstream", param, k, part.Type)
		}
	}
	return chat.PartsContent(parts...), nil
}

// incompleteReason is the incomplete reason of a chat finish reason, or
// "" for a reply that completed.
func incompleteReason(f chat.FinishReason) string {
	switch f {
	case chat.FinishLength:
		return responses.ReasonMaxOutputTokens
	case chat.FinishContentFilter:
		return responses.ReasonContentFilter
	}
	return ""
}

// complete reads the upstream's reply to a non-streaming request: the
// reasoning, the text and the tool calls become output items, in that
// order.
func (anthropicResponses) complete(res *http.Response, u *Upstream) (*responses.Result, error) {
	cr, err := anthropicChat{}.complete(res, u)
	if err != nil {
		return nil, err
	}
	o := &cr.Choices[0]
	out := &responses.Result{
		Usage:      responses.Usage{InputTokens: cr.Usage.PromptTokens, OutputTokens: cr.Usage.CompletionTokens},
		Incomplete: incompleteReason(o.FinishReason),
	}
	if o.Reasoning != "" {
		out.Output = append(out.Output, responses.Output{Reasoning: o.Reasoning})
	}
	if o.Content != "" || len(o.ToolCalls) == 0 {
		out.Output = append(out.Output, responses.Output{Text: o.Content})
	}
	for _, tc := range o.ToolCalls {
		out.Output = append(out.Output, responses.Output{Call: &responses.FunctionCall{CallID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
	}
	return out, nil
}

// stream reads the upstream's event stream as the chat backend does, and
// turns its deltas into output items: a change of kind (reasoning, text,
// a tool call) begins the next item.
func (anthropicResponses) stream(res *http.Response, u *Upstream, p *responses.Params) iter.Seq2[responses.Delta, error] {
	return func(yield func(responses.Delta, error) bool) {
		cp, err := responsesAsChat(p)
		if err != nil {
			yield(responses.Delta{}, err)
			return
		}
		var it itemCursor
		for d, err := range (anthropicChat{}).stream(res, u, cp) {
			if err != nil {
				yield(responses.Delta{}, err)
				return
			}
			for _, rd := range it.deltas(&d) {
				if !yield(rd, nil) {
					return
				}
			}
		}
	}
}

// itemCursor numbers the output items of a stream of chat deltas.
type itemCursor struct {
	item int    // the open item, -1 before the first
	kind string // its kind: reasoning, message, or function_call
	call int    // the tool call index of an open function call
	open bool
	buf  []responses.Delta
}

// next makes an item of kind (and tool call index call) the open one, and
// reports whether it is new.
func (c *itemCursor) next(kind string, call int) (int, bool) {
	if c.open && c.kind == kind && (kind != responses.ItemFunctionCall || c.call == call) {
		return c.item, false
	}
	if c.open {
		c.item++
	}
	c.open, c.kind, c.call = true, kind, call
	return c.item, true
}

// deltas returns the responses deltas of one chat delta.
func (c *itemCursor) deltas(d *chat.Delta) []responses.Delta {
	out := c.buf[:0]
	if d.Reasoning != "" {
		i, _ := c.next(responses.ItemReasoning, 0)
		out = append(out, responses.Delta{Item: i, Reasoning: d.Reasoning})
	}
	if d.Content != "" {
		i, _ := c.next(responses.ItemMessage, 0)
		out = append(out, responses.Delta{Item: i, Text: d.Content})
	}
	for _, tc := range d.ToolCalls {
		i, isNew := c.next(responses.ItemFunctionCall, tc.Index)
		if isNew {
			out = append(out, responses.Delta{Item: i, Call: &responses.FunctionCall{CallID: tc.ID, Name: tc.Name, Arguments: tc.Arguments}})
		} else if tc.Arguments != "" {
			out = append(out, responses.Delta{Item: i, Arguments: tc.Arguments})
		}
	}
	if r := incompleteReason(d.FinishReason); r != "" {
		out = append(out, responses.Delta{Incomplete: r})
	}
	if d.Usage != nil {
		out = append(out, responses.Delta{Usage: &responses.Usage{InputTokens: d.Usage.PromptTokens, OutputTokens: d.Usage.CompletionTokens,
			TotalTokens: d.Usage.PromptTokens + d.Usage.CompletionTokens}})
	}
	c.buf = out
	return out
}

// responsesDialect returns the translator of the responses backend for
// api, or nil for the OpenAI API, which needs none.
func responsesDialect(api API) responsesTranslator {
	switch api {
	case APIAnthropic:
		return anthropicResponses{}
	}
	return nil
}

// A responsesTranslator is the responses backend's way to an upstream
// whose API is not OpenAI's (see chatTranslator).
type responsesTranslator interface {
	request(ctx context.Context, u *Upstream, p *responses.Params, stream bool) (*http.Request, error)
	complete(res *http.Response, u *Upstream) (*responses.Result, error)
	stream(res *http.Response, u *Upstream, p *responses.Params) iter.Seq2[responses.Delta, error]
}

// responsesBuild is the build function of a responses request: body to
// /responses of an OpenAI-format upstream, or p translated for another.
func responsesBuild(ctx context.Context, p *responses.Params, body requestBody, stream bool) func(u *Upstream) (*http.Request, error) {
	openai := postJSON(ctx, "/responses", body, stream)
	return func(u *Upstream) (*http.Request, error) {
		if t := responsesDialect(u.API); t != nil {
			return t.request(ctx, u, p, stream)
		}
		return openai(u)
	}
}
