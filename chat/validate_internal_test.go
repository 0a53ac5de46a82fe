package chat

import (
	"encoding/json"
	"os"
	"path/filepath"
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
		`{"model":"m","messages":[]}`,
		`{"model":"","messages":[{"role":"user","content":"x"}]}`,
		`{"model":"m","messages":[{"role":"tool","content":"x"}]}`,
		`{"model":"m","messages":[{"role":"robot","content":"x"}]}`,
		`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{}}]}]}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":2.5,"top_p":-1,"n":0,"max_tokens":0}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"n":129,"max_completion_tokens":0,"stop":["a","b","c","d","e"]}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function"}]}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"other","function":{"name":"f"}}]}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema"}}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"text","json_schema":{}}}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"yaml"}}`,
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
