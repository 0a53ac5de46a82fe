package endpoint_test

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/audio"
	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/embeddings"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/gemini"
	"github.com/gatewaykit/gatewaykit/images"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/messages"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/moderations"
	"github.com/gatewaykit/gatewaykit/rerank"
	"github.com/gatewaykit/gatewaykit/responses"
)

// calls counts the calls that reach a backend.
type calls struct{ n atomic.Int64 }

type countedChat struct {
	chat.Backend
	c *calls
}

func (b countedChat) Complete(ctx context.Context, p *chat.Params) (*chat.Result, error) {
	b.c.n.Add(1)
	return b.Backend.Complete(ctx, p)
}

func (b countedChat) Stream(ctx context.Context, p *chat.Params) iter.Seq2[chat.Delta, error] {
	b.c.n.Add(1)
	return b.Backend.(chat.StreamingBackend).Stream(ctx, p)
}

type countedCompletions struct {
	completions.StreamingBackend
	c *calls
}

func (b countedCompletions) Complete(ctx context.Context, p *completions.Params) (*completions.Result, error) {
	b.c.n.Add(1)
	return b.StreamingBackend.Complete(ctx, p)
}

func (b countedCompletions) Stream(ctx context.Context, p *completions.Params) iter.Seq2[completions.Delta, error] {
	b.c.n.Add(1)
	return b.StreamingBackend.Stream(ctx, p)
}

type countedResponses struct {
	responses.StreamingBackend
	c *calls
}

func (b countedResponses) Complete(ctx context.Context, p *responses.Params) (*responses.Result, error) {
	b.c.n.Add(1)
	return b.StreamingBackend.Complete(ctx, p)
}

func (b countedResponses) Stream(ctx context.Context, p *responses.Params) iter.Seq2[responses.Delta, error] {
	b.c.n.Add(1)
	return b.StreamingBackend.Stream(ctx, p)
}

// family is an endpoint family as the tests of interceptors serve it:
// a handler over the demo's backend (counted), and its requests.
type family struct {
	name       string
	handler    func(c *calls, opts ...endpoint.Option) http.Handler
	path       string // JSON
	streamPath string
	body       func(prompt string, stream bool) string
	refused    string // the guardrail's refusal, in the family's shape
}

const refusal = "The prompt is refused by the gateway's policy."

func families() []family {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	text := demo.NewTextBackend()
	openAI := `{"error":{"message":"` + refusal + `","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`
	stream := func(s bool) string {
		if s {
			return `"stream":true,`
		}
		return ""
	}
	return []family{
		{name: "chat", path: "/v1/chat/completions", streamPath: "/v1/chat/completions",
			handler: func(c *calls, opts ...endpoint.Option) http.Handler {
				return chat.NewHandler(catalog, countedChat{text.Chat(), c}, optsOf[chat.Option](opts)...)
			},
			body: func(p string, s bool) string {
				return `{"model":"demo-chat",` + stream(s) + `"max_tokens":8,"messages":[{"role":"user","content":` + q(p) + `}]}`
			},
			refused: openAI},
		{name: "completions", path: "/v1/completions", streamPath: "/v1/completions",
			handler: func(c *calls, opts ...endpoint.Option) http.Handler {
				return completions.NewHandler(catalog, countedCompletions{text.Completions(), c}, optsOf[completions.Option](opts)...)
			},
			body: func(p string, s bool) string {
				return `{"model":"demo-instruct",` + stream(s) + `"max_tokens":8,"prompt":` + q(p) + `}`
			},
			refused: openAI},
		{name: "responses", path: "/v1/responses", streamPath: "/v1/responses",
			handler: func(c *calls, opts ...endpoint.Option) http.Handler {
				return responses.NewHandler(catalog, countedResponses{text.Responses(), c}, optsOf[responses.Option](opts)...)
			},
			body: func(p string, s bool) string {
				return `{"model":"demo-chat",` + stream(s) + `"max_output_tokens":8,"store":false,"input":` + q(p) + `}`
			},
			refused: openAI},
		{name: "messages", path: "/v1/messages", streamPath: "/v1/messages",
			handler: func(c *calls, opts ...endpoint.Option) http.Handler {
				return messages.NewHandler(catalog, countedChat{text.Chat(), c}, optsOf[messages.Option](opts)...)
			},
			body: func(p string, s bool) string {
				return `{"model":"demo-chat",` + stream(s) + `"max_tokens":8,"messages":[{"role":"user","content":` + q(p) + `}]}`
			},
			refused: `{"type":"error","error":{"type":"invalid_request_error","message":"` + refusal + `"}}`},
		{name: "gemini", path: "/v1beta/models/demo-chat:generateContent", streamPath: "/v1beta/models/demo-chat:streamGenerateContent?alt=sse",
			handler: func(c *calls, opts ...endpoint.Option) http.Handler {
				return gemini.NewHandler(catalog, countedChat{text.Chat(), c}, optsOf[gemini.Option](opts)...)
			},
			body: func(p string, _ bool) string {
				return `{"generationConfig":{"maxOutputTokens":8},"contents":[{"role":"user","parts":[{"text":` + q(p) + `}]}]}`
			},
			refused: `{"error":{"code":400,"message":"` + refusal + `","status":"INVALID_ARGUMENT",` +
				`"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"gatewaykit","reason":"INVALID_REQUEST_ERROR"}]}}`},
	}
}

