package router_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/router"
	"github.com/gatewaykit/gatewaykit/sse"
)

// logged is a backend as an embedder writes one to log what another
// answers: a plain struct that calls the inner backend, with nothing of
// the kit's but the chat.StreamingBackend it implements.
type logged struct {
	inner chat.StreamingBackend
	mu    *sync.Mutex
	lines *[]string
}

func (l logged) log(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	*l.lines = append(*l.lines, s)
}

func (l logged) Complete(ctx context.Context, p *chat.Params) (*chat.Result, error) {
	res, err := l.inner.Complete(ctx, p)
	if err == nil {
		l.log("reply: " + res.Choices[0].Content)
	}
	return res, err
}

func (l logged) Stream(ctx context.Context, p *chat.Params) iter.Seq2[chat.Delta, error] {
	return func(yield func(chat.Delta, error) bool) {
		for d, err := range l.inner.Stream(ctx, p) {
			l.log("delta: " + d.Content)
			if !yield(d, err) {
				return
			}
		}
	}
}

// upstream is an OpenAI-compatible upstream in memory (the relay's
// transport): it keeps the body of each request, and answers with reply,
// or, for a stream, with the events of reads, each read of the reply's
// body returning the next one whole.
type upstream struct {
	got   chan []byte
	reply string
	reads []string
}

func (u *upstream) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	u.got <- body
	res := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(u.reply)), ContentLength: -1, Request: r}
	if bytes.Contains(body, []byte(`"stream":true`)) {
		res.Header.Set("Content-Type", "text/event-stream")
		res.Body = io.NopCloser(&pieces{left: slices.Clone(u.reads)})
	}
	return res, nil
}

// pieces returns one of its strings per Read.
type pieces struct{ left []string }

func (p *pieces) Read(b []byte) (int, error) {
	if len(p.left) == 0 {
		return 0, io.EOF
	}
	n := copy(b, p.left[0])
	if p.left[0] = p.left[0][n:]; p.left[0] == "" {
		p.left = p.left[1:]
	}
	return n, nil
}

func event(delta, finish string) string {
	return `data: {"id":"up-1","object":"chat.completion.chunk","created":7,"model":"up-model","system_fingerprint":"fp_up","choices":[{"index":0,"delta":` +
		delta + `,"logprobs":{"content":[]},"finish_reason":` + finish + `}]}` + "\n\n"
}

