package chat

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/go-playground/validator/v10"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/validation"
)

// validate checks req: first the validate tags of the types, then the
// rules the tags cannot express (content forms and parts, tool_choice
// against tools). It returns the first failure as a 400 naming the field.
func validate(v *validator.Validate, req *Request) error {
	if err := validation.Struct(v, req); err != nil {
		return err
	}
	for i := range req.Messages {
		if err := checkMessage(i, &req.Messages[i]); err != nil {
			return err
		}
	}
	return checkToolChoice(req)
}

func checkMessage(i int, m *Message) error {
	path := "messages[" + strconv.Itoa(i) + "].content"
	c := &m.Content
	switch {
	case c.invalid != "":
		return apierrors.InvalidRequestf(path, "%s must be a string or an array of content parts, got %s", path, c.invalid)
	case c.IsNull():
		if m.Role == RoleAssistant && len(m.ToolCalls) > 0 {
			return nil
		}
		return apierrors.InvalidRequest(path, path+" is required")
	case c.Parts != nil && len(c.Parts) == 0:
		return apierrors.InvalidRequest(path, path+" must hold at least 1 items")
	}
	for j := range c.Parts {
		if err := checkPart(path+"["+strconv.Itoa(j)+"]", &c.Parts[j]); err != nil {
			return err
		}
	}
	return nil
}

func checkPart(path string, p *ContentPart) error {
	switch p.Type {
	case "":
		return apierrors.InvalidRequest(path+".type", path+".type is required")
	case PartImageURL:
		field := path + ".image_url.url"
		if p.ImageURL == nil || p.ImageURL.URL == "" {
			return apierrors.InvalidRequest(field, field+" is required")
		}
		if !ValidImageURL(p.ImageURL.URL) {
			return apierrors.InvalidRequest(field, field+" must be an http(s) URL or a data URI holding a base64 image (data:image/png;base64,…)")
		}
	}
	return nil
}

// ValidImageURL reports whether u is an absolute http or https URL with a
// host, or a data URI of the form data:image/<type>;base64,<data> with
// some data. The data itself is not decoded.
func ValidImageURL(u string) bool {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		meta, data, ok := strings.Cut(rest, ",")
		return ok && data != "" && strings.HasPrefix(meta, "image/") && strings.HasSuffix(meta, ";base64")
	}
	pu, err := url.Parse(u)
	return err == nil && (pu.Scheme == "http" || pu.Scheme == "https") && pu.Host != ""
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
