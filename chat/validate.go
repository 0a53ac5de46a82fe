package chat

import (
	"strconv"

	"github.com/go-playground/validator/v10"

	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/validation"
)

// validate checks req: its fields ([checkFields]), the rules of the
// content forms and parts, and tool_choice against tools; then, when
// endpoint.WithValidator gave one, the validator's own rules. It returns
// the first failure as a 400 naming the field. Every rule lives here, in
// plain Go: no struct tags, no reflection on the hot path.
func validate(v *validator.Validate, req *Request) error {
	return validation.Request(v, req, checkFields, checkMessages, checkToolChoice)
}

// checkMessages checks the content of each message (checkMessage).
func checkMessages(req *Request) error {
	for i := range req.Messages {
		if err := checkMessage(i, &req.Messages[i]); err != nil {
			return err
		}
	}
	return nil
}

// checkMessage checks the content of message i. Paths are built only for
// errors: this runs for every message of every request.
func checkMessage(i int, m *Message) error {
	c := &m.Content
	path := func() string { return "messages[" + strconv.Itoa(i) + "].content" }
	switch {
	case c.invalid != "":
		return apierrors.InvalidRequestf(path(), "%s must be a string or an array of content parts, got %s", path(), c.invalid)
	case c.IsNull():
		if m.Role == RoleAssistant && len(m.ToolCalls) > 0 {
			return nil
		}
		return apierrors.InvalidRequest(path(), path()+" is required")
	case c.Parts != nil && len(c.Parts) == 0:
		return apierrors.InvalidRequest(path(), path()+" must hold at least 1 items")
	}
	for j := range c.Parts {
		if field, msg := checkPart(&c.Parts[j]); field != "" {
			field = path() + "[" + strconv.Itoa(j) + "]" + field
			return apierrors.InvalidRequest(field, field+msg)
		}
	}
	return nil
}

// checkPart returns the path of the field at fault within the part, and
// what is wrong with it, or "".
func checkPart(p *ContentPart) (field, msg string) {
	switch p.Type {
	case "":
		return ".type", " is required"
	case PartImageURL:
		if p.ImageURL == nil || p.ImageURL.URL == "" {
			return ".image_url.url", " is required"
		}
		if !endpoint.ValidImageURL(p.ImageURL.URL) {
			return ".image_url.url", " must be an http(s) URL or a data URI holding a base64 image (data:image/png;base64,…)"
		}
	}
	return "", ""
}

// checkToolChoice checks that a forced tool choice has a tool to call.
func checkToolChoice(req *Request) error {
	if tc := req.ToolChoice; tc.Forced() {
		return validation.ForcedToolChoice(tc.Function, req.Tools, func(t *Tool) string { return t.Function.Name }, "tool_choice.function.name")
	}
	return nil
}

// roles are the roles a message may have, in the order the error message
// lists them.
var roles = [...]string{RoleSystem, RoleDeveloper, RoleUser, RoleAssistant, RoleTool}

// formats are the types a response format may have.
var formats = [...]string{FormatText, FormatJSONObject, FormatJSONSchema}

// checkFields checks the fields of req and of what it holds, in the order
// of the fields, and returns the first failure. Its messages are those of
// package internal/validation (the wording of every endpoint package):
// "model is required", "temperature must be at most 2, got 2.5", ….
func checkFields(req *Request) error {
	switch {
	case req.Model == "":
		return validation.Required("model")
	case req.Messages == nil:
		return validation.Required("messages")
	case len(req.Messages) == 0:
		return apierrors.InvalidRequest("messages", "messages must hold at least 1 items")
	}
	for i := range req.Messages {
		if err := checkMessageFields(i, &req.Messages[i]); err != nil {
			return err
		}
	}
	if err := validation.First(
		validation.Between("temperature", req.Temperature, 0, 2),
		validation.Between("top_p", req.TopP, 0, 1),
		validation.Between("n", req.N, 1, MaxChoices),
		validation.Between("max_tokens", req.MaxTokens, 1, endpoint.MaxOutputTokens),
		validation.Between("max_completion_tokens", req.MaxCompletionTokens, 1, endpoint.MaxOutputTokens),
		validation.MaxItems("stop", len(req.Stop), MaxStop),
	); err != nil {
		return err
	}
	for i := range req.Tools {
		t, at := &req.Tools[i], "tools["+strconv.Itoa(i)+"]"
		if err := validation.OneOf(at+".type", t.Type, "function"); err != nil {
			return err
		}
		switch {
		case t.Function == nil:
			return validation.Required(at + ".function")
		case t.Function.Name == "":
			return validation.Required(at + ".function.name")
		}
	}
	if f := req.ResponseFormat; f != nil {
		if err := validation.OneOf("response_format.type", f.Type, formats[:]...); err != nil {
			return err
		}
		switch {
		case f.JSONSchema == nil && f.Type == FormatJSONSchema:
			return validation.Required("response_format.json_schema")
		case f.JSONSchema != nil && f.JSONSchema.Name == "":
			return validation.Required("response_format.json_schema.name")
		}
	}
	return nil
}

// checkMessageFields checks the fields of message i but its content
// (see checkMessage).
func checkMessageFields(i int, m *Message) error {
	at := "messages[" + strconv.Itoa(i) + "]"
	if err := validation.OneOf(at+".role", m.Role, roles[:]...); err != nil {
		return err
	}
	for j := range m.ToolCalls {
		tc, at := &m.ToolCalls[j], at+".tool_calls["+strconv.Itoa(j)+"]"
		if tc.ID == "" {
			return validation.Required(at + ".id")
		}
		if err := validation.OneOf(at+".type", tc.Type, "function"); err != nil {
			return err
		}
		if tc.Function.Name == "" {
			return validation.Required(at + ".function.name")
		}
	}
	if m.Role == RoleTool && m.ToolCallID == "" {
		return validation.Required(at + ".tool_call_id")
	}
	return nil
}
