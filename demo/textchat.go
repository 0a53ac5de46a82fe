package demo

import (
	"context"
	"encoding/json"
	"iter"
	"strings"

	"github.com/gatewaykit/gatewaykit/chat"
)

// ChatBackend is the chat side of a [TextBackend]: a
// chat.StreamingBackend. Get one with [TextBackend.Chat].
type ChatBackend struct {
	t *TextBackend
}

var _ chat.StreamingBackend = (*ChatBackend)(nil)

// Chat returns the chat backend of t.
func (t *TextBackend) Chat() *ChatBackend { return &ChatBackend{t: t} }

// Complete implements chat.Backend.
func (b *ChatBackend) Complete(ctx context.Context, p *chat.Params) (*chat.Result, error) {
	r, err := b.t.whole(ctx, chatReply(p))
	if err != nil {
		return nil, err
	}
	res := &chat.Result{Choices: make([]chat.Output, len(r.plans)), Usage: r.usage()}
	for i := range r.plans {
		pl := &r.plans[i]
		o := &res.Choices[i]
		o.Content = pl.content
		o.Reasoning = pl.reasoning
		o.FinishReason = pl.finish
		if pl.toolName != "" {
			o.ToolCalls = []chat.ToolCall{{Type: "function", Function: chat.FunctionCall{Name: pl.toolName, Arguments: pl.toolArgs}}}
		}
	}
	return res, nil
}

// Stream implements chat.StreamingBackend. The choices are streamed in
// turns, one chunk of each in order, then the usage. It calls p.Flush
// before each pause of [WithChunkDelay], so that the chunks before it
// reach the client; without a chunk delay all of them are at hand, which
// it says with one p.Flush first, so that the handler sends the reply in
// one write instead of one per chunk.
func (b *ChatBackend) Stream(ctx context.Context, p *chat.Params) iter.Seq2[chat.Delta, error] {
	return streamPlans(ctx, b.t, chatReply(p), p.Flush, func(d chat.Delta) chat.Delta { return d })
}

// reply is the whole demo reply to a request.
type reply struct {
	in     input
	prompt int
	plans  []plan
}

// whole returns r, the reply to a request that a backend gives whole,
// unless ctx is done or the request asks the demo to fail.
func (t *TextBackend) whole(ctx context.Context, r reply) (reply, error) {
	if err := ctx.Err(); err != nil {
		return reply{}, err
	}
	if r.in.fail {
		return reply{}, errFail
	}
	return r, nil
}

// streamPlans streams r as t does: the choices in turns, one chunk of
// each in order (as chat deltas, which delta turns into D), then the
// usage; pausing before each chunk for the configured delay (see pacer,
// whose flush is the Params' Flush), and failing after the first chunk
// when the request asks the demo to fail.
func streamPlans[D any](ctx context.Context, t *TextBackend, r reply, flush func(), delta func(chat.Delta) D) iter.Seq2[D, error] {
	return func(yield func(D, error) bool) {
		pace := newPacer(ctx, t.cfg.delay, flush)
		k := t.cfg.tokensPerChunk
		var one [1]cursor
		cursors := one[:]
		if len(r.plans) > 1 {
			cursors = make([]cursor, len(r.plans))
		}
		for i := range r.plans {
			cursors[i].p = &r.plans[i]
		}
		for open := len(cursors); open > 0; {
			open = 0
			for i := range cursors {
				d, ok := cursors[i].next(i, k)
				if !ok {
					continue
				}
				open++
				if err := pace.wait(); err != nil {
					var zero D
					yield(zero, err)
					return
				}
				if !yield(delta(d), nil) {
					return
				}
				if r.in.fail {
					var zero D
					yield(zero, errFail)
					return
				}
			}
		}
		u := r.usage()
		yield(delta(chat.Delta{Usage: &u}), nil)
	}
}

