package messages

import (
	"bytes"
	"encoding/json"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// The roles of a conversation's messages.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// The types of content blocks.
const (
	BlockText             = "text"
	BlockImage            = "image"
	BlockToolUse          = "tool_use"
	BlockToolResult       = "tool_result"
	BlockThinking         = "thinking"
	BlockRedactedThinking = "redacted_thinking"
)

// The types of stream events, in the order a stream sends them (ping is
// sent once, after the first content_block_start; error ends a stream
// that fails).
const (
	EventMessageStart      = "message_start"
	EventContentBlockStart = "content_block_start"
	EventPing              = "ping"
	EventContentBlockDelta = "content_block_delta"
	EventContentBlockStop  = "content_block_stop"
	EventMessageDelta      = "message_delta"
	EventMessageStop       = "message_stop"
	EventError             = "error"
)

// The types of the delta of a content_block_delta event.
const (
	DeltaText      = "text_delta"
	DeltaInputJSON = "input_json_delta"
	DeltaThinking  = "thinking_delta"
	DeltaSignature = "signature_delta"
)

// Request is the body of POST /v1/messages. Members that it does not
// model are ignored.
type Request struct {
	Model         string      `json:"model"`
	MaxTokens     int         `json:"max_tokens"`
	Messages      []Message   `json:"messages"`
	System        *Content    `json:"system,omitempty"`
	StopSequences []string    `json:"stop_sequences,omitempty"`
	Stream        bool        `json:"stream,omitempty"`
	Temperature   *float64    `json:"temperature,omitempty"`
	TopP          *float64    `json:"top_p,omitempty"`
	TopK          *int        `json:"top_k,omitempty"`
	Tools         []Tool      `json:"tools,omitempty"`
	ToolChoice    *ToolChoice `json:"tool_choice,omitempty"`
	Metadata      *Metadata   `json:"metadata,omitempty"`
	Thinking      *Thinking   `json:"thinking,omitempty"`
}

// Message is one turn of a conversation: role user or assistant, and its
// content.
type Message struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// Content is a message's content (or a system prompt, or a tool result's
// content): a string, or an array of content blocks. Exactly one of Text
// and Blocks is set once decoded.
type Content struct {
	Text   *string
	Blocks []ContentBlock
}

// TextContent returns the content of one string.
func TextContent(s string) Content { return Content{Text: &s} }

// String returns the text of c: its string, or its text blocks joined
// with "\n".
func (c Content) String() string {
	if c.Text != nil {
		return *c.Text
	}
	var sb strings.Builder
	for i, b := range c.Blocks {
		if b.Type != BlockText {
			continue
		}
		if i > 0 && sb.Len() > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(b.Text)
	}
	return sb.String()
}

// UnmarshalJSON decodes a string or an array of blocks. null, or any
// other value, is an error.
func (c *Content) UnmarshalJSON(b []byte) error {
	b = bytes.TrimLeft(b, " \t\r\n")
	switch {
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = Content{Text: &s}
		return nil
	case len(b) > 0 && b[0] == '[':
		var blocks []ContentBlock
		if err := json.Unmarshal(b, &blocks); err != nil {
			return err
		}
		if blocks == nil {
			blocks = []ContentBlock{}
		}
		*c = Content{Blocks: blocks}
		return nil
	}
	return errNotContent
}

var errNotContent = apierrors.InvalidRequest("", "content must be a string or an array of content blocks")

// MarshalJSON encodes c as a string or an array of blocks.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.Text != nil {
		return json.Marshal(*c.Text)
	}
	if c.Blocks == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(c.Blocks)
}

// ContentBlock is one block of content. Type says which fields it uses:
//
//	text               Text
//	image              Source
//	tool_use           ID, Name, Input
//	tool_result        ToolUseID, Content, IsError
//	thinking           Thinking, Signature
//	redacted_thinking  Data
//
// cache_control and citations are accepted and ignored.
type ContentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Source    *ImageSource    `json:"source,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *Content        `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
}