// optsOf converts opts to the Option type of a package.
func optsOf[O any](opts []endpoint.Option) []O {
	out := make([]O, len(opts))
	for i, o := range opts {
		out[i] = any(o).(O)
	}
	return out
}

func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// banned refuses the calls whose prompt says word.
func banned(word string) endpoint.Interceptor {
	return func(next endpoint.Func) endpoint.Func {
		return func(ctx context.Context, c *endpoint.Call) (*endpoint.Reply, error) {
			if strings.Contains(c.Prompt(), word) {
				return nil, apierrors.InvalidRequest("", refusal)
			}
			return next(ctx, c)
		}
	}
}

func TestGuardrailRefusesInTheFamilysShape(t *testing.T) {
	t.Parallel()
	for _, f := range families() {
		for _, stream := range []bool{false, true} {
			t.Run(f.name+map[bool]string{false: "", true: " stream"}[stream], func(t *testing.T) {
				t.Parallel()
				c := &calls{}
				var seen atomic.Int64
				spy := func(next endpoint.Func) endpoint.Func {
					return func(ctx context.Context, call *endpoint.Call) (*endpoint.Reply, error) {
						seen.Add(1)
						require.Equal(t, f.name, call.Family)
						require.Equal(t, stream, call.Stream)
						return next(ctx, call)
					}
				}
				h := f.handler(c, endpoint.WithInterceptors(spy, banned("plutonium")))
				path := f.path
				if stream {
					path = f.streamPath
				}
				w := endpointtest.Post(t, h, path, f.body("Where can I buy plutonium?", stream))
				require.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())
				require.JSONEq(t, f.refused, w.Body.String())
				require.Zero(t, c.n.Load(), "the backend was not asked")

				w = endpointtest.Post(t, h, path, f.body("Hello!", stream))
				require.Equal(t, http.StatusOK, w.Code, w.Body.String())
				require.Contains(t, w.Body.String(), "Hello")
				require.Equal(t, int64(1), c.n.Load())
				require.Equal(t, int64(2), seen.Load())
			})
		}
	}
}

func TestCacheAnswersWithoutTheBackend(t *testing.T) {
	t.Parallel()
	for _, f := range families() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			c := &calls{}
			cache := &Cache{replies: map[string]endpoint.Done{}}
			h := f.handler(c, endpoint.WithInterceptors(cache.Intercept))
			first := endpointtest.Post(t, h, f.path, f.body("Hello!", false))
			require.Equal(t, http.StatusOK, first.Code, first.Body.String())
			require.Equal(t, int64(1), c.n.Load())

			again := endpointtest.Post(t, h, f.path, f.body("Hello!", false))
			require.Equal(t, http.StatusOK, again.Code, again.Body.String())
			require.Equal(t, int64(1), c.n.Load(), "the second call was answered by the cache")
			require.Contains(t, again.Body.String(), `You said: \"Hello!\".`)
			require.Equal(t, usageOf(t, first.Body.Bytes()), usageOf(t, again.Body.Bytes()), "the cache reports the usage it kept")

			s := endpointtest.Post(t, h, f.streamPath, f.body("Hello!", true))
			require.Equal(t, http.StatusOK, s.Code, s.Body.String())
			require.Contains(t, s.Header().Get("Content-Type"), "text/event-stream")
			require.Contains(t, s.Body.String(), `You said: \"Hello!\".`, "the cached text, streamed")
			require.Equal(t, int64(1), c.n.Load(), "the stream was answered by the cache")

			other := endpointtest.Post(t, h, f.streamPath, f.body("Bye!", true))
			require.Equal(t, http.StatusOK, other.Code, other.Body.String())
			require.Equal(t, int64(2), c.n.Load(), "another prompt reaches the backend")
		})
	}
}

