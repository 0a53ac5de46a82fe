package endpoint_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/sse"
)

// post posts body to h at path and returns the response.
func post(h http.Handler, path, body string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(w, r)
	return w
}

// Guardrail refuses the calls whose prompt says word: a 400 in the
// family's error shape, charged nothing.
func Guardrail(word string) endpoint.Interceptor {
	return func(next endpoint.Func) endpoint.Func {
		return func(ctx context.Context, c *endpoint.Call) (*endpoint.Reply, error) {
			if strings.Contains(strings.ToLower(c.Prompt()), word) {
				return nil, apierrors.InvalidRequest("messages", "The prompt is refused by the gateway's policy.")
			}
			return next(ctx, c)
		}
	}
}

func ExampleWithInterceptors_guardrail() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	h := chat.NewHandler(catalog, demo.NewTextBackend().Chat(), endpoint.WithInterceptors(Guardrail("forbidden")))

	w := post(h, "/v1/chat/completions", `{"model":"demo-chat","messages":[{"role":"user","content":"Say a Forbidden word"}]}`)
	fmt.Println(w.Code, strings.TrimSpace(w.Body.String()))
	w = post(h, "/v1/chat/completions", `{"model":"demo-chat","max_tokens":8,"messages":[{"role":"user","content":"Hello!"}]}`)
	fmt.Println(w.Code)
	// Output:
	// 400 {"error":{"message":"The prompt is refused by the gateway's policy.","type":"invalid_request_error","param":"messages","code":"invalid_request_error"}}
	// 200
}

// Cache answers a call whose family, model and prompt it has seen with
// the text and usage of the reply it kept, without the backend. A real
// cache would key on every parameter of the request, and bound its size.
type Cache struct {
	mu      sync.Mutex
	replies map[string]endpoint.Done
}

// Intercept is the cache's interceptor.
func (k *Cache) Intercept(next endpoint.Func) endpoint.Func {
	return func(ctx context.Context, c *endpoint.Call) (*endpoint.Reply, error) {
		key := c.Family + "\x00" + c.Model + "\x00" + c.Prompt()
		k.mu.Lock()
		d, hit := k.replies[key]
		k.mu.Unlock()
		if hit {
			return endpoint.NewReply(d.Texts[0], d.InputTokens, d.OutputTokens), nil
		}
		r, err := next(ctx, c)
		if err != nil {
			return nil, err
		}
		r.OnDone(func(_ context.Context, d *endpoint.Done) {
			if d.Err == nil && len(d.Texts) > 0 {
				k.mu.Lock()
				k.replies[key] = *d
				k.mu.Unlock()
			}
		})
		return r, nil
	}
}

// counting counts the calls of a chat backend.
type counting struct {
	chat.Backend
	calls int
}

func (b *counting) Complete(ctx context.Context, p *chat.Params) (*chat.Result, error) {
	b.calls++
	return b.Backend.Complete(ctx, p)
}

func ExampleWithInterceptors_cache() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	backend := &counting{Backend: demo.NewTextBackend().Chat()}
	cache := &Cache{replies: map[string]endpoint.Done{}}
	h := chat.NewHandler(catalog, backend, endpoint.WithInterceptors(cache.Intercept))

	body := `{"model":"demo-chat","max_tokens":8,"messages":[{"role":"user","content":"Hello!"}]}`
	for range 2 {
		var c chat.Completion
		_ = json.Unmarshal(post(h, "/v1/chat/completions", body).Body.Bytes(), &c)
		fmt.Printf("%q prompt %d, completion %d, total %d\n", *c.Choices[0].Message.Content, c.Usage.PromptTokens, c.Usage.CompletionTokens, c.Usage.TotalTokens)
	}
	w := post(h, "/v1/chat/completions", strings.Replace(body, `"max_tokens":8`, `"max_tokens":8,"stream":true`, 1))
	fmt.Println(w.Header().Get("Content-Type"), strings.Contains(w.Body.String(), `"content":"You said: \"Hello!\"."`))
	fmt.Println("backend calls:", backend.calls)
	// Output:
	// "You said: \"Hello!\"." prompt 2, completion 8, total 10
	// "You said: \"Hello!\"." prompt 2, completion 8, total 10
	// text/event-stream true
	// backend calls: 1
}

