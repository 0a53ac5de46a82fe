package relay

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
)

// TestFallbackCounts decodes the codec benchmarks' hot documents, which
// the hand decoders must take without a fallback, and documents that
// they hand to encoding/json, which must count. It is not parallel: the
// counters are the package's.
func TestFallbackCounts(t *testing.T) {
	toolReply := []byte(`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`)
	dupChunk := []byte(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"choices":[]}`)
	var kept []span
	tests := []struct {
		name     string
		decode   func(data []byte) error
		data     []byte
		counter  func() uint64
		fallback bool
	}{
		{"chat chunk", func(d []byte) error { var c chatChunk; _, err := c.decode(d, &kept); return err }, codecDocs.chunk, fallbacks.chatChunk.Count, false},
		{"chat chunk, duplicate member", func(d []byte) error { var c chatChunk; _, err := c.decode(d, &kept); return err }, dupChunk, fallbacks.chatChunk.Count, true},
		{"chat reply", func(d []byte) error { var r chatReply; _, err := r.decode(d, &kept); return err }, codecDocs.reply, fallbacks.chatReply.Count, false},
		{"chat reply, tool calls", func(d []byte) error { var r chatReply; _, err := r.decode(d, &kept); return err }, toolReply, fallbacks.chatReply.Count, true},
		{"completions reply", func(d []byte) error { var r completionsReply; _, err := r.decode(d, &kept); return err }, codecDocs.completions, fallbacks.completionsReply.Count, false},
		{"responses delta", func(d []byte) error { var e responsesEvent; return e.decode(d) }, codecDocs.responsesDelta, fallbacks.responsesEvent.Count, false},
		{"gemini event", func(d []byte) error {
			_, err := (&geminiReader{u: &Upstream{Name: "g"}, cands: make([]geminiCand, 1)}).event(d, func(chat.Delta) bool { return true })
			return err
		}, codecDocs.gemini, fallbacks.geminiEvent.Count, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.counter()
			require.NoError(t, tc.decode(tc.data))
			want := before
			if tc.fallback {
				want++
			}
			require.Equal(t, want, tc.counter())
		})
	}
}
