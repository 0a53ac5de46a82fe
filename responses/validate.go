package responses

import (
	"maps"
	"slices"
	"strconv"

	"github.com/go-playground/validator/v10"

	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/validation"
)

// checkRequestInput checks the input of req, which a request must have.
func checkRequestInput(req *Request) error { return checkInput(req.Input, true) }

// validate checks req: its fields ([checkFields]), its input's forms and
// items, and tool_choice against tools; then, when endpoint.WithValidator
// gave one, the validator's own rules. It returns the first failure as a
// 400 naming the field. Every rule lives here, in plain Go: the request
// types carry no validate tags.
func validate(v *validator.Validate, req *Request) error {
	return validation.Request(v, req, checkFields, checkConversation, checkRequestInput, checkToolChoice)
}

// validateCompact checks a compact request: its model, its input (which
// may be absent when previous_response_id is set), then the rules of a
// validator given with endpoint.WithValidator.
func validateCompact(v *validator.Validate, req *CompactRequest) error {
	if req.Model == "" {
		return validation.Required("model")
	}
	if req.Input.IsZero() && req.PreviousResponseID == "" {
		return apierrors.InvalidRequest("input", "input or previous_response_id is required")
	}
	if !req.Input.IsZero() {
		if err := checkInput(req.Input, false); err != nil {
			return err
		}
	}
	return validation.Struct(v, req)
}

// checkConversation checks that a conversation names one, and that
// previous_response_id is not set with it: a 400 with OpenAI's message
// and a null param, neither member being wrong alone.
func checkConversation(req *Request) error {
	switch c := req.Conversation; {
	case c == nil:
		return nil
	case c.ID == "":
		return apierrors.InvalidRequest("conversation", "conversation must name a conversation: its id, or {\"id\": …}")
	case req.PreviousResponseID != "":
		return apierrors.InvalidRequest("", "Mutually exclusive parameters: Ensure you are only providing one of: 'previous_response_id' or 'conversation'.")
	}
	return nil
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
	return CheckItems("input", in.Items)
}

// CheckItems checks items as the items of a request's input are checked
// (see the package documentation): a message has a role (user,
// assistant, system, developer) and content, a function_call call_id and
// name, and so on. It returns the first failure, a 400
// invalid_request_error whose param is the field's path under param
// ("input[2].role"). Package conversations checks the items it is given
// with it.
func CheckItems(param string, items []Item) error {
	for i := range items {
		if err := checkItem(param, i, &items[i]); err != nil {
			return err
		}
	}
	return nil
}

// checkItem checks item i of the array at param. Paths are built only
// for errors.
func checkItem(param string, i int, it *Item) error {
	fail := func(field, msg string) error {
		path := param + "[" + strconv.Itoa(i) + "]" + field
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
			return fail(".role", " must be one of user, assistant, system, developer, got "+apierrors.Quote(it.Role))
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
	if tc := req.ToolChoice; tc.Forced() {
		return validation.ForcedToolChoice(tc.Function, req.Tools, functionName, "tool_choice.name")
	}
	return nil
}

// functionName is the name of t if it is a function tool, or "".
func functionName(t *Tool) string {
	if t.Type != ToolFunction {
		return ""
	}
	return t.Name
}

// formats are the types a text format may have.
var formats = [...]string{FormatText, FormatJSONObject, FormatJSONSchema}

// checkFields checks the fields of req but its input and tool choice, in
// the order of the fields, and returns the first failure. Its messages
// are those of package internal/validation: "model is required",
// "temperature must be at most 2, got 2.5", …. Of several metadata pairs
// at fault, the first by key is named.
func checkFields(req *Request) error {
	if req.Model == "" {
		return validation.Required("model")
	}
	if err := validation.First(
		validation.Between("temperature", req.Temperature, 0, 2),
		validation.Between("top_p", req.TopP, 0, 1),
		validation.Between("max_output_tokens", req.MaxOutputTokens, 1, endpoint.MaxOutputTokens),
	); err != nil {
		return err
	}
	for i := range req.Tools {
		t, at := &req.Tools[i], "tools["+strconv.Itoa(i)+"]"
		switch {
		case t.Type == "":
			return validation.Required(at + ".type")
		case t.Type == ToolFunction && t.Name == "":
			return validation.Required(at + ".name")
		}
	}
	if t := req.Text; t != nil && t.Format != nil {
		f := t.Format
		if err := validation.OneOf("text.format.type", f.Type, formats[:]...); err != nil {
			return err
		}
		if f.Type == FormatJSONSchema && f.Name == "" {
			return validation.Required("text.format.name")
		}
	}
	if err := validation.MaxItems("metadata", len(req.Metadata), MaxMetadataPairs); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(req.Metadata)) {
		at := "metadata[" + k + "]"
		if err := validation.First(
			validation.MaxChars(at, k, MaxMetadataKey),
			validation.MaxChars(at, req.Metadata[k], MaxMetadataValue),
		); err != nil {
			return err
		}
	}
	return nil
}
