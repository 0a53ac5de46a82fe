package chat

import (
	"strconv"

	"github.com/go-playground/validator/v10"

	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/validation"
)

// validate checks req: first the validate tags of the types, then the
// rules the tags cannot express (content forms and parts, tool_choice
// against tools). It returns the first failure as a 400 naming the field.
//
// The validator reflects over every field and allocates for most, which
// is a good part of the cost of a request; so unless custom says the
// validator has rules of its own, a request that [tagsHold] is not shown
// to it. The validator stays the definition of the rules and the source
// of every error message; a fuzz test checks that tagsHold agrees with it.
func validate(v *validator.Validate, custom bool, req *Request) error {
	if custom || !tagsHold(req) {
		if err := validation.Struct(v, req); err != nil {
			return err
		}
	}
	for i := range req.Messages {
		if err := checkMessage(i, &req.Messages[i]); err != nil {
			return err
		}
	}
	return checkToolChoice(req)
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

func checkToolChoice(req *Request) error {
	tc := req.ToolChoice
	if !tc.Forced() {
		return nil
	}
	if len(req.Tools) == 0 {
		return apierrors.InvalidRequest("tool_choice", "tool_choice requires tools: it obliges the model to call one, and none are given")
	}
	if tc.Function == "" {
		return nil
	}
	for _, t := range req.Tools {
		if t.Function.Name == tc.Function {
			return nil
		}
	}
	return apierrors.InvalidRequestf("tool_choice.function.name", "tool_choice.function.name %q names no function in tools", tc.Function)
}

// tagsHold reports whether req satisfies the validate tags of Request and
// the types it holds, without reflection. Keep it in step with the tags.
func tagsHold(req *Request) bool {
	switch {
	case req.Model == "" || len(req.Messages) == 0,
		req.Temperature != nil && !(*req.Temperature >= 0 && *req.Temperature <= 2),
		req.TopP != nil && !(*req.TopP >= 0 && *req.TopP <= 1),
		req.N != nil && (*req.N < 1 || *req.N > MaxChoices),
		req.MaxTokens != nil && *req.MaxTokens < 1,
		req.MaxCompletionTokens != nil && *req.MaxCompletionTokens < 1,
		len(req.Stop) > MaxStop:
		return false
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		switch m.Role {
		case RoleSystem, RoleDeveloper, RoleUser, RoleAssistant:
		case RoleTool:
			if m.ToolCallID == "" {
				return false
			}
		default:
			return false
		}
		for j := range m.ToolCalls {
			if tc := &m.ToolCalls[j]; tc.ID == "" || tc.Type != "function" || tc.Function.Name == "" {
				return false
			}
		}
	}
	for i := range req.Tools {
		if t := &req.Tools[i]; t.Type != "function" || t.Function == nil || t.Function.Name == "" {
			return false
		}
	}
	if f := req.ResponseFormat; f != nil {
		switch f.Type {
		case FormatText, FormatJSONObject:
			if f.JSONSchema != nil && f.JSONSchema.Name == "" {
				return false
			}
		case FormatJSONSchema:
			if f.JSONSchema == nil || f.JSONSchema.Name == "" {
				return false
			}
		default:
			return false
		}
	}
	return true
}
