// Package validation wraps go-playground/validator for the endpoint
// handlers: a validator that names fields by their JSON names, and the
// translation of its errors into one clear 400 invalid_request_error whose
// param is the JSON path of the first failing field ("messages[0].role").
package validation

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/go-playground/validator/v10"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// New returns a validator that reports fields by their JSON names and
// requires nested structs to be valid. Each handler keeps its own (no
// package-level state); it is safe for concurrent use once configured.
func New() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		if name == "" {
			return f.Name
		}
		return name
	})
	return v
}

// Request checks req with each of checks, in order, then with v
// (Struct), and returns the first failure: how the handlers validate a
// request, their own rules in plain Go first, then a validator's given
// with endpoint.WithValidator.
func Request[T any](v *validator.Validate, req *T, checks ...func(*T) error) error {
	for _, check := range checks {
		if err := check(req); err != nil {
			return err
		}
	}
	return Struct(v, req)
}

// Struct validates s with v. A validation failure becomes an
// *apierrors.Error naming the first failing field; any other error is
// returned as it is. A nil v (no validator given) accepts everything.
func Struct(v *validator.Validate, s any) error {
	if v == nil {
		return nil
	}
	err := v.Struct(s)
	if err == nil {
		return nil
	}
	var verrs validator.ValidationErrors
	if !errors.As(err, &verrs) || len(verrs) == 0 {
		return err
	}
	return FieldError(verrs[0])
}

// FieldError translates one validator failure.
func FieldError(fe validator.FieldError) *apierrors.Error {
	path := Path(fe.Namespace())
	return apierrors.InvalidRequest(path, Message(path, fe)).WithCause(fe)
}

// Path turns a validator namespace ("ChatRequest.messages[0].role") into a
// JSON path ("messages[0].role") by dropping the root type's name.
func Path(namespace string) string {
	if _, rest, ok := strings.Cut(namespace, "."); ok {
		return rest
	}
	return namespace
}

// Message says in words what the tag of fe demands of the field at path.
func Message(path string, fe validator.FieldError) string {
	p := fe.Param()
	switch fe.Tag() {
	case "required", "required_without", "required_if", "required_unless":
		return path + " is required"
	case "oneof":
		return fmt.Sprintf("%s must be one of %s, got %s", path, strings.Join(strings.Fields(p), ", "), value(fe))
	case "gte", "min":
		if isLength(fe) {
			return fmt.Sprintf("%s must hold at least %s %s", path, p, unit(fe))
		}
		return fmt.Sprintf("%s must be at least %s, got %s", path, p, value(fe))
	case "lte", "max":
		if isLength(fe) {
			return fmt.Sprintf("%s must hold at most %s %s", path, p, unit(fe))
		}
		return fmt.Sprintf("%s must be at most %s, got %s", path, p, value(fe))
	case "gt":
		return fmt.Sprintf("%s must be greater than %s, got %s", path, p, value(fe))
	case "lt":
		return fmt.Sprintf("%s must be less than %s, got %s", path, p, value(fe))
	case "len":
		return fmt.Sprintf("%s must hold exactly %s %s", path, p, unit(fe))
	case "url", "http_url":
		return path + " must be a URL"
	case "excluded_with", "excluded_unless":
		return fmt.Sprintf("%s must not be set together with %s", path, p)
	default:
		return fmt.Sprintf("%s is invalid (%s)", path, fe.Tag())
	}
}

func isLength(fe validator.FieldError) bool {
	switch fe.Kind() {
	case reflect.String, reflect.Slice, reflect.Array, reflect.Map:
		return true
	}
	return false
}

func unit(fe validator.FieldError) string {
	if fe.Kind() == reflect.String {
		return "characters"
	}
	return "items"
}

func value(fe validator.FieldError) string {
	v := fe.Value()
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return "null"
		}
		rv = rv.Elem()
	}
	if rv.Kind() == reflect.String {
		return apierrors.Quote(rv.String())
	}
	return apierrors.Echo(fmt.Sprint(rv.Interface()))
}
