package completions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/go-playground/validator/v10"

	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/internal/validation"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/sse"
)

func send(h http.Handler, body string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/v1/completions", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(w, r)
	return w
}

func ExampleNewHandler() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	mux := http.NewServeMux()
	completions.Register(mux, completions.NewHandler(catalog, demo.NewTextBackend().Completions()))

	w := send(mux, `{"model":"demo-chat","prompt":["Roses are red","Violets are blue"],"max_tokens":9}`)
	var c completions.Completion
	_ = json.Unmarshal(w.Body.Bytes(), &c)
	fmt.Println(w.Code, c.Object, c.Model)
	for _, ch := range c.Choices {
		fmt.Printf("%d %q %s\n", ch.Index, ch.Text, ch.FinishReason)
	}
	fmt.Printf("%+v\n", c.Usage)
	// Output:
	// 200 text_completion demo-chat
	// 0 "You said: \"Roses are red\"." length
	// 1 "You said: \"Violets are blue\"." length
	// {PromptTokens:6 CompletionTokens:18 TotalTokens:24 PromptTokensDetails:<nil> CompletionTokensDetails:<nil>}
}

func ExampleNewHandler_streaming() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	h := completions.NewHandler(catalog, demo.NewTextBackend(demo.WithTokensPerChunk(5)).Completions())

	w := send(h, `{"model":"demo-chat","prompt":"Roses are red","stream":true,"max_tokens":9}`)
	for ev := range sse.Read(w.Body) {
		if ev.IsDone() {
			fmt.Println(ev.Data)
			break
		}
		var c completions.Chunk
		_ = json.Unmarshal([]byte(ev.Data), &c)
		ch := c.Choices[0]
		finish := "null"
		if ch.FinishReason != nil {
			finish = string(*ch.FinishReason)
		}
		fmt.Printf("%s text=%q finish_reason=%s\n", c.Object, ch.Text, finish)
	}
	// Output:
	// text_completion text="You said: \"Roses" finish_reason=null
	// text_completion text=" are red\"." finish_reason=length
	// [DONE]
}

func ExampleWithClock() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	h := completions.NewHandler(catalog, demo.NewTextBackend().Completions(),
		endpoint.WithClock(func() time.Time { return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) }))

	w := send(h, `{"model":"demo-chat","prompt":"When?"}`)
	var c completions.Completion
	_ = json.Unmarshal(w.Body.Bytes(), &c)
	fmt.Println(c.Created)
	// Output: 1735689600
}

func ExampleWithMaxRequestBytes() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	h := completions.NewHandler(catalog, demo.NewTextBackend().Completions(), endpoint.WithMaxRequestBytes(1<<10))

	w := send(h, `{"model":"demo-chat","prompt":"`+strings.Repeat("a", 2000)+`"}`)
	fmt.Println(w.Code, w.Body.String())
	// Output:
	// 400 {"error":{"message":"request body is larger than the 1 KiB limit","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}
}

func ExampleWithAllowed() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	onlyChat := func(_ context.Context, id string) bool { return id == demo.ChatModel }
	h := completions.NewHandler(catalog, demo.NewTextBackend().Completions(), endpoint.WithAllowed(onlyChat))

	w := send(h, `{"model":"demo-reasoner","prompt":"Hi"}`)
	fmt.Println(w.Code, w.Body.String())
	// Output:
	// 404 {"error":{"message":"The model \"demo-reasoner\" does not exist or you do not have access to it.","type":"invalid_request_error","param":"model","code":"model_not_found"}}
}

func ExampleWithValidator() {
	// Start from a validator that names fields by their JSON names, and
	// add a rule of your own: at most 2 prompts.
	v := validation.New()
	v.RegisterStructValidation(func(sl validator.StructLevel) {
		req := sl.Current().Interface().(completions.Request)
		if len(req.Prompt) > 2 {
			sl.ReportError(req.Prompt, "prompt", "Prompt", "max", "2")
		}
	}, completions.Request{})
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	h := completions.NewHandler(catalog, demo.NewTextBackend().Completions(), endpoint.WithValidator(v))

	w := send(h, `{"model":"demo-chat","prompt":["a","b","c"]}`)
	fmt.Println(w.Code, w.Body.String())
	// Output:
	// 400 {"error":{"message":"prompt must hold at most 2 items","type":"invalid_request_error","param":"prompt","code":"invalid_request_error"}}
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

// slowBackend answers once it is told to.
type slowBackend struct{ ready <-chan struct{} }

func (b slowBackend) Complete(_ context.Context, _ *completions.Params) (*completions.Result, error) {
	<-b.ready
	return &completions.Result{Choices: []completions.Output{{Text: "finally"}}}, nil
}

func ExampleWithKeepAlive() {
	w := &commentWatcher{ResponseRecorder: httptest.NewRecorder(), comment: make(chan struct{})}
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	// The backend answers only once the stream has carried a comment.
	h := completions.NewHandler(catalog, slowBackend{ready: w.comment}, endpoint.WithKeepAlive(time.Millisecond))

	r := httptest.NewRequest(http.MethodPost, "/v1/completions",
		strings.NewReader(`{"model":"demo-chat","stream":true,"prompt":"Hi"}`))
	h.ServeHTTP(w, r)
	fmt.Println(strings.Split(w.Body.String(), "\n")[0])
	// Output: : keep-alive
}
