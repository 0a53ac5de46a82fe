package completionstest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/completions"
)

func TestCheckStream(t *testing.T) {
	t.Parallel()
	const (
		text0 = `{"choices":[{"index":0,"text":"Hi","finish_reason":null}]}`
		stop0 = `{"choices":[{"index":0,"text":"","finish_reason":"stop"}]}`
		text1 = `{"choices":[{"index":1,"text":"Yo","finish_reason":null}]}`
		stop1 = `{"choices":[{"index":1,"text":"","finish_reason":"length"}]}`
		odd0  = `{"choices":[{"index":0,"text":"","finish_reason":"tool_calls"}]}`
		usage = `{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`
		bad   = `{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":4}}`
	)
	tests := []struct {
		name    string
		lines   []string
		n       int
		wantErr string
	}{
		{"a good stream", []string{text0, stop0, usage}, 1, ""},
		{"two interleaved choices", []string{text0, text1, stop1, stop0, usage}, 2, ""},
		{"a choice out of range", []string{text1, stop0, usage}, 1, "choice 1 of 1"},
		{"a chunk after the finish", []string{stop0, text0, usage}, 1, "after its finish reason"},
		{"an unfinished choice", []string{text0, usage}, 1, "never finished"},
		{"a finish reason of chat only", []string{text0, odd0, usage}, 1, `finishes with "tool_calls"`},
		{"no usage", []string{text0, stop0}, 1, "0 usage chunks"},
		{"usage before the end", []string{text0, usage, stop0}, 1, "not the final chunk"},
		{"a wrong total", []string{text0, stop0, bad}, 1, "total_tokens"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var cs []completions.Chunk
			for _, l := range tc.lines {
				var c completions.Chunk
				require.NoError(t, json.Unmarshal([]byte(l), &c))
				cs = append(cs, c)
			}
			err := checkStream(cs, tc.n)
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestCheckCompletion(t *testing.T) {
	t.Parallel()
	var res completions.Completion
	require.NoError(t, json.Unmarshal([]byte(`{"choices":[{"index":0,"text":"a","finish_reason":"stop"},{"index":1,"text":"b","finish_reason":"length"}],
		"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`), &res))
	require.NoError(t, checkCompletion(&res, 2))
	require.ErrorContains(t, checkCompletion(&res, 4), "2 choices, want 4")
	res.Choices[1].Index = 0
	require.ErrorContains(t, checkCompletion(&res, 2), "choice 1 has index 0")
	res.Choices[1].Index, res.Choices[0].FinishReason = 1, ""
	require.ErrorContains(t, checkCompletion(&res, 2), `finish reason ""`)
}
