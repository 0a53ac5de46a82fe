package fromchat_test

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/responses/fromchat"
	"github.com/gatewaykit/gatewaykit/sse"
)

// demoChat is the demo's chat backend, eight tokens a chunk to keep
// streams short.
func demoChat() chat.StreamingBackend {
	return demo.NewTextBackend(demo.WithTokensPerChunk(8)).Chat()
}

// newHandler is the responses handler over b, with the demo's models and
// the fixed clock.
func newHandler(b responses.Backend, opts ...responses.Option) http.Handler {
	return endpointtest.NewHandler(responses.NewHandler, endpointtest.Catalog(), b, opts...)
}

// post sends body to POST /v1/responses on h.
func post(t testing.TB, h http.Handler, body string) *httptest.ResponseRecorder {
	t.Helper()
	return endpointtest.Post(t, h, "/v1/responses", body)
}

// completeOnly is a chat backend that does not stream: the Complete of
// the one it holds, and nothing else.
type completeOnly struct{ b chat.Backend }

func (c completeOnly) Complete(ctx context.Context, p *chat.Params) (*chat.Result, error) {
	return c.b.Complete(ctx, p)
}

// recorder is a chat backend that keeps the JSON of every request it is
// asked, and answers as the backend it holds.
type recorder struct {
	b    chat.StreamingBackend
	mu   sync.Mutex
	reqs []string
}

func (r *recorder) keep(p *chat.Params) {
	b, err := json.Marshal(p.Request)
	if err != nil {
		panic(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, string(b))
}

func (r *recorder) Complete(ctx context.Context, p *chat.Params) (*chat.Result, error) {
	r.keep(p)
	return r.b.Complete(ctx, p)
}

func (r *recorder) Stream(ctx context.Context, p *chat.Params) iter.Seq2[chat.Delta, error] {
	r.keep(p)
	return r.b.Stream(ctx, p)
}

// last returns the last request asked, decoded into a generic value.
func (r *recorder) last(t testing.TB) any {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	require.NotEmpty(t, r.reqs, "the chat backend was asked nothing")
	return decodeJSON(t, r.reqs[len(r.reqs)-1])
}

// decodeJSON decodes a JSON text into a generic value.
func decodeJSON(t testing.TB, s string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v), s)
	return v
}

// event is one event of a recorded responses stream: its name and its
// data, decoded (the data of [DONE] is the string "[DONE]").
type event struct {
	Name string
	Data any
}

// readEvents parses a recorded responses stream.
func readEvents(t testing.TB, body string) []event {
	t.Helper()
	var evs []event
	for ev, err := range sse.Read(strings.NewReader(body)) {
		require.NoError(t, err)
		if ev.IsDone() {
			evs = append(evs, event{Data: "[DONE]"})
			continue
		}
		evs = append(evs, event{Name: ev.Type, Data: decodeJSON(t, ev.Data)})
	}
	return evs
}

// over returns the backend of fromchat.New over b.
func over(b chat.Backend) responses.StreamingBackend { return fromchat.New(b) }
