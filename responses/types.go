package responses

import (
	"bytes"
	"encoding/json"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/jsonext"
)

// The object names of the replies.
const (
	// ObjectResponse is the "object" of a [Response].
	ObjectResponse = "response"
	// ObjectCompaction is the "object" of a [CompactedResponse].
	ObjectCompaction = "response.compaction"
)

// The prefixes of the ids the handler makes: response ids, output item
// ids (message, function call, compaction item) and function call ids.
const (
	IDPrefix           = "resp_"
	MessageIDPrefix    = "msg_"
	FunctionIDPrefix   = "fc_"
	ReasoningIDPrefix  = "rs_"
	CallIDPrefix       = "call_"
	CompactionIDPrefix = "cmp_"
)

// Status is the status of a [Response] (spec §3.2) or of an output item.
type Status string

// The statuses of a response. Output items use completed, in_progress and
// incomplete.
const (
	StatusCompleted  Status = "completed"
	StatusInProgress Status = "in_progress"
	StatusFailed     Status = "failed"
	StatusIncomplete Status = "incomplete"
)

// The reasons of an incomplete response (incomplete_details.reason).
const (
	// ReasonMaxOutputTokens: max_output_tokens was reached.
	ReasonMaxOutputTokens = "max_output_tokens"
	// ReasonContentFilter: a safety policy stopped the reply.
	ReasonContentFilter = "content_filter"
)

// The item types of input and output.
const (
	ItemMessage            = "message"
	ItemFunctionCall       = "function_call"
	ItemFunctionCallOutput = "function_call_output"
	ItemCompaction         = "compaction"
	ItemReasoning          = "reasoning"
)

// The message roles of input items.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleSystem    = "system"
	RoleDeveloper = "developer"
)

// The content part types.
const (
	PartInputText  = "input_text"
	PartInputImage = "input_image"
	PartInputFile  = "input_file"
	PartOutputText = "output_text"
	PartRefusal    = "refusal"
	PartSummary    = "summary_text"
)

// The string forms of tool_choice.
const (
	ToolChoiceNone     = "none"
	ToolChoiceAuto     = "auto"
	ToolChoiceRequired = "required"
)

// ToolFunction is the type of a function tool.
const ToolFunction = "function"

// Metadata limits, as OpenAI's API sets them: at most 16 pairs, keys of at
// most 64 characters, values of at most 512.
const (
	MaxMetadataPairs = 16
	MaxMetadataKey   = 64
	MaxMetadataValue = 512
)

// Request is the body of POST /v1/responses (spec §4.3).
//
// Fields that Request does not model (reasoning, truncation, user,
// include, prompt_cache_key, …) are kept in Extra when it is decoded and
// written back when it is encoded, so that a relay forwards the request
// unchanged. Item, ContentPart and Tool keep theirs the same way.
type Request struct {
	Model string `json:"model"`
	// Input is required: a string, or a non-empty array of items.
	Input Input `json:"input"`

	Instructions *string `json:"instructions,omitempty"`
	Stream       bool    `json:"stream,omitempty"`
	// Background runs the response on the handler's [Background]
	// workers: the request is answered at once, queued (see the package
	// documentation). It needs Store.
	Background *bool `json:"background,omitempty"`

	// Temperature is 0 to 2 and TopP 0 to 1, as for chat; nil means the
	// backend's default.
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	// MaxOutputTokens caps the tokens of the reply (all its output items).
	MaxOutputTokens *int `json:"max_output_tokens,omitempty"`

	Tools             []Tool      `json:"tools,omitempty"`
	ToolChoice        *ToolChoice `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool       `json:"parallel_tool_calls,omitempty"`

	// Text configures the text output: structured output with
	// text.format (nil means plain text).
	Text *TextConfig `json:"text,omitempty"`

	// PreviousResponseID continues the conversation of a stored response.
	PreviousResponseID string `json:"previous_response_id,omitempty"`
	// Conversation names a conversation of the handler's
	// [ConversationStore] (see [WithConversations]): its items come
	// before the input, and the input and output are added to it. It
	// excludes PreviousResponseID.
	Conversation *ConversationRef `json:"conversation,omitempty"`
	// Store is whether the response is kept; nil means true.
	Store    *bool             `json:"store,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`

	// Extra holds the members of the JSON object that Request does not
	// model, by name, as they were sent.
	Extra map[string]json.RawMessage `json:"-"`
}

var requestJSON = jsonext.NewCodec[Request]()

// UnmarshalJSON decodes a request, keeping unmodelled fields in Extra.
func (r *Request) UnmarshalJSON(b []byte) error { return requestJSON.Decode(b, r) }

// MarshalJSON encodes a request with its Extra fields.
func (r Request) MarshalJSON() ([]byte, error) { return requestJSON.Encode(&r) }

