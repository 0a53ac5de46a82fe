package chat

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/chatdecode"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/jsonext"
)

// The message roles of spec §4.1, plus "developer", which OpenAI's current
// API and SDKs send in place of "system" for some models.
const (
	RoleSystem    = "system"
	RoleDeveloper = "developer"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// The content part types of spec §4.1.
const (
	PartText     = "text"
	PartImageURL = "image_url"
)

// The string forms of tool_choice.
const (
	ToolChoiceNone     = "none"
	ToolChoiceAuto     = "auto"
	ToolChoiceRequired = "required"
)

// The response_format types.
const (
	FormatText       = "text"
	FormatJSONObject = "json_object"
	FormatJSONSchema = "json_schema"
)

// MaxChoices is the largest n a request may ask for, as in OpenAI's API.
const MaxChoices = endpoint.MaxChoices

// MaxStop is the largest number of stop sequences a request may send.
const MaxStop = endpoint.MaxStop

// Request is the body of POST /v1/chat/completions (spec §4.1).
//
// Fields that Request does not model (seed, user, logprobs,
// parallel_tool_calls, reasoning_effort, …) are kept in Extra when it is
// decoded and written back when it is encoded, so that a relay forwards
// them unchanged. Message, ContentPart, Tool and StreamOptions keep
// theirs the same way.
type Request struct {
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`

	Stream        bool           `json:"stream,omitempty"`
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`

	// Temperature is 0 to 2; TopP 0 to 1 (spec §8). nil means the
	// backend's default.
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`

	// N is the number of choices, 1 to [MaxChoices]; nil means 1. See
	// [Request.Choices].
	N *int `json:"n,omitempty"`

	// MaxTokens and MaxCompletionTokens cap the tokens of each choice;
	// see [Request.TokenLimit].
	MaxTokens           *int `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int `json:"max_completion_tokens,omitempty"`

	Stop Stop `json:"stop,omitempty"`

	Tools          []Tool          `json:"tools,omitempty"`
	ToolChoice     *ToolChoice     `json:"tool_choice,omitempty"`
	ResponseFormat *ResponseFormat `json:"response_format,omitempty"`

	// Extra holds the members of the JSON object that Request does not
	// model, by name, as they were sent.
	Extra map[string]json.RawMessage `json:"-"`
}

var requestJSON = jsonext.NewCodec[Request]()

// The types without their methods, for encoding/json.
type (
	plainRequest Request
	plainMessage Message
	plainTool    Tool
)

// requestShadow decodes a request in one pass of encoding/json. Its
// Messages and Tools, at the top level, take the place of those of the
// embedded request (encoding/json gives the shallower field the name),
// and their elements have no UnmarshalJSON: decoding each one through its
// own UnmarshalJSON would scan it twice more. [Request.decode] collects
// their unknown members itself.
type requestShadow struct {
	*plainRequest
	Messages []plainMessage `json:"messages"`
	Tools    []plainTool    `json:"tools,omitempty"`
}

// UnmarshalJSON decodes a request, keeping unmodelled fields in Extra, and
// those of its messages and tools in theirs.
func (r *Request) UnmarshalJSON(b []byte) error {
	err := r.decode(b, json.Unmarshal)
	if err != nil && !apierrors.Has(err) {
		// Decode again the plain way for encoding/json's error, whose
		// field path would otherwise show the shadow type.
		*r = Request{}
		if perr := json.Unmarshal(b, (*plainRequest)(r)); perr != nil {
			return perr
		}
	}
	return err
}

// decodeRequest decodes a request body into r, which must be zero, as
// [Request.UnmarshalJSON] does; r shares no memory with body. The usual
// request is decoded in one pass by [decodeRequestFast]; any other is
// left to [decodeRequestReflect].
func decodeRequest(body []byte, r *Request) error {
	if decodeRequestFast(body, r) {
		return nil
	}
	requestFallback.Add()
	*r = Request{}
	return decodeRequestReflect(body, r)
}

// requestFallback counts the request bodies that decodeRequestFast
// could not take.
var requestFallback = jsonext.NewFallback("chat.Request")

// requestType is the type that a request body decodes into, for the
// duplicate check of httpjson.CheckObject.
var requestType = reflect.TypeFor[Request]()

// decodeRequestReflect decodes a request body with encoding/json, as
// [Request.UnmarshalJSON] does, and refuses one that is not an object or
// names a member twice (httpjson.CheckObject). When decoding fails, it
// decodes the body again the plain way, through httpjson, for the error
// message: the shadow type of [Request.decode] would show in the field
// paths of encoding/json's errors.
func decodeRequestReflect(body []byte, r *Request) error {
	err := r.decode(body, json.Unmarshal)
	if err == nil {
		return httpjson.CheckObject(body, requestType)
	}
	if apierrors.Has(err) {
		return err
	}
	*r = Request{}
	if err := httpjson.Unmarshal(body, (*plainRequest)(r)); err != nil {
		return err
	}
	return apierrors.InvalidRequest("", "request body could not be decoded").WithCause(err)
}

func init() {
	chatdecode.WithUnmarshal = func(data []byte, r any, unmarshal func([]byte, any) error) error {
		return r.(*Request).decode(data, unmarshal)
	}
}

// decode decodes data into r with unmarshal, then walks data once to
// collect the members that r, its messages and its tools do not model.
func (r *Request) decode(data []byte, unmarshal func([]byte, any) error) error {
	sh := requestShadow{plainRequest: (*plainRequest)(r)}
	if err := unmarshal(data, &sh); err != nil {
		return err
	}
	// plainMessage and Message (plainTool and Tool) have the same
	// underlying type: each element converts.
	r.Messages, r.Tools = nil, nil
	if sh.Messages != nil {
		r.Messages = make([]Message, len(sh.Messages))
		for i := range sh.Messages {
			r.Messages[i] = Message(sh.Messages[i])
		}
	}
	if sh.Tools != nil {
		r.Tools = make([]Tool, len(sh.Tools))
		for i := range sh.Tools {
			r.Tools[i] = Tool(sh.Tools[i])
		}
	}
	r.Extra = nil
	return jsonext.WalkObject(data, func(key, val []byte) error {
		switch {
		case jsonext.KeyIs(key, "messages"):
			return collectExtras(val, r.Messages, messageJSON.Known(), func(m *Message) *map[string]json.RawMessage { return &m.Extra })
		case jsonext.KeyIs(key, "tools"):
			return collectExtras(val, r.Tools, toolJSON.Known(), func(t *Tool) *map[string]json.RawMessage { return &t.Extra })
		}
		return jsonext.KeepUnknown(&r.Extra, requestJSON.Known(), key, val)
	})
}

// collectExtras sets the Extra of each element of list to the unknown
// members of the matching element of the JSON array data.
func collectExtras[T any](data []byte, list []T, known jsonext.FieldSet, extra func(*T) *map[string]json.RawMessage) error {
	i := 0
	return jsonext.WalkArray(data, func(elem []byte) error {
		if i >= len(list) {
			return nil
		}
		ex, err := jsonext.UnknownMembers(elem, known)
		*extra(&list[i]) = ex
		i++
		return err
	})
}

// MarshalJSON encodes a request with its Extra fields.
func (r Request) MarshalJSON() ([]byte, error) { return requestJSON.Encode(&r) }

// Choices returns the number of choices the request asks for: N, or 1.
func (r *Request) Choices() int {
	if r.N == nil {
		return 1
	}
	return *r.N
}

// TokenLimit returns the cap on each choice's completion tokens, or 0 for
// none: MaxCompletionTokens if set, else MaxTokens. (OpenAI deprecated
// max_tokens in favour of max_completion_tokens, which also counts
// reasoning tokens.)
func (r *Request) TokenLimit() int {
	switch {
	case r.MaxCompletionTokens != nil:
		return *r.MaxCompletionTokens
	case r.MaxTokens != nil:
		return *r.MaxTokens
	}
	return 0
}

// IncludeUsage reports whether a streamed reply must end with a usage
// chunk (stream_options.include_usage).
func (r *Request) IncludeUsage() bool {
	return r.StreamOptions != nil && r.StreamOptions.IncludeUsage
}

// StreamOptions are the options of a streamed reply: [endpoint.StreamOptions].
type StreamOptions = endpoint.StreamOptions

// Message is one message of the conversation.
//
// Content is required, except on an assistant message that carries
// ToolCalls. ToolCallID is required on tool messages.
type Message struct {
	Role       string     `json:"role"`
	Content    Content    `json:"content"`
	Name       string     `json:"name,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`

	Extra map[string]json.RawMessage `json:"-"`
}

var messageJSON = jsonext.NewCodec[Message]()

// UnmarshalJSON decodes a message, keeping unmodelled fields in Extra.
func (m *Message) UnmarshalJSON(b []byte) error { return messageJSON.Decode(b, m) }

// MarshalJSON encodes a message with its Extra fields.
func (m Message) MarshalJSON() ([]byte, error) { return messageJSON.Encode(&m) }

// Content is the content of a message: a string, an array of parts, or
// null. Text is set for a string and Parts for an array (an empty array
// is a non-nil empty slice); neither is set for null or an absent field.
// Build one with [TextContent] or [PartsContent].
type Content struct {
	Text  *string
	Parts []ContentPart

	// invalid names the JSON kind of a value that is neither a string, an
	// array nor null; validation reports it with the message's path.
	invalid string
}

// TextContent returns string content.
func TextContent(s string) Content { return Content{Text: &s} }

// PartsContent returns array content.
func PartsContent(parts ...ContentPart) Content {
	if parts == nil {
		parts = []ContentPart{}
	}
	return Content{Parts: parts}
}

// IsNull reports whether the content is null or absent.
func (c Content) IsNull() bool { return c.Text == nil && c.Parts == nil && c.invalid == "" }

// String returns the text of the content: the string, or the text of its
// text parts joined with "\n". Other parts are left out; null is "".
func (c Content) String() string {
	if c.Text != nil {
		return *c.Text
	}
	switch len(c.Parts) {
	case 0:
		return ""
	case 1:
		return c.Parts[0].Text
	}
	var b strings.Builder
	first := true
	for _, p := range c.Parts {
		if p.Type != PartText {
			continue
		}
		if !first {
			b.WriteByte('\n')
		}
		first = false
		b.WriteString(p.Text)
	}
	return b.String()
}

// UnmarshalJSON decodes a string, an array of parts or null. Another kind
// of value is not a decoding error: validation reports it with the path
// of the message.
func (c *Content) UnmarshalJSON(b []byte) error {
	*c = Content{}
	var err error
	c.invalid, err = jsonext.StringOrArray(b, &c.Text, &c.Parts)
	return err
}

// MarshalJSON encodes the content in the form it has.
func (c Content) MarshalJSON() ([]byte, error) {
	switch {
	case c.Text != nil:
		return json.Marshal(*c.Text)
	case c.Parts != nil:
		return json.Marshal(c.Parts)
	}
	return []byte("null"), nil
}

// ContentPart is one part of array content: {"type":"text","text"} or
// {"type":"image_url","image_url":{"url"}}. Parts of other types are kept
// (their fields in Extra) and handed to the backend, which may ignore
// them.
type ContentPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *ImageURL `json:"image_url,omitempty"`

	Extra map[string]json.RawMessage `json:"-"`
}