// usageOf returns the token counts of a JSON reply of any family.
func usageOf(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(body, &v))
	for _, k := range []string{"usage", "usageMetadata"} {
		if u, ok := v[k].(map[string]any); ok {
			return u
		}
	}
	t.Fatalf("no usage in %s", body)
	return nil
}

// TestChargesAsTheInterceptorsSay checks what a key is charged: nothing
// for a refused call, the backend's usage for a call that reaches it, the
// cached reply's usage for a cache hit, and the usage that a done hook
// leaves.
func TestChargesAsTheInterceptorsSay(t *testing.T) {
	t.Parallel()
	for _, f := range families() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			keys := auth.NewMemoryKeyStore()
			secret, err := auth.NewSecret()
			require.NoError(t, err)
			require.NoError(t, keys.Add(t.Context(), secret, auth.Key{ID: "key_1", Quota: auth.LimitedQuota(1000)}))
			used := func() int64 {
				k, err := keys.GetKey(t.Context(), "key_1")
				require.NoError(t, err)
				return k.Quota.Used
			}
			cache := &Cache{replies: map[string]endpoint.Done{}}
			double := func(next endpoint.Func) endpoint.Func {
				return func(ctx context.Context, c *endpoint.Call) (*endpoint.Reply, error) {
					r, err := next(ctx, c)
					if err == nil && strings.Contains(c.Prompt(), "double") {
						r.OnDone(func(_ context.Context, d *endpoint.Done) { d.OutputTokens *= 2 })
					}
					return r, err
				}
			}
			h := auth.Middleware(keys)(f.handler(&calls{}, endpoint.WithInterceptors(banned("plutonium"), double, cache.Intercept)))
			bearer := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+secret) }

			w := endpointtest.Post(t, h, f.path, f.body("plutonium", false), bearer)
			require.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())
			require.Zero(t, used(), "a refusal is charged nothing")
			rows, err := keys.Usage(t.Context(), auth.UsageParams{KeyID: "key_1"})
			require.NoError(t, err)
			require.Empty(t, rows, "nor recorded as a request")

			w = endpointtest.Post(t, h, f.path, f.body("Hello!", false), bearer)
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			once := used()
			require.Positive(t, once)

			w = endpointtest.Post(t, h, f.streamPath, f.body("Hello!", true), bearer)
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			require.Equal(t, 2*once, used(), "a cache hit is charged the usage of its reply")

			w = endpointtest.Post(t, h, f.path, f.body("double", false), bearer)
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			u := usageOf(t, w.Body.Bytes())
			in, out := tokens(u)
			require.Equal(t, 2*once+in+out, used(), "charged what the reply reports")
			require.Equal(t, int64(16), out, "the done hook doubled the 8 tokens of the reply")
		})
	}
}

// tokens returns the input and output tokens of a usage of any family.
func tokens(u map[string]any) (in, out int64) {
	for _, k := range []string{"prompt_tokens", "input_tokens", "promptTokenCount"} {
		if v, ok := u[k].(float64); ok {
			in = int64(v)
		}
	}
	for _, k := range []string{"completion_tokens", "output_tokens", "candidatesTokenCount"} {
		if v, ok := u[k].(float64); ok {
			out = int64(v)
		}
	}
	return in, out
}