// InBackground reports whether the request asks for a background run.
func (r *Request) InBackground() bool { return r.Background != nil && *r.Background }

// Stored reports whether the response is to be kept: Store, or true.
func (r *Request) Stored() bool { return r.Store == nil || *r.Store }

// Parallel reports whether tool calls may run in parallel:
// ParallelToolCalls, or true.
func (r *Request) Parallel() bool { return r.ParallelToolCalls == nil || *r.ParallelToolCalls }

// TokenLimit returns MaxOutputTokens, or 0 for no cap.
func (r *Request) TokenLimit() int {
	if r.MaxOutputTokens == nil {
		return 0
	}
	return *r.MaxOutputTokens
}

// ConversationRef names a conversation: the "conversation" member of a
// request, which OpenAI's API takes as the conversation's id or as
// {"id": …}, and of a response, always {"id": …}.
type ConversationRef struct {
	ID string `json:"id"`
}

// UnmarshalJSON decodes a conversation id or an object {"id": …}; any
// other value is a 400 invalid_request_error with param "conversation".
func (c *ConversationRef) UnmarshalJSON(b []byte) error {
	*c = ConversationRef{}
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) > 0 && b[0] == '"' {
		id, err := jsonext.Unquote(b)
		c.ID = id
		return err
	}
	if len(b) == 0 || b[0] != '{' {
		kind := "nothing"
		if len(b) > 0 {
			kind = jsonext.Kind(b[0])
		}
		return apierrors.InvalidRequestf("conversation", "conversation must be a conversation id or an object {\"id\": …}, got %s", kind)
	}
	var o struct {
		ID *string `json:"id"`
	}
	if err := json.Unmarshal(b, &o); err != nil || o.ID == nil {
		return apierrors.InvalidRequest("conversation.id", "conversation.id must be a string").WithCause(err)
	}
	c.ID = *o.ID
	return nil
}

// Input is the input of a request: a string (Text set) or an array of
// items (Items set; an empty array is a non-nil empty slice). Build one
// with [TextInput] or [ItemsInput].
type Input struct {
	Text  *string
	Items []Item

	// invalid names the JSON kind of a value of another kind, kept as
	// sent in raw; validation reports it with param "input".
	invalid string
	raw     json.RawMessage
}

// TextInput returns string input.
func TextInput(s string) Input { return Input{Text: &s} }

// ItemsInput returns array input.
func ItemsInput(items ...Item) Input {
	if items == nil {
		items = []Item{}
	}
	return Input{Items: items}
}

// IsZero reports whether the input is absent or null.
func (in Input) IsZero() bool { return in.Text == nil && in.Items == nil && in.invalid == "" }

// AsItems returns the input as items: the items, or string input as one
// user message. The result may share memory with in.
func (in Input) AsItems() []Item {
	if in.Text != nil {
		return []Item{{Type: ItemMessage, Role: RoleUser, Content: TextContent(*in.Text)}}
	}
	return in.Items
}

// UnmarshalJSON decodes a string, an array of items or null. Another kind
// of value is not a decoding error: validation reports it.
func (in *Input) UnmarshalJSON(b []byte) error {
	*in = Input{}
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return nil
	}
	switch b[0] {
	case '"':
		s, err := jsonext.Unquote(b)
		if err != nil {
			return err
		}
		in.Text = &s
	case '[':
		// Decode the items through their method-less type, in this one
		// pass, then collect their unmodelled members with a scan: going
		// through Item.UnmarshalJSON would validate each item again.
		items := []plainItem{}
		if err := json.Unmarshal(b, &items); err != nil {
			return err
		}
		in.Items = make([]Item, len(items))
		for i := range items {
			in.Items[i] = Item(items[i])
		}
		i := 0
		return jsonext.WalkArray(b, func(elem []byte) error {
			if i >= len(in.Items) {
				return nil
			}
			var err error
			in.Items[i].Extra, err = jsonext.UnknownMembers(elem, itemJSON.Known())
			i++
			return err
		})
	case 'n':
	default:
		in.invalid, in.raw = jsonext.Kind(b[0]), bytes.Clone(b)
	}
	return nil
}

// plainItem is Item without its methods; the two have the same
// underlying type, so each plainItem converts to an Item.
type plainItem Item

// MarshalJSON encodes the input in the form it has; absent input is null,
// and a value of another kind is written back as it was sent.
func (in Input) MarshalJSON() ([]byte, error) {
	switch {
	case in.raw != nil:
		return in.raw, nil
	case in.Text != nil:
		return json.Marshal(*in.Text)
	case in.Items != nil:
		return json.Marshal(in.Items)
	}
	return []byte("null"), nil
}

