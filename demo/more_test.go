package demo_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/demo"
)

// TestMoreOnlyWhenUnpaced checks that the deltas of an unpaced demo stream
// say More (all of them are at hand, so the handler flushes once), and
// those of a paced stream do not (each chunk is flushed when it is due).
func TestMoreOnlyWhenUnpaced(t *testing.T) {
	t.Parallel()
	var creq completions.Request
	require.NoError(t, json.Unmarshal([]byte(`{"model":"m","prompt":"Hi","n":2,"max_tokens":6}`), &creq))
	cp := &completions.Params{Request: &creq, Model: chatModel}
	chatBody := `{"model":"m","max_tokens":6,"messages":[{"role":"user","content":"Hi"}]}`
	respBody := `{"model":"m","max_output_tokens":6,"input":"Hi"}`
	for _, tc := range []struct {
		name string
		opts []demo.TextOption
		want bool
	}{
		{"unpaced", nil, true},
		{"paced", []demo.TextOption{demo.WithChunkDelay(time.Nanosecond)}, false},
	} {
		b := demo.NewTextBackend(append([]demo.TextOption{demo.WithTokensPerChunk(2)}, tc.opts...)...)
		var n int
		for d, err := range b.Chat().Stream(t.Context(), chatParams(t, chatBody, chatModel)) {
			require.NoError(t, err)
			require.Equal(t, tc.want, d.More, "%s chat delta %+v", tc.name, d)
			n++
		}
		for d, err := range b.Completions().Stream(t.Context(), cp) {
			require.NoError(t, err)
			require.Equal(t, tc.want, d.More, "%s completions delta %+v", tc.name, d)
			n++
		}
		for d, err := range b.Responses().Stream(t.Context(), responsesParams(t, respBody)) {
			require.NoError(t, err)
			require.Equal(t, tc.want, d.More, "%s responses delta %+v", tc.name, d)
			n++
		}
		require.Greater(t, n, 9, "%s: several deltas of each", tc.name)
	}
}
