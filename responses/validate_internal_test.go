package responses

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/validation"
)

// FuzzTagsHoldAgreesWithTheValidator checks that the reflection-free
// pre-check accepts exactly the requests that the validator accepts.
func FuzzTagsHoldAgreesWithTheValidator(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "*.request.json"))
	require.NoError(f, err)
	for _, path := range seeds {
		b, err := os.ReadFile(path)
		require.NoError(f, err)
		f.Add(b)
	}
	for _, s := range []string{
		`{"model":"","input":"x"}`,
		`{"model":"m","input":"x","temperature":2.5,"top_p":-1,"max_output_tokens":0}`,
		`{"model":"m","input":"x","temperature":2,"top_p":1,"max_output_tokens":1}`,
		`{"model":"m","input":"x","tools":[{"type":"function"}]}`,
		`{"model":"m","input":"x","tools":[{"name":"f"}]}`,
		`{"model":"m","input":"x","tools":[{"type":"web_search"}]}`,
		`{"model":"m","input":"x","text":{"format":{"type":"yaml"}}}`,
		`{"model":"m","input":"x","text":{"format":{"type":"json_schema"}}}`,
		`{"model":"m","input":"x","text":{"format":{"type":"json_object","name":""}}}`,
		`{"model":"m","input":"x","text":{"verbosity":"low"}}`,
		`{"model":"m","input":"x","metadata":{"a":"1","b":"1","c":"1","d":"1","e":"1","f":"1","g":"1","h":"1","i":"1","j":"1","k":"1","l":"1","m":"1","n":"1","o":"1","p":"1","q":"1"}}`,
		`{"model":"m","input":"x","metadata":{"` + strings.Repeat("é", 64) + `":"` + strings.Repeat("ü", 512) + `"}}`,
		`{"model":"m","input":"x","metadata":{"` + strings.Repeat("é", 65) + `":"v"}}`,
		`{"model":"m","input":"x","metadata":{"k":"` + strings.Repeat("a", 513) + `"}}`,
	} {
		f.Add([]byte(s))
	}
	v := validation.New()
	f.Fuzz(func(t *testing.T, body []byte) {
		var req Request
		if json.Unmarshal(body, &req) != nil {
			return
		}
		err := validation.Struct(v, &req)
		require.Equal(t, err == nil, tagsHold(&req), "validator: %v", err)
	})
}
