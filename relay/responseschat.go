package relay

import (
	"encoding/json"
	"fmt"

	"github.com/gatewaykit/gatewaykit/chat"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/responses"
)

// responsesAsChat is the chat request that a responses request amounts
// to, for the upstreams that the responses backend reaches through the
// chat translation (those whose API is not OpenAI's): the instructions as
// a system message, the conversation's items as messages (input_text,
// output_text, refusal and input_image parts; function calls as an
// assistant message's tool calls, their outputs as tool messages;
// reasoning items, which only their upstream can read, left out), and
// the sampling, the output cap, the function tools, the tool choice, the
// text format and the reasoning effort. Other items, other tools (hosted
// ones) and images by file id are refused with a 400.
func responsesAsChat(p *responses.Params) (*chat.Params, error) {
	req := p.Request
	out := &chat.Request{Model: req.Model, Temperature: req.Temperature, TopP: req.TopP, MaxCompletionTokens: req.MaxOutputTokens}
	if in := req.Instructions; in != nil && *in != "" {
		out.Messages = append(out.Messages, chat.Message{Role: chat.RoleSystem, Content: chat.TextContent(*in)})
	}
	for i, it := range p.Items() {
		param := fmt.Sprintf("input[%d]", i)
		switch it.Kind() {
		case responses.ItemMessage:
			c, err := responsesContent(&it.Content, param)
			if err != nil {
				return nil, err
			}
			if it.Role == chat.RoleAssistant {
				c = chat.TextContent(c.String())
			}
			out.Messages = append(out.Messages, chat.Message{Role: it.Role, Content: c})
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
		case responses.ItemReasoning:
		default:
			return nil, apierrors.InvalidRequestf(param+".type", "%s: %s items cannot go to this model's upstream", param, apierrors.Quote(it.Kind()))
		}
	}
	for i, t := range req.Tools {
		if t.Type != responses.ToolFunction {
			return nil, apierrors.InvalidRequestf(fmt.Sprintf("tools[%d].type", i), "tools[%d]: %s tools are not supported by this model's upstream", i, apierrors.Quote(t.Type))
		}
		out.Tools = append(out.Tools, chat.Tool{Type: "function", Function: &chat.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: t.Parameters, Strict: t.Strict}})
	}
	if tc := req.ToolChoice; tc != nil && len(out.Tools) > 0 {
		out.ToolChoice = &chat.ToolChoice{Mode: tc.Mode, Function: tc.Function}
	}
	if t := req.Text; t != nil && t.Format != nil {
		switch f := t.Format; f.Type {
		case chat.FormatJSONObject:
			out.ResponseFormat = &chat.ResponseFormat{Type: chat.FormatJSONObject}
		case chat.FormatJSONSchema:
			out.ResponseFormat = &chat.ResponseFormat{Type: chat.FormatJSONSchema,
				JSONSchema: &chat.JSONSchema{Name: f.Name, Description: f.Description, Schema: f.Schema, Strict: f.Strict}}
		}
	}
	extra := map[string]json.RawMessage{}
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
	for _, k := range [...]string{"top_k", "seed", "presence_penalty", "frequency_penalty", "user"} {
		if raw, ok := req.Extra[k]; ok {
			extra[k] = raw
		}
	}
	if len(extra) > 0 {
		out.Extra = extra
	}
	cp := &chat.Params{Request: out, Model: p.Model}
	cp.SetFlush(p.Flush) // the chat stream keeps the pace of the responses stream
	return cp, nil
}

// responsesContent is the chat content of a responses message's content:
// its text, or its parts (text, refusals and images by URL).
func responsesContent(c *responses.Content, param string) (chat.Content, error) {
	if c.Text != nil {
		return chat.TextContent(*c.Text), nil
	}
	parts := make([]chat.ContentPart, 0, len(c.Parts))
	for k, part := range c.Parts {
		switch part.Type {
		case responses.PartInputText, responses.PartOutputText:
			parts = append(parts, chat.ContentPart{Type: chat.PartText, Text: part.Text})
		case responses.PartRefusal:
			parts = append(parts, chat.ContentPart{Type: chat.PartText, Text: part.Refusal})
		case responses.PartInputImage:
			if part.ImageURL == "" {
				return chat.Content{}, apierrors.InvalidRequestf(fmt.Sprintf("%s.content[%d].image_url", param, k), "%s.content[%d]: images by file_id are not supported by this model's upstream", param, k)
			}
			parts = append(parts, chat.ContentPart{Type: chat.PartImageURL, ImageURL: &chat.ImageURL{URL: part.ImageURL}})
		default:
			return chat.Content{}, apierrors.InvalidRequestf(fmt.Sprintf("%s.content[%d].type", param, k), "%s.content[%d]: %s parts are not supported by this model's upstream", param, k, apierrors.Quote(part.Type))
		}
	}
	return chat.PartsContent(parts...), nil
}