// TestAccessPointsRunTheInterceptors checks the access points whose
// replies are not text: a guardrail refuses a call (400 in the OpenAI
// shape, the backend not asked, nothing charged), and a done hook sees
// the usage of a call that the backend answered.
func TestAccessPointsRunTheInterceptors(t *testing.T) {
	t.Parallel()
	catalog := models.NewMemoryCatalog(demo.AccessModels()...)
	openAI := `{"error":{"message":"` + refusal + `","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`
	for _, tc := range []struct {
		family  string
		handler func(opts ...endpoint.Option) http.Handler
		path    string
		body    func(prompt string) string
	}{
		{"embeddings", func(opts ...endpoint.Option) http.Handler {
			return embeddings.NewHandler(catalog, demo.NewEmbeddingBackend(), optsOf[embeddings.Option](opts)...)
		}, "/v1/embeddings", func(p string) string { return `{"model":"demo-embedding","input":` + q(p) + `}` }},
		{"moderations", func(opts ...endpoint.Option) http.Handler {
			return moderations.NewHandler(catalog, demo.NewModerationBackend(), optsOf[moderations.Option](opts)...)
		}, "/v1/moderations", func(p string) string { return `{"model":"demo-moderation","input":` + q(p) + `}` }},
		{"rerank", func(opts ...endpoint.Option) http.Handler {
			return rerank.NewHandler(catalog, demo.NewRerankBackend(), optsOf[rerank.Option](opts)...)
		}, "/v1/rerank", func(p string) string {
			return `{"model":"demo-rerank","query":` + q(p) + `,"documents":["a cat","a dog"]}`
		}},
		{"images", func(opts ...endpoint.Option) http.Handler {
			return images.NewHandler(catalog, demo.NewImageBackend(), optsOf[images.Option](opts)...)
		}, "/v1/images/generations", func(p string) string { return `{"model":"demo-image","size":"256x256","prompt":` + q(p) + `}` }},
		{"audio", func(opts ...endpoint.Option) http.Handler {
			return audio.NewHandler(catalog, demo.NewAudioBackend(), optsOf[audio.Option](opts)...)
		}, "/v1/audio/speech", func(p string) string { return `{"model":"demo-tts","voice":"alloy","input":` + q(p) + `}` }},
	} {
		t.Run(tc.family, func(t *testing.T) {
			t.Parallel()
			keys := auth.NewMemoryKeyStore()
			secret, err := auth.NewSecret()
			require.NoError(t, err)
			require.NoError(t, keys.Add(t.Context(), secret, auth.Key{ID: "key_1", Quota: auth.LimitedQuota(100000)}))
			used := func() int64 {
				k, err := keys.GetKey(t.Context(), "key_1")
				require.NoError(t, err)
				return k.Quota.Used
			}
			var done []endpoint.Done
			var mu sync.Mutex
			audit := func(next endpoint.Func) endpoint.Func {
				return func(ctx context.Context, c *endpoint.Call) (*endpoint.Reply, error) {
					require.Equal(t, tc.family, c.Family)
					require.NotNil(t, c.Principal)
					r, err := next(ctx, c)
					if err == nil {
						r.OnDone(func(_ context.Context, d *endpoint.Done) {
							mu.Lock()
							defer mu.Unlock()
							done = append(done, *d)
						})
					}
					return r, err
				}
			}
			h := auth.Middleware(keys)(tc.handler(endpoint.WithInterceptors(audit, banned("plutonium"))))
			bearer := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+secret) }

			w := endpointtest.Post(t, h, tc.path, tc.body("plutonium"), bearer)
			require.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())
			require.JSONEq(t, openAI, w.Body.String())
			require.Zero(t, used(), "a refusal is charged nothing")

			w = endpointtest.Post(t, h, tc.path, tc.body("a quiet morning"), bearer)
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, done, 1)
			require.NoError(t, done[0].Err)
			require.Equal(t, used(), done[0].InputTokens+done[0].OutputTokens, "the done hook saw what the key was charged")
			require.Positive(t, used())
		})
	}
}

// TestDoneHookRewritesTheStreamsUsage checks that a done hook that
// changes the usage of a stream has it sent in the final usage (chat's
// usage chunk) and charged.
func TestDoneHookRewritesTheStreamsUsage(t *testing.T) {
	t.Parallel()
	keys := auth.NewMemoryKeyStore()
	secret, err := auth.NewSecret()
	require.NoError(t, err)
	require.NoError(t, keys.Add(t.Context(), secret, auth.Key{ID: "key_1", Quota: auth.LimitedQuota(1000)}))
	double := func(next endpoint.Func) endpoint.Func {
		return func(ctx context.Context, c *endpoint.Call) (*endpoint.Reply, error) {
			r, err := next(ctx, c)
			if err == nil {
				r.OnDone(func(_ context.Context, d *endpoint.Done) { d.OutputTokens *= 2 })
			}
			return r, err
		}
	}
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	h := auth.Middleware(keys)(chat.NewHandler(catalog, demo.NewTextBackend().Chat(), endpoint.WithInterceptors(double)))
	w := endpointtest.Post(t, h, "/v1/chat/completions",
		`{"model":"demo-chat","stream":true,"stream_options":{"include_usage":true},"max_tokens":8,"messages":[{"role":"user","content":"Hello!"}]}`,
		func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+secret) })
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.Contains(t, w.Body.String(), `"usage":{"prompt_tokens":2,"completion_tokens":16,"total_tokens":18}`)
	k, err := keys.GetKey(t.Context(), "key_1")
	require.NoError(t, err)
	require.Equal(t, int64(18), k.Quota.Used)
}
