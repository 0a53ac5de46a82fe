package relay

import (
	"context"
	"encoding/json"
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
	out := responses.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens}
	if d := u.CompletionTokensDetails; d != nil {
		out.OutputTokensDetails.ReasoningTokens = d.ReasoningTokens
	}
	return out
}

// responsesAsChat is the chat request that a responses request amounts
// to: the instructions as a system message, the conversation's items as
// messages (input_text, output_text and input_image parts; function calls
// as an assistant message's tool calls, their outputs as tool messages;
// reasoning and compaction items, which only their upstream can read,
// left out), and the sampling, the output cap, the function tools, the
// tool choice and the text format. Other tools (hosted ones) and input
// files are refused.
func responsesAsChat(p *responses.Params) (*chat.Params, error) {
	req := p.Request
	out := &chat.Request{Model: req.Model, Temperature: req.Temperature, TopP: req.TopP, MaxCompletionTokens: req.MaxOutputTokens}
	if in := req.Instructions; in != nil && *in != "" {
		out.Messages = append(out.Messages, chat.Message{Role: chat.RoleSystem, Content: chat.TextContent(*in)})
	}
	for i, it := range p.Items() {
		switch it.Kind() {
		case responses.ItemMessage:
			m := chat.Message{Role: it.Role}
			if it.Content.Text != nil {
				m.Content = chat.TextContent(*it.Content.Text)
			} else {
				var parts []chat.ContentPart
				for j, cp := range it.Content.Parts {
					switch cp.Type {
					case responses.PartInputText, responses.PartOutputText:
						parts = append(parts, chat.ContentPart{Type: chat.PartText, Text: cp.Text})
					case responses.PartRefusal:
						parts = append(parts, chat.ContentPart{Type: chat.PartText, Text: cp.Refusal})
					case responses.PartInputImage:
						if cp.ImageURL == "" {
							return nil, apierrors.InvalidRequestf(fmt.Sprintf("input[%d].content[%d].image_url", i, j), "this model takes images by image_url only")
						}
						parts = append(parts, chat.ContentPart{Type: chat.PartImageURL, ImageURL: &chat.ImageURL{URL: cp.ImageURL}})
					default:
						return nil, apierrors.InvalidRequestf(fmt.Sprintf("input[%d].content[%d].type", i, j), "parts of type %q cannot be sent to this model", cp.Type)
					}
				}
				if m.Role == chat.RoleAssistant {
					m.Content = chat.TextContent(chat.PartsContent(parts...).String())
				} else {
					m.Content = chat.PartsContent(parts...)
				}
			}
			out.Messages = append(out.Messages, m)
		case responses.ItemFunctionCall:
			tc := chat.ToolCall{ID: it.CallID, Type: "function", Function: chat.FunctionCall{Name: it.Name, Arguments: it.Arguments}}
			if n := len(out.Messages); n > 0 && out.Messages[n-1].Role == chat.RoleAssistant && len(out.Messages[n-1].ToolCalls) > 0 {
				out.Messages[n-1].ToolCalls = append(out.Messages[n-1].ToolCalls, tc)
				continue
			}
			out.Messages = append(out.Messages, chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{tc}})
		case responses.ItemFunctionCallOutput:
			text := ""
			if it.Output != nil {
				text = it.Output.String()
			}
			out.Messages = append(out.Messages, chat.Message{Role: chat.RoleTool, ToolCallID: it.CallID, Content: chat.TextContent(text)})
		}
	}
	for i, t := range req.Tools {
		if t.Type != responses.ToolFunction {
			return nil, apierrors.InvalidRequestf(fmt.Sprintf("tools[%d].type", i), "tools of type %q cannot be used with this model", t.Type)
		}
		out.Tools = append(out.Tools, chat.Tool{Type: "function", Function: &chat.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: t.Parameters, Strict: t.Strict}})
	}
	if tc := req.ToolChoice; tc != nil && len(out.Tools) > 0 {
		out.ToolChoice = &chat.ToolChoice{Mode: tc.Mode, Function: tc.Function}
	}
	if t := req.Text; t != nil && t.Format != nil {
		f := t.Format
		switch f.Type {
		case chat.FormatJSONObject:
			out.ResponseFormat = &chat.ResponseFormat{Type: chat.FormatJSONObject}
		case chat.FormatJSONSchema:
			out.ResponseFormat = &chat.ResponseFormat{Type: chat.FormatJSONSchema,
				JSONSchema: &chat.JSONSchema{Name: f.Name, Description: f.Description, Schema: f.Schema, Strict: f.Strict}}
		}
	}
	for _, k := range []string{"top_k", "seed", "presence_penalty", "frequency_penalty"} {
		if v, ok := req.Extra[k]; ok {
			if out.Extra == nil {
				out.Extra = make(map[string]json.RawMessage)
			}
			out.Extra[k] = v
		}
	}
	return &chat.Params{Request: out, Model: p.Model}, nil
}
