package messages

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/ids"
	"github.com/gatewaykit/gatewaykit/models"
)

// IDPrefix starts the id of every reply ("msg_" and 26 base32
// characters).
const IDPrefix = "msg_"

// toolIDPrefix starts the ids of tool_use blocks that the backend gave no
// id.
const toolIDPrefix = "toolu_"

// validate checks a decoded request against the rules of the format (see
// the package documentation); each failure is a 400 whose param is the
// JSON path of the field.
func validate(req *Request) error {
	switch {
	case req.Model == "":
		return apierrors.InvalidRequest("model", "model: Field required")
	case req.MaxTokens < 1:
		return apierrors.InvalidRequest("max_tokens", "max_tokens: Field required, and must be at least 1")
	case req.MaxTokens > endpoint.MaxOutputTokens:
		return apierrors.InvalidRequestf("max_tokens", "max_tokens: must be at most %d, got %d", endpoint.MaxOutputTokens, req.MaxTokens)
	case len(req.Messages) == 0:
		return apierrors.InvalidRequest("messages", "messages: at least one message is required")
	case req.Temperature != nil && (*req.Temperature < 0 || *req.Temperature > 1):
		return apierrors.InvalidRequest("temperature", "temperature: must be between 0 and 1")
	case req.TopP != nil && (*req.TopP < 0 || *req.TopP > 1):
		return apierrors.InvalidRequest("top_p", "top_p: must be between 0 and 1")
	case req.TopK != nil && *req.TopK < 0:
		return apierrors.InvalidRequest("top_k", "top_k: must be at least 0")
	}
	if req.System != nil {
		for i, b := range req.System.Blocks {
			if b.Type != BlockText {
				return apierrors.InvalidRequestf(fmt.Sprintf("system[%d].type", i), "system[%d].type: system blocks must be text blocks, got %s", i, apierrors.Quote(b.Type))
			}
		}
	}
	for i := range req.Messages {
		if err := validateMessage(&req.Messages[i], fmt.Sprintf("messages[%d]", i)); err != nil {
			return err
		}
	}
	names := make(map[string]bool, len(req.Tools))
	for i, t := range req.Tools {
		p := fmt.Sprintf("tools[%d]", i)
		switch {
		case t.Type != "" && t.Type != "custom":
			return apierrors.InvalidRequestf(p+".type", "%s.type: server tools (%s) are not supported; only client tools with an input_schema", p, apierrors.Quote(t.Type))
		case t.Name == "":
			return apierrors.InvalidRequest(p+".name", p+".name: Field required")
		case len(t.InputSchema) > 0 && !isObject(t.InputSchema):
			return apierrors.InvalidRequest(p+".input_schema", p+".input_schema: must be a JSON object")
		}
		names[t.Name] = true
	}
	if tc := req.ToolChoice; tc != nil {
		switch tc.Type {
		case "auto", "none":
		case "any":
			if len(req.Tools) == 0 {
				return apierrors.InvalidRequest("tool_choice", "tool_choice: any needs tools")
			}
		case "tool":
			if !names[tc.Name] {
				return apierrors.InvalidRequestf("tool_choice.name", "tool_choice.name: %s is not one of the tools", apierrors.Quote(tc.Name))
			}
		default:
			return apierrors.InvalidRequestf("tool_choice.type", "tool_choice.type: must be auto, any, tool or none, got %s", apierrors.Quote(tc.Type))
		}
	}
	if th := req.Thinking; th != nil {
		switch th.Type {
		case "disabled":
		case "enabled":
			if th.BudgetTokens < 1024 || th.BudgetTokens >= req.MaxTokens {
				return apierrors.InvalidRequest("thinking.budget_tokens", "thinking.budget_tokens: must be at least 1024 and less than max_tokens")
			}
		default:
			return apierrors.InvalidRequestf("thinking.type", "thinking.type: must be enabled or disabled, got %s", apierrors.Quote(th.Type))
		}
	}
	return nil
}