var contentPartJSON = jsonext.NewCodec[ContentPart]()

// UnmarshalJSON decodes a part, keeping unmodelled fields in Extra.
func (p *ContentPart) UnmarshalJSON(b []byte) error { return contentPartJSON.Decode(b, p) }

// MarshalJSON encodes a part with its Extra fields.
func (p ContentPart) MarshalJSON() ([]byte, error) { return contentPartJSON.Encode(&p) }

// ImageURL is the image of an image_url part: an http(s) URL or a data
// URI holding a base64 image ("data:image/png;base64,…").
type ImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

// ToolCall is a call of a function tool, in an assistant message of the
// request and in a reply (spec §2.1).
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function of a [ToolCall] and carries its
// arguments as a JSON string.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is a tool the model may call. Only function tools are defined.
type Tool struct {
	Type     string              `json:"type"`
	Function *FunctionDefinition `json:"function"`

	Extra map[string]json.RawMessage `json:"-"`
}

var toolJSON = jsonext.NewCodec[Tool]()

// UnmarshalJSON decodes a tool, keeping unmodelled fields in Extra.
func (t *Tool) UnmarshalJSON(b []byte) error { return toolJSON.Decode(b, t) }

// MarshalJSON encodes a tool with its Extra fields.
func (t Tool) MarshalJSON() ([]byte, error) { return toolJSON.Encode(&t) }

