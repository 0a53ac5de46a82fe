package gemini

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
)

// requestType is the type a request body decodes into, for
// httpjson.CheckObject.
var requestType = reflect.TypeFor[Request]()

// DecodeRequest decodes a request body. Google's API takes the members of
// its messages in lowerCamelCase and in snake_case alike (its REST
// examples send system_instruction, inline_data, mime_type …), so a body
// with snake_case member names is decoded as if they were in camelCase;
// the free-form objects (a function call's args, a function response, a
// schema) are kept as they are. A member given in both spellings is a
// member given twice, refused as httpjson.CheckObject refuses one given
// twice in the same spelling. Errors are 400s that say what is wrong.
func DecodeRequest(body []byte) (*Request, error) {
	req := new(Request)
	if hasSnakeKey(body) {
		var v any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&v); err == nil {
			// Members given twice, as sent or in both spellings, are
			// refused before the renaming merges them.
			if err := httpjson.CheckObject(body, requestType); err != nil {
				return nil, err
			}
			if path := bothSpellings(v, false, ""); path != "" {
				return nil, httpjson.Duplicate(path)
			}
			if b, err := json.Marshal(camelKeys(v, false)); err == nil {
				body = b
			}
		}
	}
	if err := httpjson.Unmarshal(body, req); err != nil {
		return nil, err
	}
	return req, nil
}

// snakeKeys are the snake_case member names of the request's messages.
var snakeKeys = []string{
	`"system_instruction"`, `"generation_config"`, `"inline_data"`, `"mime_type"`, `"file_data"`, `"file_uri"`,
	`"function_call"`, `"function_response"`, `"max_output_tokens"`, `"top_p"`, `"top_k"`, `"stop_sequences"`,
	`"candidate_count"`, `"response_mime_type"`, `"response_schema"`, `"response_json_schema"`, `"tool_config"`,
	`"function_declarations"`, `"function_calling_config"`, `"allowed_function_names"`, `"thinking_config"`,
	`"include_thoughts"`, `"thinking_budget"`, `"presence_penalty"`, `"frequency_penalty"`, `"thought_signature"`,
	`"parameters_json_schema"`,
}

// hasSnakeKey reports whether body may hold a snake_case member name.
func hasSnakeKey(body []byte) bool {
	if bytes.IndexByte(body, '_') < 0 {
		return false
	}
	for _, k := range snakeKeys {
		if bytes.Contains(body, []byte(k)) {
			return true
		}
	}
	return false
}

// freeForm are the members whose values are the client's own JSON.
var freeForm = map[string]bool{
	"args": true, "response": true, "parameters": true, "parametersJsonSchema": true,
	"responseSchema": true, "responseJsonSchema": true,
}

// camelKeys renames the snake_case members of v, outside free-form values.
func camelKeys(v any, free bool) any {
	switch t := v.(type) {
	case map[string]any:
		if free {
			return t
		}
		out := make(map[string]any, len(t))
		for k, x := range t {
			ck := camel(k)
			if _, dup := t[ck]; dup && ck != k {
				ck = k // both spellings: keep each; the camelCase one decodes
			}
			out[ck] = camelKeys(x, freeForm[ck])
		}
		return out
	case []any:
		if free {
			return t
		}
		for i := range t {
			t[i] = camelKeys(t[i], false)
		}
	}
	return v
}

// bothSpellings returns the path (below path) of the first member of v,
// outside free-form values, that is given in snake_case and in
// lowerCamelCase alike, or "".
func bothSpellings(v any, free bool, path string) string {
	if free {
		return ""
	}
	switch t := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			ck := camel(k)
			at := ck
			if path != "" {
				at = path + "." + ck
			}
			if _, dup := t[ck]; dup && ck != k {
				return at
			}
			if p := bothSpellings(t[k], freeForm[ck], at); p != "" {
				return p
			}
		}
	case []any:
		for i, x := range t {
			if p := bothSpellings(x, false, path+"["+strconv.Itoa(i)+"]"); p != "" {
				return p
			}
		}
	}
	return ""
}

// camel is s in lowerCamelCase: "mime_type" is "mimeType".
func camel(s string) string {
	if !strings.Contains(s, "_") {
		return s
	}
	var b strings.Builder
	up := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' && i > 0:
			up = true
		case up && c >= 'a' && c <= 'z':
			b.WriteByte(c - 'a' + 'A')
			up = false
		default:
			b.WriteByte(c)
			up = false
		}
	}
	return b.String()
}

// errMethod is the error for a path that names no method this handler
// serves.
func errMethod(path string) error {
	return apierrors.NotFound("No method at " + path + "; this gateway serves :" + MethodGenerate + " and :" + MethodStream + ".")
}
