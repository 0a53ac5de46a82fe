package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/go-playground/validator/v10"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/internal/validation"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/sse"
)

// send posts body to h and returns the response.
func send(h http.Handler, body string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(w, r)
	return w
}

func ExampleNewHandler() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	mux := http.NewServeMux()
	chat.Register(mux, chat.NewHandler(catalog, demo.NewTextBackend().Chat()))

	w := send(mux, `{"model":"demo-chat","max_tokens":8,"messages":[{"role":"user","content":"Hello!"}]}`)
	var c chat.Completion
	_ = json.Unmarshal(w.Body.Bytes(), &c)
	fmt.Println(w.Code, c.Object, c.Model)
	fmt.Printf("%q %s\n", *c.Choices[0].Message.Content, c.Choices[0].FinishReason)
	fmt.Printf("%+v\n", c.Usage)
	// Output:
	// 200 chat.completion demo-chat
	// "You said: \"Hello!\"." length
	// {PromptTokens:2 CompletionTokens:8 TotalTokens:10 PromptTokensDetails:<nil> CompletionTokensDetails:<nil>}
}

func ExampleNewHandler_streaming() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	h := chat.NewHandler(catalog, demo.NewTextBackend(demo.WithTokensPerChunk(4)).Chat())

	w := send(h, `{"model":"demo-chat","stream":true,"max_tokens":8,"stream_options":{"include_usage":true},`+
		`"messages":[{"role":"user","content":"Hello!"}]}`)
	fmt.Println(w.Header().Get("Content-Type"))
	for ev := range sse.Read(w.Body) {
		if ev.IsDone() {
			fmt.Println(ev.Data)
			break
		}
		var c chat.Chunk
		_ = json.Unmarshal([]byte(ev.Data), &c)
		if len(c.Choices) == 0 {
			fmt.Printf("usage %+v\n", *c.Usage)
			continue
		}
		ch := c.Choices[0]
		finish := "null"
		if ch.FinishReason != nil {
			finish = string(*ch.FinishReason)
		}
		fmt.Printf("%s role=%q content=%q finish_reason=%s\n", c.Object, ch.Delta.Role, ch.Delta.Content, finish)
	}
	// Output:
	// text/event-stream
	// chat.completion.chunk role="assistant" content="You said: \"" finish_reason=null
	// chat.completion.chunk role="" content="Hello!\"." finish_reason=null
	// chat.completion.chunk role="" content="" finish_reason=length
	// usage {PromptTokens:2 CompletionTokens:8 TotalTokens:10 PromptTokensDetails:<nil> CompletionTokensDetails:<nil>}
	// [DONE]
}

// echoBackend is a Backend of an embedder: it answers with the last
// message, upper-cased. The handler does the rest.
type echoBackend struct{}

func (echoBackend) Complete(_ context.Context, p *chat.Params) (*chat.Result, error) {
	last := p.Request.Messages[len(p.Request.Messages)-1].Content.String()
	res := &chat.Result{Usage: chat.Usage{PromptTokens: 1, CompletionTokens: 1}}
	for range p.Request.Choices() {
		res.Choices = append(res.Choices, chat.Output{Content: strings.ToUpper(last)})
	}
	return res, nil
}

func Example_backend() {
	catalog := models.NewMemoryCatalog(models.Model{ID: "echo", EndpointTypes: []models.EndpointType{models.Compat}})
	h := chat.NewHandler(catalog, echoBackend{}, endpoint.WithClock(func() time.Time { return time.Unix(1700000000, 0) }))

	w := send(h, `{"model":"echo","messages":[{"role":"user","content":"shout"}]}`)
	var c chat.Completion
	_ = json.Unmarshal(w.Body.Bytes(), &c)
	fmt.Println(*c.Choices[0].Message.Content, c.Choices[0].FinishReason, c.Usage.TotalTokens)

	// A backend that does not stream is streamed by the handler.
	w = send(h, `{"model":"echo","stream":true,"messages":[{"role":"user","content":"shout"}]}`)
	for ev := range sse.Read(w.Body) {
		fmt.Println(normalizeIDs(ev.Data))
	}
	// Output:
	// SHOUT stop 2
	// {"id":"chatcmpl-*","object":"chat.completion.chunk","created":1700000000,"model":"echo","choices":[{"index":0,"delta":{"role":"assistant","content":"SHOUT"},"finish_reason":null}]}
	// {"id":"chatcmpl-*","object":"chat.completion.chunk","created":1700000000,"model":"echo","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}
	// [DONE]
}

func ExampleWithClock() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	h := chat.NewHandler(catalog, demo.NewTextBackend().Chat(),
		endpoint.WithClock(func() time.Time { return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) }))

	w := send(h, `{"model":"demo-chat","messages":[{"role":"user","content":"When?"}]}`)
	var c chat.Completion
	_ = json.Unmarshal(w.Body.Bytes(), &c)
	fmt.Println(c.Created)
	// Output: 1735689600
}