// MarshalJSON encodes b with the members of its type, those that the
// format always sends included (the text of a text block, the input of a
// tool_use block, the thinking and signature of a thinking block).
func (b ContentBlock) MarshalJSON() ([]byte, error) {
	switch b.Type {
	case BlockText:
		return json.Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{b.Type, b.Text})
	case BlockToolUse:
		input := b.Input
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		return json.Marshal(struct {
			Type  string          `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		}{b.Type, b.ID, b.Name, input})
	case BlockThinking:
		return json.Marshal(struct {
			Type      string `json:"type"`
			Thinking  string `json:"thinking"`
			Signature string `json:"signature"`
		}{b.Type, b.Thinking, b.Signature})
	}
	type plain ContentBlock
	return json.Marshal(plain(b))
}

// ImageSource is the source of an image block: base64 data with its
// media type, or a URL.
type ImageSource struct {
	Type      string `json:"type"` // base64 or url
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// Tool is a client tool the model may call: its name, description and
// the JSON schema of its input. Server tools (a Type other than "" or
// "custom") are refused.
type Tool struct {
	Type        string          `json:"type,omitempty"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// ToolChoice says how the model uses tools: Type auto, any, tool (with
// Name) or none.
type ToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

// Metadata is a request's metadata: an opaque id of the end user.
type Metadata struct {
	UserID string `json:"user_id,omitempty"`
}

// Thinking asks for extended thinking: Type enabled (with a budget of
// tokens) or disabled.
type Thinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
}

// StopReason says why a reply ended. The empty StopReason encodes as
// null (the stop_reason of message_start).
type StopReason string

// The stop reasons.
const (
	StopEndTurn      StopReason = "end_turn"
	StopMaxTokens    StopReason = "max_tokens"
	StopStopSequence StopReason = "stop_sequence"
	StopToolUse      StopReason = "tool_use"
	StopRefusal      StopReason = "refusal"
	StopPauseTurn    StopReason = "pause_turn"
)

// MarshalJSON encodes the empty reason as null.
func (s StopReason) MarshalJSON() ([]byte, error) {
	if s == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(s))
}

// Reply is the reply of POST /v1/messages: type "message", role
// "assistant", its content blocks, its stop reason and usage.
type Reply struct {
	ID           string         `json:"id"`
	Type         string         `json:"type"`
	Role         string         `json:"role"`
	Model        string         `json:"model"`
	Content      []ContentBlock `json:"content"`
	StopReason   StopReason     `json:"stop_reason"`
	StopSequence *string        `json:"stop_sequence"`
	Usage        Usage          `json:"usage"`
}

// Usage is the token usage of a reply.
type Usage struct {
	InputTokens              int  `json:"input_tokens"`
	OutputTokens             int  `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens,omitempty"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens,omitempty"`
}

// Event is one event of a stream, as its data carries it; the SSE event
// name is its Type. Which fields are set depends on the type:
//
//	message_start        Message (content empty, usage so far)
//	content_block_start  Index, ContentBlock (empty)
//	content_block_delta  Index, Delta (Type text_delta, input_json_delta,
//	                     thinking_delta or signature_delta)
//	content_block_stop   Index
//	message_delta        Delta (StopReason, StopSequence), Usage
//	message_stop, ping   nothing
//	error                Error
type Event struct {
	Type         string                   `json:"type"`
	Message      *Reply                   `json:"message,omitempty"`
	Index        *int                     `json:"index,omitempty"`
	ContentBlock *ContentBlock            `json:"content_block,omitempty"`
	Delta        *EventDelta              `json:"delta,omitempty"`
	Usage        *Usage                   `json:"usage,omitempty"`
	Error        *apierrors.MessagesError `json:"error,omitempty"`
}

// EventDelta is the delta of a content_block_delta or message_delta
// event.
type EventDelta struct {
	Type         string     `json:"type,omitempty"`
	Text         string     `json:"text,omitempty"`
	PartialJSON  string     `json:"partial_json,omitempty"`
	Thinking     string     `json:"thinking,omitempty"`
	Signature    string     `json:"signature,omitempty"`
	StopReason   StopReason `json:"stop_reason,omitempty"`
	StopSequence *string    `json:"stop_sequence,omitempty"`
}