func validateMessage(m *Message, p string) error {
	if m.Role != RoleUser && m.Role != RoleAssistant {
		return apierrors.InvalidRequestf(p+".role", "%s.role: must be user or assistant, got %s", p, apierrors.Quote(m.Role))
	}
	if m.Content.Text == nil && m.Content.Blocks == nil {
		return apierrors.InvalidRequest(p+".content", p+".content: Field required")
	}
	for j := range m.Content.Blocks {
		b := &m.Content.Blocks[j]
		bp := fmt.Sprintf("%s.content[%d]", p, j)
		allowed := b.Type == BlockText
		switch m.Role {
		case RoleUser:
			allowed = allowed || b.Type == BlockImage || b.Type == BlockToolResult
		case RoleAssistant:
			allowed = allowed || b.Type == BlockToolUse || b.Type == BlockThinking || b.Type == BlockRedactedThinking
		}
		if !allowed {
			return apierrors.InvalidRequestf(bp+".type", "%s.type: %s blocks are not supported in %s messages", bp, apierrors.Quote(b.Type), m.Role)
		}
		if err := validateBlock(b, bp); err != nil {
			return err
		}
	}
	return nil
}

func validateBlock(b *ContentBlock, p string) error {
	switch b.Type {
	case BlockImage:
		return validateImage(b.Source, p+".source")
	case BlockToolUse:
		switch {
		case b.ID == "":
			return apierrors.InvalidRequest(p+".id", p+".id: Field required")
		case b.Name == "":
			return apierrors.InvalidRequest(p+".name", p+".name: Field required")
		case len(b.Input) > 0 && !isObject(b.Input):
			return apierrors.InvalidRequest(p+".input", p+".input: must be a JSON object")
		}
	case BlockToolResult:
		if b.ToolUseID == "" {
			return apierrors.InvalidRequest(p+".tool_use_id", p+".tool_use_id: Field required")
		}
		if b.Content != nil {
			for k := range b.Content.Blocks {
				c := &b.Content.Blocks[k]
				cp := fmt.Sprintf("%s.content[%d]", p, k)
				switch c.Type {
				case BlockText:
				case BlockImage:
					if err := validateImage(c.Source, cp+".source"); err != nil {
						return err
					}
				default:
					return apierrors.InvalidRequestf(cp+".type", "%s.type: tool results hold text and image blocks, got %s", cp, apierrors.Quote(c.Type))
				}
			}
		}
	}
	return nil
}

func validateImage(s *ImageSource, p string) error {
	if s == nil {
		return apierrors.InvalidRequest(p, p+": Field required")
	}
	if endpoint.ValidImageURL(imageURL(s)) {
		return nil
	}
	switch s.Type {
	case "base64":
		return apierrors.InvalidRequest(p, p+": a base64 source needs an image/… media_type and data")
	case "url":
		return apierrors.InvalidRequest(p+".url", p+".url: must be an http(s) URL")
	}
	return apierrors.InvalidRequestf(p+".type", "%s.type: must be base64 or url, got %s", p, apierrors.Quote(s.Type))
}

// imageURL is the URL of an image source: its url, or a data URI of its
// base64 data.
func imageURL(s *ImageSource) string {
	switch s.Type {
	case "url":
		return s.URL
	case "base64":
		return "data:" + s.MediaType + ";base64," + s.Data
	}
	return ""
}

func isObject(raw json.RawMessage) bool {
	s := strings.TrimLeft(string(raw), " \t\r\n")
	return strings.HasPrefix(s, "{") && json.Valid(raw)
}

