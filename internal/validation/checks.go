package validation

import (
	"slices"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// The checks below are the rules of the endpoint packages' requests,
// written in plain Go; their failures are worded as [Message] words a
// validator's, so that every endpoint says the same thing the same way.

// Required is the failure of a required field at path.
func Required(path string) error {
	return apierrors.InvalidRequest(path, path+" is required")
}

// OneOf checks that got, the field at path, is one of allowed (and is
// there at all).
func OneOf(path, got string, allowed ...string) error {
	switch {
	case got == "":
		return Required(path)
	case slices.Contains(allowed, got):
		return nil
	}
	return apierrors.InvalidRequestf(path, "%s must be one of %s, got %s", path, strings.Join(allowed, ", "), apierrors.Quote(got))
}

// Number is a number that a request bounds.
type Number interface{ ~int | ~float64 }

// Min checks that v, the optional field at path, is at least lo.
func Min[N Number](path string, v *N, lo N) error {
	if v != nil && !(*v >= lo) {
		return apierrors.InvalidRequestf(path, "%s must be at least %v, got %v", path, lo, *v)
	}
	return nil
}

// Between checks that v, the optional field at path, is from lo to hi.
func Between[N Number](path string, v *N, lo, hi N) error {
	if err := Min(path, v, lo); err != nil {
		return err
	}
	if v != nil && !(*v <= hi) {
		return apierrors.InvalidRequestf(path, "%s must be at most %v, got %v", path, hi, *v)
	}
	return nil
}

// MaxItems checks that the list at path holds at most max items.
func MaxItems(path string, n, max int) error {
	if n > max {
		return apierrors.InvalidRequestf(path, "%s must hold at most %d items", path, max)
	}
	return nil
}

// MaxChars checks that the text at path holds at most max characters
// (Unicode code points).
func MaxChars(path, s string, max int) error {
	if len(s) > max && len([]rune(s)) > max {
		return apierrors.InvalidRequestf(path, "%s must hold at most %d characters", path, max)
	}
	return nil
}

// First returns the first of errs that is not nil.
func First(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// ForcedToolChoice checks a forced tool choice (one that obliges the
// model to call a tool) against the tools of its request: there must be
// tools, and the function that it names, if any, must be one of them
// (name returns the function name of a tool, or "" for a tool of another
// kind). param is the JSON path of the choice's function name.
func ForcedToolChoice[T any](function string, tools []T, name func(*T) string, param string) error {
	if len(tools) == 0 {
		return apierrors.InvalidRequest("tool_choice", "tool_choice requires tools: it obliges the model to call one, and none are given")
	}
	if function == "" {
		return nil
	}
	for i := range tools {
		if name(&tools[i]) == function {
			return nil
		}
	}
	return apierrors.InvalidRequestf(param, "%s %s names no function in tools", param, apierrors.Quote(function))
}
