package responses

import (
	"strconv"
	"unicode/utf8"

	"github.com/go-playground/validator/v10"

	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/validation"
)

// validate checks req: first the validate tags of the types, then the
// rules the tags cannot express (the input's forms and items, tool_choice
// against tools). It returns the first failure as a 400 naming the field.
//
// The validator reflects over every field and allocates, so unless custom
// says it has rules of its own, a request that [tagsHold] is not shown to
// it. The validator stays the definition of the rules and the source of
// every error message; a fuzz test checks that tagsHold agrees with it.
func validate(v *validator.Validate, custom bool, req *Request) error {
	if custom || !tagsHold(req) {
		if err := validation.Struct(v, req); err != nil {
			return err
		}
	}
	if err := checkInput(req.Input, true); err != nil {
		return err
	}
	return checkToolChoice(req)
}

// validateCompact checks a compact request: its tags, its input (which
// may be absent when previous_response_id is set).
func validateCompact(v *validator.Validate, req *CompactRequest) error {
	if err := validation.Struct(v, req); err != nil {
		return err
	}
	if req.Input.IsZero() && req.PreviousResponseID == "" {
		return apierrors.InvalidRequest("input", "input or previous_response_id is required")
	}
	if req.Input.IsZero() {
		return nil
	}
	return checkInput(req.Input, false)
}

// checkInput checks the form of the input and each of its items.
func checkInput(in Input, required bool) error {
	switch {
	case in.invalid != "":
		return apierrors.InvalidRequestf("input", "input must be a string or an array of items, got %s", in.invalid)
	case in.IsZero():
		if required {
			return apierrors.InvalidRequest("input", "input is required")
		}
		return nil
	case in.Items != nil && len(in.Items) == 0:
		return apierrors.InvalidRequest("input", "input must hold at least 1 items")
	}
	for i := range in.Items {
		if err := checkItem(i, &in.Items[i]); err != nil {
			return err
		}
	}
	return nil
}

// checkItem checks input item i. Paths are built only for errors.
func checkItem(i int, it *Item) error {
	fail := func(field, msg string) error {
		path := "input[" + strconv.Itoa(i) + "]" + field
		return apierrors.InvalidRequest(path, path+msg)
	}
	switch it.Kind() {
	case "":
		return fail(".type", " is required")
	case ItemMessage:
		switch it.Role {
		case RoleUser, RoleAssistant, RoleSystem, RoleDeveloper:
		case "":
			return fail(".role", " is required")
		default:
			return fail(".role", " must be one of user, assistant, system, developer, got "+strconv.Quote(it.Role))
		}
		return checkContent(&it.Content, ".content", fail)
	case ItemFunctionCall:
		switch {
		case it.CallID == "":
			return fail(".call_id", " is required")
		case it.Name == "":
			return fail(".name", " is required")
		}
	case ItemFunctionCallOutput:
		switch {
		case it.CallID == "":
			return fail(".call_id", " is required")
		case it.Output == nil || it.Output.IsZero():
			return fail(".output", " is required")
		}
		return checkContent(it.Output, ".output", fail)
	case ItemCompaction:
		if it.EncryptedContent == "" {
			return fail(".encrypted_content", " is required")
		}
	}
	return nil
}

// checkContent checks the content (or output) at field of an item.
func checkContent(c *Content, field string, fail func(field, msg string) error) error {
	switch {
	case c.invalid != "":
		return fail(field, " must be a string or an array of content parts, got "+c.invalid)
	case c.IsZero():
		return fail(field, " is required")
	case c.Parts != nil && len(c.Parts) == 0:
		return fail(field, " must hold at least 1 items")
	}
	for j := range c.Parts {
		p := &c.Parts[j]
		at := field + "[" + strconv.Itoa(j) + "]"
		switch p.Type {
		case "":
			return fail(at+".type", " is required")
		case PartInputImage:
			switch {
			case p.ImageURL == "" && p.FileID == "":
				return fail(at+".image_url", " is required (or file_id)")
			case p.ImageURL != "" && !endpoint.ValidImageURL(p.ImageURL):
				return fail(at+".image_url", " must be an http(s) URL or a data URI holding a base64 image (data:image/png;base64,…)")
			}
		}
	}
	return nil
}

// checkToolChoice checks that a forced tool choice has a tool to call.
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
	for i := range req.Tools {
		if t := &req.Tools[i]; t.Type == ToolFunction && t.Name == tc.Function {
			return nil
		}
	}
	return apierrors.InvalidRequestf("tool_choice.name", "tool_choice.name %q names no function in tools", tc.Function)
}

// tagsHold reports whether req satisfies the validate tags of Request and
// the types it holds, without reflection. Keep it in step with the tags.
func tagsHold(req *Request) bool {
	switch {
	case req.Model == "",
		req.Temperature != nil && !(*req.Temperature >= 0 && *req.Temperature <= 2),
		req.TopP != nil && !(*req.TopP >= 0 && *req.TopP <= 1),
		req.MaxOutputTokens != nil && *req.MaxOutputTokens < 1,
		len(req.Metadata) > MaxMetadataPairs:
		return false
	}
	for i := range req.Tools {
		if t := &req.Tools[i]; t.Type == "" || (t.Type == ToolFunction && t.Name == "") {
			return false
		}
	}
	if t := req.Text; t != nil && t.Format != nil {
		switch f := t.Format; f.Type {
		case FormatText, FormatJSONObject:
		case FormatJSONSchema:
			if f.Name == "" {
				return false
			}
		default:
			return false
		}
	}
	for k, v := range req.Metadata {
		// The validator counts characters (runes), not bytes.
		if (len(k) > MaxMetadataKey && utf8.RuneCountInString(k) > MaxMetadataKey) ||
			(len(v) > MaxMetadataValue && utf8.RuneCountInString(v) > MaxMetadataValue) {
			return false
		}
	}
	return true
}