// FunctionDefinition describes a function tool. Parameters is its JSON
// Schema, kept as sent.
type FunctionDefinition struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// ToolChoice is the tool selection policy: a string (Mode: "none",
// "auto" or "required") or an object naming a function to call
// ({"type":"function","function":{"name"}}, Function set, Mode empty).
type ToolChoice struct {
	Mode     string
	Function string
}

// Forced reports whether the choice obliges the model to call a tool:
// "required", or a named function.
func (c *ToolChoice) Forced() bool {
	return c != nil && (c.Mode == ToolChoiceRequired || c.Function != "")
}

type toolChoiceObject struct {
	Type     string `json:"type"`
	Function *struct {
		Name string `json:"name"`
	} `json:"function"`
}

// UnmarshalJSON decodes either form. An invalid value is a 400 with param
// "tool_choice".
func (c *ToolChoice) UnmarshalJSON(b []byte) error {
	*c = ToolChoice{}
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &c.Mode); err != nil {
			return err
		}
		switch c.Mode {
		case ToolChoiceNone, ToolChoiceAuto, ToolChoiceRequired:
			return nil
		}
		return apierrors.InvalidRequestf("tool_choice", "tool_choice must be one of none, auto, required, or an object naming a function, got %s", apierrors.Quote(c.Mode))
	}
	if len(b) == 0 {
		return apierrors.InvalidRequest("tool_choice", "tool_choice must be a string or an object")
	}
	if b[0] != '{' {
		return apierrors.InvalidRequestf("tool_choice", "tool_choice must be a string or an object, got %s", jsonext.Kind(b[0]))
	}
	var o toolChoiceObject
	if err := json.Unmarshal(b, &o); err != nil {
		return apierrors.InvalidRequest("tool_choice", "tool_choice must be {\"type\":\"function\",\"function\":{\"name\":…}}").WithCause(err)
	}
	if o.Type != "function" {
		return apierrors.InvalidRequestf("tool_choice.type", "tool_choice.type must be function, got %s", apierrors.Quote(o.Type))
	}
	if o.Function == nil || o.Function.Name == "" {
		return apierrors.InvalidRequest("tool_choice.function.name", "tool_choice.function.name is required")
	}
	c.Function = o.Function.Name
	return nil
}

// MarshalJSON encodes the form that was set.
func (c ToolChoice) MarshalJSON() ([]byte, error) {
	if c.Function != "" {
		o := toolChoiceObject{Type: "function"}
		o.Function = &struct {
			Name string `json:"name"`
		}{c.Function}
		return json.Marshal(o)
	}
	return json.Marshal(c.Mode)
}

// ResponseFormat asks for structured output: "text", "json_object", or
// "json_schema" with JSONSchema.
type ResponseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *JSONSchema `json:"json_schema,omitempty"`
}

// JSONSchema is the schema of a json_schema response format.
type JSONSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// Stop is the stop sequences of a request: [endpoint.Stop].
type Stop = endpoint.Stop