// toChat translates a valid request into the chat request that the
// backend is asked (see the package documentation for the mapping).
func toChat(req *Request, m *models.Model) *chat.Request {
	out := &chat.Request{
		Model:       req.Model,
		Stream:      req.Stream,
		Temperature: req.Temperature,
		TopP:        req.TopP,
		Stop:        chat.Stop(req.StopSequences),
	}
	maxTokens := req.MaxTokens
	out.MaxTokens = &maxTokens
	if req.Stream {
		out.StreamOptions = &chat.StreamOptions{IncludeUsage: true}
	}
	extra := map[string]json.RawMessage{}
	if req.TopK != nil {
		extra["top_k"] = json.RawMessage(strconv.Itoa(*req.TopK))
	}
	if req.Metadata != nil && req.Metadata.UserID != "" {
		extra["user"], _ = json.Marshal(req.Metadata.UserID)
	}
	if th := req.Thinking; th != nil && th.Type == "enabled" && m != nil && m.Reasoning {
		extra["reasoning_effort"] = json.RawMessage(`"` + effort(th.BudgetTokens) + `"`)
	}
	if req.System != nil {
		if s := req.System.String(); s != "" {
			out.Messages = append(out.Messages, chat.Message{Role: chat.RoleSystem, Content: chat.TextContent(s)})
		}
	}
	for i := range req.Messages {
		out.Messages = appendChatMessages(out.Messages, &req.Messages[i])
	}
	for _, t := range req.Tools {
		params := t.InputSchema
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out.Tools = append(out.Tools, chat.Tool{Type: "function", Function: &chat.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: params,
		}})
	}
	if tc := req.ToolChoice; tc != nil {
		switch tc.Type {
		case "auto":
			out.ToolChoice = &chat.ToolChoice{Mode: chat.ToolChoiceAuto}
		case "any":
			out.ToolChoice = &chat.ToolChoice{Mode: chat.ToolChoiceRequired}
		case "none":
			out.ToolChoice = &chat.ToolChoice{Mode: chat.ToolChoiceNone}
		case "tool":
			out.ToolChoice = &chat.ToolChoice{Function: tc.Name}
		}
		if tc.DisableParallelToolUse && len(req.Tools) > 0 {
			extra["parallel_tool_calls"] = json.RawMessage("false")
		}
	}
	if len(extra) > 0 {
		out.Extra = extra
	}
	return out
}

// effort is the reasoning effort of a thinking budget.
func effort(budget int) string {
	switch {
	case budget < 4096:
		return "low"
	case budget < 16384:
		return "medium"
	}
	return "high"
}

// appendChatMessages appends the chat messages of m to out: a user
// message's tool results become tool messages (first, in order), and the
// rest of it one user message; an assistant message's text becomes its
// content and its tool_use blocks its tool calls (thinking blocks are
// left out: a chat message has no place for them).
func appendChatMessages(out []chat.Message, m *Message) []chat.Message {
	if m.Content.Text != nil {
		return append(out, chat.Message{Role: m.Role, Content: chat.TextContent(*m.Content.Text)})
	}
	if m.Role == RoleAssistant {
		msg := chat.Message{Role: chat.RoleAssistant}
		var text []string
		for _, b := range m.Content.Blocks {
			switch b.Type {
			case BlockText:
				text = append(text, b.Text)
			case BlockToolUse:
				args := string(b.Input)
				if args == "" {
					args = "{}"
				}
				msg.ToolCalls = append(msg.ToolCalls, chat.ToolCall{ID: b.ID, Type: "function",
					Function: chat.FunctionCall{Name: b.Name, Arguments: args}})
			}
		}
		if len(text) > 0 || len(msg.ToolCalls) == 0 {
			msg.Content = chat.TextContent(strings.Join(text, ""))
		}
		return append(out, msg)
	}
	var parts []chat.ContentPart
	for _, b := range m.Content.Blocks {
		switch b.Type {
		case BlockToolResult:
			out = append(out, chat.Message{Role: chat.RoleTool, ToolCallID: b.ToolUseID, Content: chat.TextContent(toolResultText(&b))})
		case BlockText:
			parts = append(parts, chat.ContentPart{Type: chat.PartText, Text: b.Text})
		case BlockImage:
			parts = append(parts, chat.ContentPart{Type: chat.PartImageURL, ImageURL: &chat.ImageURL{URL: imageURL(b.Source)}})
		}
	}
	if len(parts) > 0 || len(m.Content.Blocks) == 0 {
		out = append(out, chat.Message{Role: chat.RoleUser, Content: chat.PartsContent(parts...)})
	}
	return out
}