// Item is one item of a conversation: an input item of a request, or an
// earlier input or output handed to a backend in [Params.History]. Its
// Type says which fields apply:
//
//   - "message" (also when Type is empty and Role is set, as OpenAI's
//     "easy input message"): Role and Content.
//   - "function_call": CallID, Name and Arguments (a JSON string).
//   - "function_call_output": CallID and Output, the tool's result.
//   - "compaction": EncryptedContent, from POST /v1/responses/compact.
//
// Items of other types (reasoning, web_search_call, item_reference, …) are
// kept with their fields in Extra and handed to the backend, which may
// ignore them.
type Item struct {
	Type   string `json:"type,omitempty"`
	ID     string `json:"id,omitempty"`
	Status string `json:"status,omitempty"`

	Role    string  `json:"role,omitempty"`
	Content Content `json:"content,omitzero"`

	CallID    string   `json:"call_id,omitempty"`
	Name      string   `json:"name,omitempty"`
	Arguments string   `json:"arguments,omitempty"`
	Output    *Content `json:"output,omitempty"`

	EncryptedContent string `json:"encrypted_content,omitempty"`

	Extra map[string]json.RawMessage `json:"-"`
}

var itemJSON = jsonext.NewCodec[Item]()

// UnmarshalJSON decodes an item, keeping unmodelled fields in Extra.
func (it *Item) UnmarshalJSON(b []byte) error { return itemJSON.Decode(b, it) }

// MarshalJSON encodes an item with its Extra fields.
func (it Item) MarshalJSON() ([]byte, error) { return itemJSON.Encode(&it) }

// Kind returns the item's type, "message" for an item with no type and a
// role.
func (it *Item) Kind() string {
	if it.Type == "" && it.Role != "" {
		return ItemMessage
	}
	return it.Type
}

// Content is the content of a message item, or the output of a
// function_call_output item: a string (Text set) or an array of parts
// (Parts set).
type Content struct {
	Text  *string
	Parts []ContentPart

	invalid string // as for Input
	raw     json.RawMessage
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

// IsZero reports whether the content is absent or null.
func (c Content) IsZero() bool { return c.Text == nil && c.Parts == nil && c.invalid == "" }

// String returns the text of the content: the string, or the text of its
// text parts (input_text, output_text, refusal) joined with "\n".
func (c Content) String() string {
	if c.Text != nil {
		return *c.Text
	}
	var b []byte
	first := true
	for i := range c.Parts {
		p := &c.Parts[i]
		switch p.Type {
		case PartInputText, PartOutputText:
			if !first {
				b = append(b, '\n')
			}
			first = false
			b = append(b, p.Text...)
		case PartRefusal:
			if !first {
				b = append(b, '\n')
			}
			first = false
			b = append(b, p.Refusal...)
		}
	}
	return string(b)
}

// UnmarshalJSON decodes a string, an array of parts or null. Another kind
// of value is not a decoding error: validation reports it.
func (c *Content) UnmarshalJSON(b []byte) error {
	*c = Content{}
	var err error
	c.invalid, err = jsonext.StringOrArray(b, &c.Text, &c.Parts)
	if c.invalid != "" {
		c.raw = bytes.Clone(bytes.TrimLeft(b, " \t\r\n"))
	}
	return err
}

// MarshalJSON encodes the content in the form it has; absent content is
// null, and a value of another kind is written back as it was sent.
func (c Content) MarshalJSON() ([]byte, error) {
	switch {
	case c.raw != nil:
		return c.raw, nil
	case c.Text != nil:
		return json.Marshal(*c.Text)
	case c.Parts != nil:
		return json.Marshal(c.Parts)
	}
	return []byte("null"), nil
}

// ContentPart is one part of array content: input_text {text},
// input_image {image_url or file_id, detail}, input_file, and in earlier
// assistant messages output_text {text, annotations} and refusal
// {refusal}. Fields it does not model are kept in Extra.
type ContentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
	FileID   string `json:"file_id,omitempty"`
	Detail   string `json:"detail,omitempty"`
	Refusal  string `json:"refusal,omitempty"`

	Extra map[string]json.RawMessage `json:"-"`
}

var contentPartJSON = jsonext.NewCodec[ContentPart]()

// UnmarshalJSON decodes a part, keeping unmodelled fields in Extra.
func (p *ContentPart) UnmarshalJSON(b []byte) error { return contentPartJSON.Decode(b, p) }

// MarshalJSON encodes a part with its Extra fields.
func (p ContentPart) MarshalJSON() ([]byte, error) { return contentPartJSON.Encode(&p) }

