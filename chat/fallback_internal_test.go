package chat

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRequestFallbackCounts decodes the benchmarks' request bodies,
// which decodeRequestFast must take, and bodies that it hands to
// encoding/json, which must count in requestFallback. It is not
// parallel: the counter is the package's, and parallel tests wait for
// the sequential ones to end.
func TestRequestFallbackCounts(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		fallback bool
	}{
		{"JSON", benchBodies["JSON"], false},
		{"Stream64", benchBodies["Stream64"], false},
		{"Conversation", benchBodies["Conversation"], false},
		{"a key that only folds to a field", `{"Model":"m","messages":[{"role":"user","content":"hi"}]}`, true},
		{"a duplicate member", `{"model":"m","model":"n","messages":[{"role":"user","content":"hi"}]}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := requestFallback.Count()
			var r Request
			_ = decodeRequest([]byte(tc.body), &r) // the duplicate is refused
			want := before
			if tc.fallback {
				want++
			}
			require.Equal(t, want, requestFallback.Count())
		})
	}
}