// TestWrappersKeepThePassThrough checks that the relay's chat backend,
// behind the router and an embedder's logging wrapper (in either order),
// still sends the client's request upstream as it was sent, unmodelled
// members included, and the client the upstream's members that the kit
// does not model (system_fingerprint, logprobs) in the JSON reply and in
// the stream, and that the stream keeps the upstream's pace: the events
// of one read of its reply leave in one write, before the next read.
func TestWrappersKeepThePassThrough(t *testing.T) {
	t.Parallel()
	const reply = `{"id":"up-1","object":"chat.completion","created":7,"model":"up-model","system_fingerprint":"fp_up","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"logprobs":{"content":[{"token":"Hello","logprob":-0.1}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`
	reads := []string{
		event(`{"role":"assistant","content":"Hel"}`, "null") + event(`{"content":"lo"}`, "null"),
		event(`{"content":"!"}`, "null"),
		event(`{}`, `"stop"`) + `data: {"id":"up-1","object":"chat.completion.chunk","created":7,"model":"up-model","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}` + "\n\ndata: [DONE]\n\n",
	}
	// wrap stacks the router (routerOf) and the logging wrapper (log) on
	// the relay's chat backend.
	type stack = func(routerOf, log func(chat.StreamingBackend) chat.StreamingBackend, relayed chat.StreamingBackend) chat.StreamingBackend
	for _, tc := range []struct {
		name string
		wrap stack
	}{
		{"the router over a logging wrapper", func(routerOf, log func(chat.StreamingBackend) chat.StreamingBackend, relayed chat.StreamingBackend) chat.StreamingBackend {
			return routerOf(log(relayed))
		}},
		{"a logging wrapper over the router", func(routerOf, log func(chat.StreamingBackend) chat.StreamingBackend, relayed chat.StreamingBackend) chat.StreamingBackend {
			return log(routerOf(relayed))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := &upstream{got: make(chan []byte, 1), reply: reply, reads: reads}
			rl, err := relay.New([]relay.Route{{Model: "pub", Upstreams: []relay.Upstream{{BaseURL: "http://upstream.invalid/v1", Model: "up-model"}}}},
				relay.WithTransport(up))
			require.NoError(t, err)
			var mu sync.Mutex
			var lines []string
			log := func(b chat.StreamingBackend) chat.StreamingBackend { return logged{inner: b, mu: &mu, lines: &lines} }
			// routerOf routes "pub" to pub, and the demo's models to the
			// demo.
			routerOf := func(pub chat.StreamingBackend) chat.StreamingBackend {
				rt, err := router.New(
					router.Route{Models: []models.Model{{ID: "pub", EndpointTypes: []models.EndpointType{models.Compat}}}, Chat: pub},
					router.Route{Chat: demo.NewTextBackend().Chat()},
				)
				require.NoError(t, err)
				return rt.Chat()
			}
			backend := tc.wrap(routerOf, log, rl.Chat())
			catalog := models.NewMemoryCatalog(append(demo.TextModels(), models.Model{ID: "pub", EndpointTypes: []models.EndpointType{models.Compat}})...)
			h := chat.NewHandler(catalog, backend)

			// JSON.
			const body = `{"model":"pub","messages":[{"role":"user","content":"Hi"}],"logprobs":true,"top_logprobs":2,"x_trace":"t-1"}`
			w := endpointtest.Post(t, h, "/v1/chat/completions", body)
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			require.JSONEq(t, `{"model":"up-model","messages":[{"role":"user","content":"Hi"}],"logprobs":true,"top_logprobs":2,"x_trace":"t-1"}`, string(<-up.got),
				"the client's request reached the upstream, members the kit does not model included")
			var got map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &got))
			require.JSONEq(t, `"fp_up"`, string(got["system_fingerprint"]))
			require.JSONEq(t, `[{"index":0,"message":{"role":"assistant","content":"Hello!"},"logprobs":{"content":[{"token":"Hello","logprob":-0.1}]},"finish_reason":"stop"}]`, string(got["choices"]))

			// Stream.
			rec := &endpointtest.FlushRecorder{ResponseRecorder: httptest.NewRecorder()}
			rec.Post(h, "/v1/chat/completions", strings.Replace(body, `"logprobs"`, `"stream":true,"logprobs"`, 1))
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			require.Contains(t, string(<-up.got), `"x_trace":"t-1"`)
			var contents []string
			for ev, err := range sse.Read(strings.NewReader(rec.Body.String())) {
				require.NoError(t, err)
				if ev.IsDone() {
					continue
				}
				var c map[string]json.RawMessage
				require.NoError(t, json.Unmarshal([]byte(ev.Data), &c))
				require.JSONEq(t, `"fp_up"`, string(c["system_fingerprint"]), ev.Data)
				require.Contains(t, string(c["choices"]), `"logprobs":{"content":[]}`, ev.Data)
				contents = append(contents, ev.Data)
			}
			require.Len(t, contents, 4, "three content chunks and the finish chunk, as the upstream sent them")
			var paced []int
			for _, f := range rec.Flushed {
				paced = append(paced, strings.Count(f, `"content":"`))
			}
			require.Equal(t, []int{2, 3, 3, 3}, paced,
				"flushed before each read of the upstream: the two events of the first read together, the third before the last read")

			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, []string{"reply: Hello!", "delta: Hel", "delta: lo", "delta: !", "delta: ", "delta: "}, lines,
				"the wrapper saw the replies: the reply, then the deltas, the finish and the usage included")
		})
	}
}