// Tool is a tool the model may use. Function tools ({"type":"function",
// "name","description","parameters","strict"}, flat as the responses API
// has them) are the ones a backend can call; tools of other types
// (web_search, file_search, …) are kept with their fields in Extra for
// the backend, which may ignore them.
type Tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`

	Extra map[string]json.RawMessage `json:"-"`
}

var toolJSON = jsonext.NewCodec[Tool]()

// UnmarshalJSON decodes a tool, keeping unmodelled fields in Extra.
func (t *Tool) UnmarshalJSON(b []byte) error { return toolJSON.Decode(b, t) }

// MarshalJSON encodes a tool with its Extra fields.
func (t Tool) MarshalJSON() ([]byte, error) { return toolJSON.Encode(&t) }

// ToolChoice is the tool selection policy: a string (Mode: "none", "auto"
// or "required") or an object. {"type":"function","name"} sets Function;
// every object form, that one included, is kept as sent in Raw (the
// responses API has others: allowed_tools, hosted tools…).
type ToolChoice struct {
	Mode     string
	Function string
	Raw      json.RawMessage
}

// Forced reports whether the choice obliges the model to call a tool:
// "required", or a named function.
func (c *ToolChoice) Forced() bool {
	return c != nil && (c.Mode == ToolChoiceRequired || c.Function != "")
}

// UnmarshalJSON decodes either form. An invalid value is a 400 with param
// "tool_choice".
func (c *ToolChoice) UnmarshalJSON(b []byte) error {
	*c = ToolChoice{}
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &c.Mode); err != nil {
			return err
		}
		switch c.Mode {
		case ToolChoiceNone, ToolChoiceAuto, ToolChoiceRequired:
			return nil
		}
		return apierrors.InvalidRequestf("tool_choice", "tool_choice must be one of none, auto, required, or an object, got %s", apierrors.Quote(c.Mode))
	}
	if len(b) == 0 || b[0] != '{' {
		kind := "nothing"
		if len(b) > 0 {
			kind = jsonext.Kind(b[0])
		}
		return apierrors.InvalidRequestf("tool_choice", "tool_choice must be a string or an object, got %s", kind)
	}
	var o struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return apierrors.InvalidRequest("tool_choice", `tool_choice must be a string or an object such as {"type":"function","name":…}`).WithCause(err)
	}
	switch {
	case o.Type == "":
		return apierrors.InvalidRequest("tool_choice.type", "tool_choice.type is required")
	case o.Type == ToolFunction && o.Name == "":
		return apierrors.InvalidRequest("tool_choice.name", "tool_choice.name is required")
	case o.Type == ToolFunction:
		c.Function = o.Name
	}
	c.Raw = bytes.Clone(b)
	return nil
}

// MarshalJSON encodes the form that was set.
func (c ToolChoice) MarshalJSON() ([]byte, error) {
	switch {
	case c.Raw != nil:
		return c.Raw, nil
	case c.Function != "":
		return json.Marshal(struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}{ToolFunction, c.Function})
	case c.Mode == "":
		return []byte(`"` + ToolChoiceAuto + `"`), nil
	}
	return json.Marshal(c.Mode)
}

// The text.format types.
const (
	FormatText       = "text"
	FormatJSONObject = "json_object"
	FormatJSONSchema = "json_schema"
)

// TextConfig is the "text" member of a request and of a response: Format
// asks for structured output. Members it does not model (verbosity, …)
// are kept in Extra.
type TextConfig struct {
	Format *TextFormat `json:"format,omitempty"`

	Extra map[string]json.RawMessage `json:"-"`
}

var textConfigJSON = jsonext.NewCodec[TextConfig]()

// UnmarshalJSON decodes a text config, keeping unmodelled fields in Extra.
func (t *TextConfig) UnmarshalJSON(b []byte) error { return textConfigJSON.Decode(b, t) }

// MarshalJSON encodes a text config with its Extra fields.
func (t TextConfig) MarshalJSON() ([]byte, error) { return textConfigJSON.Encode(&t) }

// TextFormat is the format of the text output, flat as the responses API
// has it: {"type":"text"}, {"type":"json_object"}, or
// {"type":"json_schema","name","schema","description","strict"}.
type TextFormat struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// CompactRequest is the body of POST /v1/responses/compact, as in OpenAI's
// API reference: the conversation to compact is that of
// PreviousResponseID (if set) followed by Input (if set); at least one of
// them is required. Unmodelled fields are kept in Extra.
type CompactRequest struct {
	Model              string  `json:"model"`
	Input              Input   `json:"input,omitzero"`
	Instructions       *string `json:"instructions,omitempty"`
	PreviousResponseID string  `json:"previous_response_id,omitempty"`

	Extra map[string]json.RawMessage `json:"-"`
}

var compactRequestJSON = jsonext.NewCodec[CompactRequest]()

// UnmarshalJSON decodes a compact request, keeping unmodelled fields in
// Extra.
func (r *CompactRequest) UnmarshalJSON(b []byte) error { return compactRequestJSON.Decode(b, r) }

// MarshalJSON encodes a compact request with its Extra fields.
func (r CompactRequest) MarshalJSON() ([]byte, error) { return compactRequestJSON.Encode(&r) }