func ExampleWithMaxRequestBytes() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	h := chat.NewHandler(catalog, demo.NewTextBackend().Chat(), endpoint.WithMaxRequestBytes(1<<10))

	w := send(h, `{"model":"demo-chat","messages":[{"role":"user","content":"`+strings.Repeat("a", 2000)+`"}]}`)
	fmt.Println(w.Code, w.Body.String())
	// Output:
	// 400 {"error":{"message":"request body is larger than the 1 KiB limit","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}
}

func ExampleWithAllowed() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	onlyChat := func(_ context.Context, id string) bool { return id == demo.ChatModel }
	h := chat.NewHandler(catalog, demo.NewTextBackend().Chat(), endpoint.WithAllowed(onlyChat))

	w := send(h, `{"model":"demo-reasoner","messages":[{"role":"user","content":"Hi"}]}`)
	fmt.Println(w.Code, w.Body.String())
	// Output:
	// 404 {"error":{"message":"The model \"demo-reasoner\" does not exist or you do not have access to it.","type":"invalid_request_error","param":"model","code":"model_not_found"}}
}

func ExampleWithValidator() {
	// Start from a validator that names fields by their JSON names, and
	// add a rule of your own: at most 4 choices.
	v := validation.New()
	v.RegisterStructValidation(func(sl validator.StructLevel) {
		req := sl.Current().Interface().(chat.Request)
		if req.N != nil && *req.N > 4 {
			sl.ReportError(req.N, "n", "N", "lte", "4")
		}
	}, chat.Request{})
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	h := chat.NewHandler(catalog, demo.NewTextBackend().Chat(), endpoint.WithValidator(v))

	w := send(h, `{"model":"demo-chat","n":8,"messages":[{"role":"user","content":"Hi"}]}`)
	fmt.Println(w.Code, w.Body.String())
	// Output:
	// 400 {"error":{"message":"n must be at most 4, got 8","type":"invalid_request_error","param":"n","code":"invalid_request_error"}}
}

// commentWatcher is a ResponseWriter that reports the first keep-alive
// comment written to it.
type commentWatcher struct {
	*httptest.ResponseRecorder
	once    sync.Once
	comment chan struct{}
}

func (w *commentWatcher) Write(b []byte) (int, error) {
	if strings.HasPrefix(string(b), ": keep-alive") {
		w.once.Do(func() { close(w.comment) })
	}
	return w.ResponseRecorder.Write(b)
}

// slowBackend waits for a signal before it answers.
type slowBackend struct{ ready <-chan struct{} }

func (b slowBackend) Complete(ctx context.Context, p *chat.Params) (*chat.Result, error) {
	<-b.ready
	return &chat.Result{Choices: []chat.Output{{Content: "finally"}}}, nil
}

func ExampleWithKeepAlive() {
	w := &commentWatcher{ResponseRecorder: httptest.NewRecorder(), comment: make(chan struct{})}
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	// The backend answers only once the stream has carried a comment.
	h := chat.NewHandler(catalog, slowBackend{ready: w.comment}, endpoint.WithKeepAlive(time.Millisecond))

	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"Hi"}]}`))
	h.ServeHTTP(w, r)
	lines := strings.Split(w.Body.String(), "\n")
	fmt.Println(lines[0])
	// Output: : keep-alive
}

// byModel is a chat backend that routes each request by its model: the
// kind of backend that wraps others and uses [chat.Deltas] to stream
// whatever it routes to, streaming or not.
type byModel struct {
	routes   map[string]chat.Backend
	fallback chat.Backend
}

func (b byModel) pick(model string) chat.Backend {
	if r, ok := b.routes[model]; ok {
		return r
	}
	return b.fallback
}

func (b byModel) Complete(ctx context.Context, p *chat.Params) (*chat.Result, error) {
	return b.pick(p.Request.Model).Complete(ctx, p)
}

func (b byModel) Stream(ctx context.Context, p *chat.Params) iter.Seq2[chat.Delta, error] {
	return chat.Deltas(ctx, b.pick(p.Request.Model), p)
}

// fixedBackend answers every request with the same text; it does not
// stream.
type fixedBackend struct{}

func (fixedBackend) Complete(context.Context, *chat.Params) (*chat.Result, error) {
	return &chat.Result{Choices: []chat.Output{{Content: "Hello from the fixed backend."}},
		Usage: chat.Usage{PromptTokens: 3, CompletionTokens: 6}}, nil
}

// A backend that does not stream is streamed in whole pieces by Deltas.
func ExampleDeltas() {
	b := byModel{routes: map[string]chat.Backend{"fixed": fixedBackend{}}, fallback: demo.NewTextBackend().Chat()}

	p := &chat.Params{Request: &chat.Request{Model: "fixed"}}
	for d, err := range b.Stream(context.Background(), p) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		if d.Usage != nil {
			fmt.Println("usage:", d.Usage.PromptTokens, d.Usage.CompletionTokens)
			continue
		}
		fmt.Printf("choice %d: %q finish=%s\n", d.Choice, d.Content, d.FinishReason)
	}
	// Output:
	// choice 0: "Hello from the fixed backend." finish=stop
	// usage: 3 6
}
