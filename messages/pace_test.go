package messages_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/messages"
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
		want  []int // the text deltas the client had at each flush
	}{
		{"a stream that never calls Flush is flushed after every delta", nil, []int{1, 2, 3, 3}},
		{"a stream that calls Flush is flushed then and at its end", (*chat.Params).Flush, []int{2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := endpointtest.FuncStreamingBackend[chat.Params, chat.Result, chat.Delta]{StreamFunc: endpointtest.Reads(tc.flush, reads...)}
			rec := &endpointtest.FlushRecorder{ResponseRecorder: httptest.NewRecorder()}
			r := httptest.NewRequest(http.MethodPost, messages.Pattern[len("POST "):], strings.NewReader(helloStream))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Anthropic-Version", "2023-06-01")
			newHandlerWith(b).ServeHTTP(rec, r)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			var got []int
			for _, f := range rec.Flushed {
				got = append(got, strings.Count(f, `"type":"text_delta"`))
			}
			require.Equal(t, tc.want, got)
			require.Equal(t, rec.Body.String(), rec.Flushed[len(rec.Flushed)-1], "nothing after the last flush")
		})
	}
}