// toolResultText is the text of a tool result: its content's text, with
// "(error) " before it when is_error is set.
func toolResultText(b *ContentBlock) string {
	var s string
	if b.Content != nil {
		s = b.Content.String()
	}
	if b.IsError {
		s = "(error) " + s
	}
	return s
}

// StopReasonOf returns the stop reason of a chat finish reason: stop is
// end_turn, length max_tokens, tool_calls tool_use and content_filter
// refusal. A chat reply does not say whether a stop sequence ended it, so
// stop_sequence is never sent for it.
func StopReasonOf(f chat.FinishReason) StopReason {
	switch f {
	case chat.FinishLength:
		return StopMaxTokens
	case chat.FinishToolCalls:
		return StopToolUse
	case chat.FinishContentFilter:
		return StopRefusal
	}
	return StopEndTurn
}

// FinishReasonOf returns the chat finish reason of a stop reason:
// end_turn, stop_sequence and pause_turn are stop, max_tokens length,
// tool_use tool_calls and refusal content_filter.
func FinishReasonOf(s StopReason) chat.FinishReason {
	switch s {
	case StopMaxTokens:
		return chat.FinishLength
	case StopToolUse:
		return chat.FinishToolCalls
	case StopRefusal:
		return chat.FinishContentFilter
	}
	return chat.FinishStop
}

// usageOf is the messages-format usage of a normalized chat usage: the
// format counts the prompt cache's reads and writes apart from
// input_tokens, so a usage with prompt_tokens_details has the prompt
// tokens less the cached and cache-write tokens as input_tokens, and
// those as cache_read_input_tokens and cache_creation_input_tokens.
func usageOf(u *chat.Usage) Usage {
	out := Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	if d := u.PromptTokensDetails; d != nil {
		read, write := d.CachedTokens, d.CacheWriteTokens
		out.InputTokens -= read + write
		out.CacheReadInputTokens, out.CacheCreationInputTokens = &read, &write
	}
	return out
}

// replyOf makes the reply of a backend's result.
func replyOf(res *chat.Result, model string) (*Reply, error) {
	o := &res.Choices[0]
	r := &Reply{
		ID:         ids.New(IDPrefix),
		Type:       "message",
		Role:       RoleAssistant,
		Model:      model,
		Content:    []ContentBlock{},
		StopReason: StopReasonOf(finishReason(o)),
		Usage:      usageOf(&res.Usage),
	}
	if o.Reasoning != "" {
		r.Content = append(r.Content, ContentBlock{Type: BlockThinking, Thinking: o.Reasoning})
	}
	if o.Content != "" {
		r.Content = append(r.Content, ContentBlock{Type: BlockText, Text: o.Content})
	}
	for _, tc := range o.ToolCalls {
		input := json.RawMessage(tc.Function.Arguments)
		if strings.TrimSpace(tc.Function.Arguments) == "" {
			input = json.RawMessage("{}")
		} else if !isObject(input) {
			return nil, apierrors.Internal(fmt.Errorf("messages: backend sent tool call arguments that are not a JSON object: %.40q", tc.Function.Arguments))
		}
		id := tc.ID
		if id == "" {
			id = ids.New(toolIDPrefix)
		}
		r.Content = append(r.Content, ContentBlock{Type: BlockToolUse, ID: id, Name: tc.Function.Name, Input: input})
	}
	return r, nil
}

// finishReason is o's finish reason, or its default.
func finishReason(o *chat.Output) chat.FinishReason {
	switch {
	case o.FinishReason != "":
		return o.FinishReason
	case len(o.ToolCalls) > 0:
		return chat.FinishToolCalls
	}
	return chat.FinishStop
}
