package fromchat

import (
	"encoding/json"
	"strconv"

	"github.com/gatewaykit/gatewaykit/chat"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/responses"
)

// ChatParams returns the chat request that p amounts to, as [New]'s
// backend asks its chat backend (see the package documentation,
// "The request"), with p.Model as its model and p's Flush (so that the
// chat stream keeps the pace of the responses stream). A request that the chat
// format cannot carry is a 400 invalid_request_error naming the param at
// fault. ChatParams does not modify p; the result shares memory with it
// (strings, pointers, raw JSON), which neither a responses nor a chat
// backend may modify.
//
// It serves callers that send the chat request themselves, as package
// relay does for an upstream of another format.
func ChatParams(p *responses.Params) (*chat.Params, error) {
	req := p.Request
	out := &chat.Request{Model: req.Model, Stream: req.Stream, Temperature: req.Temperature, TopP: req.TopP,
		MaxCompletionTokens: req.MaxOutputTokens}
	if req.Stream {
		out.StreamOptions = &chat.StreamOptions{IncludeUsage: true}
	}
	if in := req.Instructions; in != nil && *in != "" {
		out.Messages = append(out.Messages, chat.Message{Role: chat.RoleSystem, Content: chat.TextContent(*in)})
	}
	var err error
	for i := range p.History {
		if out.Messages, err = appendItem(out.Messages, &p.History[i], ""); err != nil {
			return nil, err
		}
	}
	input := req.Input.AsItems()
	for i := range input {
		if out.Messages, err = appendItem(out.Messages, &input[i], "input["+strconv.Itoa(i)+"]"); err != nil {
			return nil, err
		}
	}
	if len(out.Messages) == 0 {
		return nil, apierrors.InvalidRequest("input", "input: the conversation holds no message that this model can read")
	}
	if err := setTools(out, req); err != nil {
		return nil, err
	}
	if t := req.Text; t != nil {
		if f := t.Format; f != nil {
			switch f.Type {
			case responses.FormatJSONObject:
				out.ResponseFormat = &chat.ResponseFormat{Type: chat.FormatJSONObject}
			case responses.FormatJSONSchema:
				out.ResponseFormat = &chat.ResponseFormat{Type: chat.FormatJSONSchema,
					JSONSchema: &chat.JSONSchema{Name: f.Name, Description: f.Description, Schema: f.Schema, Strict: f.Strict}}
			}
		}
	}
	out.Extra = extra(req)
	cp := &chat.Params{Request: out, Model: p.Model}
	cp.SetFlush(p.Flush) // the chat stream keeps the pace of the responses stream
	return cp, nil
}

// appendItem appends the chat message of conversation item it to msgs.
// param is the item's path in the request ("input[3]"), or "" for an item
// of the stored conversation (previous_response_id).
func appendItem(msgs []chat.Message, it *responses.Item, param string) ([]chat.Message, error) {
	switch kind := it.Kind(); kind {
	case responses.ItemMessage:
		if it.Role == chat.RoleAssistant {
			// An earlier reply: its output_text and refusal parts, as the
			// assistant's text.
			return append(msgs, chat.Message{Role: it.Role, Content: chat.TextContent(it.Content.String())}), nil
		}
		c, err := content(&it.Content, param)
		if err != nil {
			return nil, err
		}
		return append(msgs, chat.Message{Role: it.Role, Content: c}), nil
	case responses.ItemFunctionCall:
		tc := chat.ToolCall{ID: it.CallID, Type: "function", Function: chat.FunctionCall{Name: it.Name, Arguments: it.Arguments}}
		if n := len(msgs); n > 0 && msgs[n-1].Role == chat.RoleAssistant {
			// A call of the same turn as the assistant's text or calls
			// before it: one assistant message.
			last := &msgs[n-1]
			last.ToolCalls = append(last.ToolCalls, tc)
			return msgs, nil
		}
		return append(msgs, chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{tc}}), nil
	case responses.ItemFunctionCallOutput:
		text := ""
		if it.Output != nil {
			text = it.Output.String()
		}
		return append(msgs, chat.Message{Role: chat.RoleTool, ToolCallID: it.CallID, Content: chat.TextContent(text)}), nil
	case responses.ItemReasoning:
		// Another reply's reasoning: a chat request has no place for it
		// (and an encrypted one only its provider reads).
		return msgs, nil
	default:
		if param == "" {
			return nil, apierrors.InvalidRequestf("previous_response_id", "previous_response_id: the conversation holds %s items, which this model cannot read", apierrors.Quote(kind))
		}
		return nil, apierrors.InvalidRequestf(param+".type", "%s: %s items are not supported by this model", param, apierrors.Quote(kind))
	}
}

