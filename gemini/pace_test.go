package gemini_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/gemini"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
)

// TestStreamKeepsTheBackendsPace checks that the handler gives the chat
// backend its flush (chat.Params.SetFlush): a stream that calls Flush
// before each read of its source is flushed then and at its end, and one
// that never calls it after every delta.
func TestStreamKeepsTheBackendsPace(t *testing.T) {
	t.Parallel()
	reads := [][]chat.Delta{{{Content: "a"}, {Content: "b"}}, {{Content: "c"}}}
	for _, tc := range []struct {
		name  string
		flush func(*chat.Params)
		want  []int // the events the client had at each flush
	}{
		{"a stream that never calls Flush is flushed after every delta", nil, []int{1, 2, 3, 4}},
		{"a stream that calls Flush is flushed then and at its end", (*chat.Params).Flush, []int{2, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := endpointtest.FuncStreamingBackend[chat.Params, chat.Result, chat.Delta]{StreamFunc: endpointtest.Reads(tc.flush, reads...)}
			rec := &endpointtest.FlushRecorder{ResponseRecorder: httptest.NewRecorder()}
			r := httptest.NewRequest(http.MethodPost, "/v1beta/models/demo-chat:streamGenerateContent?alt=sse", strings.NewReader(`{"contents":[{"parts":[{"text":"hi"}]}]}`))
			r.Header.Set("Content-Type", "application/json")
			gemini.NewHandler(newCatalog(), b).ServeHTTP(rec, r)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			var got []int
			for _, f := range rec.Flushed {
				got = append(got, strings.Count(f, "data: "))
			}
			require.Equal(t, tc.want, got)
			require.Equal(t, rec.Body.String(), rec.Flushed[len(rec.Flushed)-1], "nothing after the last flush")
		})
	}
}