// TestInterceptorsKeepThePassThrough checks that the relay's chat
// backend, behind the router, in a handler with interceptors that
// observe the reply (an edit hook that leaves the text alone, a done
// hook) still sends the client the upstream's unmodelled members
// (system_fingerprint, logprobs), JSON and stream, and the upstream the
// client's body; and that a hook that changes a delta's text has that
// delta alone encoded by the handler.
func TestInterceptorsKeepThePassThrough(t *testing.T) {
	t.Parallel()
	const reply = `{"id":"up-1","object":"chat.completion","created":7,"model":"up-model","system_fingerprint":"fp_up","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"logprobs":{"content":[{"token":"Hello","logprob":-0.1}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`
	reads := []string{
		event(`{"role":"assistant","content":"Hel"}`, "null") + event(`{"content":"lo"}`, "null"),
		event(`{"content":"!"}`, "null"),
		event(`{}`, `"stop"`) + `data: {"id":"up-1","object":"chat.completion.chunk","created":7,"model":"up-model","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}` + "\n\ndata: [DONE]\n\n",
	}
	for _, tc := range []struct {
		name   string
		edit   func(string) string
		wantFP int // stream chunks that keep the upstream's members
	}{
		{"hooks that leave the text alone", func(s string) string { return s }, 4},
		{"a hook that changes one delta", func(s string) string { return strings.ReplaceAll(s, "lo", "LO") }, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := &upstream{got: make(chan []byte, 1), reply: reply, reads: reads}
			rl, err := relay.New([]relay.Route{{Model: "pub", Upstreams: []relay.Upstream{{BaseURL: "http://upstream.invalid/v1", Model: "up-model"}}}},
				relay.WithTransport(up))
			require.NoError(t, err)
			rt, err := router.New(
				router.Route{Models: []models.Model{{ID: "pub", EndpointTypes: []models.EndpointType{models.Compat}}}, Chat: rl.Chat()},
				router.Route{Chat: demo.NewTextBackend().Chat()},
			)
			require.NoError(t, err)
			var mu sync.Mutex
			var done []string
			observe := func(next endpoint.Func) endpoint.Func {
				return func(ctx context.Context, c *endpoint.Call) (*endpoint.Reply, error) {
					r, err := next(ctx, c)
					if err != nil {
						return nil, err
					}
					r.EditText(func(_ int, s string) string { return tc.edit(s) })
					r.OnDone(func(_ context.Context, d *endpoint.Done) {
						mu.Lock()
						defer mu.Unlock()
						done = append(done, fmt.Sprintf("%s %q %d+%d", c.Model, d.Texts, d.InputTokens, d.OutputTokens))
					})
					return r, nil
				}
			}
			catalog := models.NewMemoryCatalog(append(demo.TextModels(), models.Model{ID: "pub", EndpointTypes: []models.EndpointType{models.Compat}})...)
			h := chat.NewHandler(catalog, rt.Chat(), endpoint.WithInterceptors(observe))

			const body = `{"model":"pub","messages":[{"role":"user","content":"Hi"}],"logprobs":true,"top_logprobs":2,"x_trace":"t-1"}`
			w := endpointtest.Post(t, h, "/v1/chat/completions", body)
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			require.JSONEq(t, `{"model":"up-model","messages":[{"role":"user","content":"Hi"}],"logprobs":true,"top_logprobs":2,"x_trace":"t-1"}`, string(<-up.got),
				"the client's request reached the upstream, members the kit does not model included")
			var got map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &got))
			if edited := tc.edit("Hello!"); edited == "Hello!" {
				require.JSONEq(t, `"fp_up"`, string(got["system_fingerprint"]))
				require.JSONEq(t, `[{"index":0,"message":{"role":"assistant","content":"Hello!"},"logprobs":{"content":[{"token":"Hello","logprob":-0.1}]},"finish_reason":"stop"}]`, string(got["choices"]))
			} else {
				require.NotContains(t, got, "system_fingerprint", "a reply whose text changed is the handler's encoding")
				require.Contains(t, string(got["choices"]), `"content":"HelLO!"`)
			}

			rec := &endpointtest.FlushRecorder{ResponseRecorder: httptest.NewRecorder()}
			rec.Post(h, "/v1/chat/completions", strings.Replace(body, `"logprobs"`, `"stream":true,"logprobs"`, 1))
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			require.Contains(t, string(<-up.got), `"x_trace":"t-1"`)
			fp := 0
			var text strings.Builder
			for ev, err := range sse.Read(strings.NewReader(rec.Body.String())) {
				require.NoError(t, err)
				if ev.IsDone() {
					continue
				}
				var c chat.Chunk
				require.NoError(t, json.Unmarshal([]byte(ev.Data), &c))
				if len(c.Choices) > 0 {
					text.WriteString(c.Choices[0].Delta.Content)
				}
				if strings.Contains(ev.Data, `"system_fingerprint":"fp_up"`) && strings.Contains(ev.Data, `"logprobs":{"content":[]}`) {
					fp++
				}
			}
			require.Equal(t, tc.wantFP, fp, "chunks that keep the upstream's members")
			require.Equal(t, tc.edit("Hel")+tc.edit("lo")+tc.edit("!"), text.String())

			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, []string{
				fmt.Sprintf("pub [%q] 5+2", tc.edit("Hello!")),
				fmt.Sprintf("pub [%q] 5+3", tc.edit("Hel")+tc.edit("lo")+tc.edit("!")),
			}, done, "the done hook saw the text sent and the upstream's usage")
		})
	}
}
