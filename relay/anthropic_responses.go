package relay

import (
	"context"
	"iter"
	"net/http"

	"github.com/gatewaykit/gatewaykit/chat"
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
			TotalTokens: addInts(d.Usage.PromptTokens, d.Usage.CompletionTokens)}})
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
