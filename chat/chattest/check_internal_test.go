package chattest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
)

// chunks decodes one chunk per line.
func chunks(t *testing.T, lines ...string) []chat.Chunk {
	t.Helper()
	var cs []chat.Chunk
	for _, l := range lines {
		var c chat.Chunk
		require.NoError(t, json.Unmarshal([]byte(l), &c), l)
		cs = append(cs, c)
	}
	return cs
}

const (
	role0   = `{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}`
	text0   = `{"choices":[{"index":0,"delta":{"content":" there"},"finish_reason":null}]}`
	stop0   = `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	role1   = `{"choices":[{"index":1,"delta":{"role":"assistant","content":"Yo"},"finish_reason":null}]}`
	stop1   = `{"choices":[{"index":1,"delta":{},"finish_reason":"stop"}]}`
	usage   = `{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`
	call0   = `{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]},"finish_reason":null}]}`
	args0   = `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":null}]}`
	calls0  = `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`
	skip2   = `{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":1,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]},"finish_reason":null}]}`
	noName0 = `{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"arguments":""}}]},"finish_reason":null}]}`
)

func TestCheckStream(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		lines     []string
		n         int
		wantUsage bool
		wantErr   string // a substring of the error; "" for none
	}{
		{"a good stream", []string{role0, text0, stop0, usage}, 1, true, ""},
		{"two interleaved choices", []string{role0, role1, text0, stop1, stop0}, 2, false, ""},
		{"a tool call", []string{call0, args0, calls0}, 1, false, ""},
		{"no role first", []string{text0, stop0}, 1, false, "has role"},
		{"a choice out of range", []string{role0, role1, stop0}, 1, false, "for choice 1 of a request with n=1"},
		{"a chunk after the finish", []string{role0, stop0, text0}, 1, false, "after its finish reason"},
		{"an unfinished choice", []string{role0, text0}, 1, false, "never finished"},
		{"a missing choice", []string{role0, stop0}, 2, false, "choice 1 never finished"},
		{"a skipped tool call index", []string{skip2, calls0}, 1, false, "not the next one"},
		{"a tool call without a name", []string{noName0, calls0}, 1, false, "lacks its id, name or type"},
		{"usage not asked for", []string{role0, stop0, usage}, 1, false, "1 usage chunks, want 0"},
		{"usage missing", []string{role0, stop0}, 1, true, "0 usage chunks, want 1"},
		{"usage before the end", []string{role0, usage, stop0}, 1, true, "not the final chunk"},
		{"an unknown finish reason", []string{role0, strings.Replace(stop0, `"stop"`, `"done"`, 1)}, 1, false, `finishes with "done"`},
		{"bad usage", []string{role0, stop0, strings.Replace(usage, `"total_tokens":5`, `"total_tokens":6`, 1)}, 1, true, "total_tokens"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := checkStream(chunks(t, tc.lines...), tc.n, tc.wantUsage)
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
	const (
		good     = `{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}`
		toolCall = `{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}`
		empty    = `{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"stop"}`
		noID     = `{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}`
		usage    = `"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}`
	)
	tests := []struct {
		name, choices string
		n             int
		wantErr       string
	}{
		{"one choice", good, 1, ""},
		{"a tool call", toolCall, 1, ""},
		{"too few choices", good, 2, "1 choices, want 2"},
		{"a wrong index", strings.Replace(good, `"index":0`, `"index":1`, 1), 1, "has index 1"},
		{"no content", empty, 1, "neither content nor tool calls"},
		{"a tool call without an id", noID, 1, "lacks its id"},
		{"an unknown finish reason", strings.Replace(good, `"stop"`, `"eos"`, 1), 1, `finish reason "eos"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var res chat.Completion
			require.NoError(t, json.Unmarshal([]byte(`{"choices":[`+tc.choices+`],`+usage+`}`), &res))
			err := checkCompletion(&res, tc.n)
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}