// AuditLog logs a line per call once its reply ends: family, model,
// caller, usage and outcome.
func AuditLog(l *slog.Logger) endpoint.Interceptor {
	return func(next endpoint.Func) endpoint.Func {
		return func(ctx context.Context, c *endpoint.Call) (*endpoint.Reply, error) {
			r, err := next(ctx, c)
			if err != nil {
				l.LogAttrs(ctx, slog.LevelInfo, "refused", slog.String("family", c.Family), slog.String("error", err.Error()))
				return nil, err
			}
			r.OnDone(func(ctx context.Context, d *endpoint.Done) {
				l.LogAttrs(ctx, slog.LevelInfo, "reply", slog.String("family", c.Family), slog.String("model", c.Model),
					slog.Bool("stream", c.Stream), slog.Int64("input_tokens", d.InputTokens), slog.Int64("output_tokens", d.OutputTokens),
					slog.Int("text_bytes", len(strings.Join(d.Texts, ""))))
			})
			return r, nil
		}
	}
}

func ExampleWithInterceptors_auditLog() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	h := chat.NewHandler(catalog, demo.NewTextBackend().Chat(), endpoint.WithInterceptors(AuditLog(logger), Guardrail("forbidden")))

	post(h, "/v1/chat/completions", `{"model":"demo-chat","max_tokens":8,"messages":[{"role":"user","content":"Hello!"}]}`)
	post(h, "/v1/chat/completions", `{"model":"demo-chat","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"Hello!"}]}`)
	post(h, "/v1/chat/completions", `{"model":"demo-chat","messages":[{"role":"user","content":"forbidden"}]}`)
	// Output:
	// level=INFO msg=reply family=chat model=demo-chat stream=false input_tokens=2 output_tokens=8 text_bytes=19
	// level=INFO msg=reply family=chat model=demo-chat stream=true input_tokens=2 output_tokens=8 text_bytes=19
	// level=INFO msg=refused family=chat error="400 invalid_request_error: The prompt is refused by the gateway's policy. (param messages)"
}

// Redact rewrites every digit of a reply's text on its way out: in a
// stream, each delta's text, as it is sent.
func Redact(next endpoint.Func) endpoint.Func {
	return func(ctx context.Context, c *endpoint.Call) (*endpoint.Reply, error) {
		r, err := next(ctx, c)
		if err == nil {
			r.EditText(func(_ int, text string) string {
				return strings.Map(func(c rune) rune {
					if c >= '0' && c <= '9' {
						return '#'
					}
					return c
				}, text)
			})
		}
		return r, err
	}
}

func ExampleReply_EditText() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	h := chat.NewHandler(catalog, demo.NewTextBackend().Chat(), endpoint.WithInterceptors(Redact))

	var c chat.Completion
	w := post(h, "/v1/chat/completions", `{"model":"demo-chat","max_tokens":10,"messages":[{"role":"user","content":"My PIN is 4321"}]}`)
	_ = json.Unmarshal(w.Body.Bytes(), &c)
	fmt.Println(*c.Choices[0].Message.Content)

	w = post(h, "/v1/chat/completions", `{"model":"demo-chat","stream":true,"max_tokens":10,"messages":[{"role":"user","content":"My PIN is 4321"}]}`)
	var text strings.Builder
	for ev := range sse.Read(w.Body) {
		var chunk chat.Chunk
		if !ev.IsDone() && json.Unmarshal([]byte(ev.Data), &chunk) == nil && len(chunk.Choices) > 0 {
			text.WriteString(chunk.Choices[0].Delta.Content)
		}
	}
	fmt.Println(text.String())
	// Output:
	// You said: "My PIN is ####".
	// You said: "My PIN is ####".
}
