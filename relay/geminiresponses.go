package relay

import (
	"context"
	"fmt"
	"iter"

	"github.com/gatewaykit/gatewaykit/chat"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/responses"
)

// The relay's responses backend for a model that a Gemini-format upstream
// serves: the responses request is turned into the chat completions
// request it amounts to (responsesAsChat), which the chat backend sends
// (to a Gemini-format upstream as generateContent, to an OpenAI-format
// one of the same route as chat completions), and the chat reply or
// stream is turned back into output items.

// completeViaChat is Complete for such a model.
func (b responsesBackend) completeViaChat(ctx context.Context, p *responses.Params) (*responses.Result, error) {
	cp, err := responsesAsChat(p)
	if err != nil {
		return nil, err
	}
	res, err := chatBackend(b).Complete(ctx, cp)
	if err != nil {
		return nil, err
	}
	if len(res.Choices) != 1 {
		return nil, apierrors.Internal(fmt.Errorf("relay: %d choices for a response", len(res.Choices)))
	}
	o := &res.Choices[0]
	out := &responses.Result{Usage: responsesUsage(&res.Usage), Incomplete: incompleteOf(o.FinishReason)}
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

// streamViaChat is Stream for such a model: each chat delta continues the
// current output item or begins the next (reasoning, then text, then
// each tool call).
func (b responsesBackend) streamViaChat(ctx context.Context, p *responses.Params) iter.Seq2[responses.Delta, error] {
	return func(yield func(responses.Delta, error) bool) {
		cp, err := responsesAsChat(p)
		if err != nil {
			yield(responses.Delta{}, err)
			return
		}
		const (
			none = iota
			reasoning
			text
			call
		)
		item, kind, callIndex := -1, none, -1
		var usage responses.Usage
		for d, err := range chatBackend(b).Stream(ctx, cp) {
			if err != nil {
				yield(responses.Delta{}, err)
				return
			}
			if d.Usage != nil {
				usage = responsesUsage(d.Usage)
				if !yield(responses.Delta{Item: max(item, 0), Usage: &usage}, nil) {
					return
				}
			}
			if d.Reasoning != "" {
				if kind != reasoning {
					item, kind = item+1, reasoning
				}
				if !yield(responses.Delta{Item: item, Reasoning: d.Reasoning}, nil) {
					return
				}
			}
			if d.Content != "" {
				if kind != text {
					item, kind = item+1, text
				}
				if !yield(responses.Delta{Item: item, Text: d.Content}, nil) {
					return
				}
			}
			for _, tc := range d.ToolCalls {
				rd := responses.Delta{Arguments: tc.Arguments}
				if kind != call || tc.Index != callIndex {
					item, kind, callIndex = item+1, call, tc.Index
					rd = responses.Delta{Call: &responses.FunctionCall{CallID: tc.ID, Name: tc.Name, Arguments: tc.Arguments}}
				}
				rd.Item = item
				if !yield(rd, nil) {
					return
				}
			}
			if reason := incompleteOf(d.FinishReason); reason != "" {
				if !yield(responses.Delta{Item: max(item, 0), Incomplete: reason}, nil) {
					return
				}
			}
		}
	}
}

// incompleteOf is the incomplete reason of a chat finish reason: none for
// a natural end.
func incompleteOf(r chat.FinishReason) string {
	switch r {
	case chat.FinishLength:
		return responses.ReasonMaxOutputTokens
	case chat.FinishContentFilter:
		return responses.ReasonContentFilter
	}
	return ""
}

// responsesUsage is the responses usage of a chat usage.
func responsesUsage(u *chat.Usage) responses.Usage {
	out := responses.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: addInts(u.PromptTokens, u.CompletionTokens)}
	if d := u.CompletionTokensDetails; d != nil {
		out.OutputTokensDetails.ReasoningTokens = d.ReasoningTokens
	}
	return out
}