func (r *reply) usage() chat.Usage {
	u := chat.Usage{PromptTokens: r.prompt}
	reasoned := 0
	for i := range r.plans {
		u.CompletionTokens += r.plans[i].tokens
		reasoned += r.plans[i].reasoned
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	if reasoned > 0 {
		u.CompletionTokensDetails = &chat.CompletionTokensDetails{ReasoningTokens: reasoned}
	}
	return u
}

// chatReply works out the reply to a chat request.
func chatReply(p *chat.Params) reply {
	req := p.Request
	r := reply{}
	r.in, r.prompt = chatInput(req)
	n := req.Choices()
	r.plans = make([]plan, n)
	tool := chatTool(req, &r.in)
	var args string
	if tool != nil {
		args = sampleJSON(tool.Parameters, sampleString(&r.in))
	}
	reasoning := p.Model != nil && p.Model.Reasoning
	l := limits{maxTokens: req.TokenLimit(), stop: req.Stop}
	for i := range r.plans {
		pl := &r.plans[i]
		switch {
		case r.in.filter:
			pl.finish = chat.FinishContentFilter
			continue
		case tool != nil:
			if reasoning {
				pl.reasoning = reasoningText(&r.in, r.prompt, tool.Name)
				pl.reasoned = CountTokens(pl.reasoning)
			}
			// A tool call is never cut: its arguments stay valid JSON.
			pl.toolName, pl.toolArgs = tool.Name, args
			pl.tokens = pl.reasoned + CountTokens(tool.Name) + CountTokens(args)
			pl.finish = chat.FinishToolCalls
			continue
		}
		if reasoning {
			pl.reasoning = reasoningText(&r.in, r.prompt, "")
		}
		pl.content = chatContent(req, &r.in, i, n)
		pl.finishText(l)
	}
	return r
}

// chatContent is the content of choice i: the reply text, or a JSON
// document when the request asks for one.
func chatContent(req *chat.Request, in *input, i, n int) string {
	text := replyText(in, i, n)
	f := req.ResponseFormat
	switch {
	case f == nil:
		return text
	case f.Type == chat.FormatJSONObject:
		q, _ := json.Marshal(text)
		return `{"reply":` + string(q) + `}`
	case f.Type == chat.FormatJSONSchema && f.JSONSchema != nil:
		return sampleJSON(f.JSONSchema.Schema, text)
	}
	return text
}

// sampleString is the value of the string fields of tool arguments and
// structured output: the echoed text, or "demo".
func sampleString(in *input) string {
	if in.echo == "" {
		return "demo"
	}
	return in.echo
}

// chatInput reads the input of a chat request: the last user message (or
// the last tool result, if the conversation ends with one) and the prompt
// tokens of the whole conversation.
func chatInput(req *chat.Request) (input, int) {
	prompt := 0
	last := -1
	for i := range req.Messages {
		m := &req.Messages[i]
		if m.Role == chat.RoleUser {
			last = i
		}
		c := &m.Content
		if c.Text != nil {
			prompt += CountTokens(*c.Text)
		}
		for j := range c.Parts {
			switch part := &c.Parts[j]; part.Type {
			case chat.PartText:
				prompt += CountTokens(part.Text)
			case chat.PartImageURL:
				prompt += ImageTokens
			}
		}
		for _, tc := range m.ToolCalls {
			prompt += CountTokens(tc.Function.Name) + CountTokens(tc.Function.Arguments)
		}
	}
	end := len(req.Messages) - 1
	if end >= 0 && req.Messages[end].Role == chat.RoleTool {
		return newInput(req.Messages[end].Content.String(), nil, true), prompt
	}
	if last < 0 {
		last = end
	}
	if last < 0 {
		return newInput("", nil, false), prompt
	}
	m := &req.Messages[last]
	var images []string
	for j := range m.Content.Parts {
		if part := &m.Content.Parts[j]; part.Type == chat.PartImageURL && part.ImageURL != nil {
			images = append(images, imageName(part.ImageURL.URL))
		}
	}
	return newInput(m.Content.String(), images, false), prompt
}

// chatTool returns the function the demo calls, or nil: the named one
// when tool_choice names one, the first one when it is "required", and
// with "auto" (or no tool_choice) the first one whose name appears in the
// last user message, unless the conversation ends with a tool result.
func chatTool(req *chat.Request, in *input) *chat.FunctionDefinition {
	tc := req.ToolChoice
	if len(req.Tools) == 0 || (tc != nil && tc.Mode == chat.ToolChoiceNone) {
		return nil
	}
	switch {
	case tc != nil && tc.Function != "":
		for i := range req.Tools {
			if f := req.Tools[i].Function; f != nil && f.Name == tc.Function {
				return f
			}
		}
		return nil
	case tc != nil && tc.Mode == chat.ToolChoiceRequired:
		return req.Tools[0].Function
	case in.toolResult:
		return nil
	}
	for i := range req.Tools {
		if f := req.Tools[i].Function; f != nil && f.Name != "" && strings.Contains(in.echo, f.Name) {
			return f
		}
	}
	return nil
}