// content is the chat content of a message's content: its text, or its
// parts (text, refusals and images by URL). param is as for appendItem.
func content(c *responses.Content, param string) (chat.Content, error) {
	if c.Text != nil {
		return chat.TextContent(*c.Text), nil
	}
	if len(c.Parts) == 0 {
		return chat.TextContent(""), nil
	}
	parts := make([]chat.ContentPart, 0, len(c.Parts))
	for k := range c.Parts {
		part := &c.Parts[k]
		switch part.Type {
		case responses.PartInputText, responses.PartOutputText:
			parts = append(parts, chat.ContentPart{Type: chat.PartText, Text: part.Text})
		case responses.PartRefusal:
			parts = append(parts, chat.ContentPart{Type: chat.PartText, Text: part.Refusal})
		case responses.PartInputImage:
			if part.ImageURL == "" {
				return chat.Content{}, partError(param, k, ".file_id", "images by file_id are not supported by this model; send image_url")
			}
			parts = append(parts, chat.ContentPart{Type: chat.PartImageURL, ImageURL: &chat.ImageURL{URL: part.ImageURL, Detail: part.Detail}})
		default:
			return chat.Content{}, partError(param, k, ".type", apierrors.Quote(part.Type)+" parts are not supported by this model")
		}
	}
	return chat.PartsContent(parts...), nil
}

// partError is the 400 of part k of the content of the item at param
// (the stored conversation's, if param is ""); field is the part's
// member at fault.
func partError(param string, k int, field, what string) error {
	if param == "" {
		return apierrors.InvalidRequest("previous_response_id", "previous_response_id: the conversation holds content that this model cannot read: "+what)
	}
	at := param + ".content[" + strconv.Itoa(k) + "]"
	return apierrors.InvalidRequest(at+field, at+": "+what)
}

// setTools sets the function tools of req, and its tool choice, on out.
// Tools of other types (hosted ones) and tool choices that are not a mode
// or a function are refused.
func setTools(out *chat.Request, req *responses.Request) error {
	for i := range req.Tools {
		t := &req.Tools[i]
		if t.Type != responses.ToolFunction {
			at := "tools[" + strconv.Itoa(i) + "]"
			return apierrors.InvalidRequestf(at+".type", "%s: %s tools are not supported by this model", at, apierrors.Quote(t.Type))
		}
		out.Tools = append(out.Tools, chat.Tool{Type: "function", Function: &chat.FunctionDefinition{Name: t.Name,
			Description: t.Description, Parameters: t.Parameters, Strict: t.Strict}})
	}
	tc := req.ToolChoice
	switch {
	case tc == nil:
	case tc.Mode == "" && tc.Function == "" && tc.Raw != nil:
		// An object of another type (allowed_tools, a hosted tool…).
		var o struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(tc.Raw, &o)
		return apierrors.InvalidRequestf("tool_choice.type", "tool_choice: %s is not supported by this model", apierrors.Quote(o.Type))
	case len(out.Tools) > 0:
		out.ToolChoice = &chat.ToolChoice{Mode: tc.Mode, Function: tc.Function}
		if tc.Mode == "" && tc.Function == "" {
			out.ToolChoice.Mode = chat.ToolChoiceAuto // the zero ToolChoice
		}
	}
	return nil
}

// extraMembers are the members that the responses and chat requests share
// by name and meaning but that neither type models, and the sampling
// members of other providers' chat APIs that relays forward: they go to
// the chat request as they were sent.
var extraMembers = [...]string{"user", "safety_identifier", "prompt_cache_key", "service_tier",
	"seed", "top_k", "presence_penalty", "frequency_penalty"}

// extra is the chat request's Extra for req: extraMembers,
// parallel_tool_calls when false (true is chat's default),
// reasoning.effort as reasoning_effort and text.verbosity as verbosity;
// nil when there is none.
func extra(req *responses.Request) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	set := func(k string, v json.RawMessage) {
		if out == nil {
			out = map[string]json.RawMessage{}
		}
		out[k] = v
	}
	for _, k := range extraMembers {
		if raw, ok := req.Extra[k]; ok {
			set(k, raw)
		}
	}
	if req.ParallelToolCalls != nil && !*req.ParallelToolCalls {
		set("parallel_tool_calls", json.RawMessage("false"))
	}
	if raw, ok := req.Extra["reasoning"]; ok {
		var r struct {
			Effort string `json:"effort"`
		}
		if json.Unmarshal(raw, &r) == nil && r.Effort != "" {
			effort, _ := json.Marshal(r.Effort)
			set("reasoning_effort", effort)
		}
	}
	if t := req.Text; t != nil {
		if raw, ok := t.Extra["verbosity"]; ok {
			set("verbosity", raw)
		}
	}
	return out
}
