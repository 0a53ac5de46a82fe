package served

import (
	"bytes"
	"encoding/json"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// InputItems reads the input of an embeddings or moderations request,
// sent as a string, an array or null: null (or nothing) gives nothing, a
// string gives one text, and an array its items, of which there must be
// one at least. Another value, or one that does not decode, is bad (with
// the decoding error as its cause).
func InputItems(b []byte, bad *apierrors.Error) (texts []string, items []json.RawMessage, err error) {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		return nil, nil, nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, nil, bad.WithCause(err)
		}
		return []string{s}, nil, nil
	case b[0] != '[':
		return nil, nil, bad
	}
	if err := json.Unmarshal(b, &items); err != nil {
		return nil, nil, bad.WithCause(err)
	}
	if len(items) == 0 {
		return nil, nil, apierrors.InvalidRequest("input", "input must not be an empty array")
	}
	return nil, items, nil
}

// InputTexts decodes items, an input array whose first item is a string:
// every item must be one.
func InputTexts(items []json.RawMessage) ([]string, error) {
	texts := make([]string, len(items))
	for i, it := range items {
		if err := json.Unmarshal(it, &texts[i]); err != nil {
			return nil, apierrors.InvalidRequestf("input", "input[%d] must be a string, like the first item", i).WithCause(err)
		}
	}
	return texts, nil
}
