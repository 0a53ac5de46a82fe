package completions_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/demo"
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
	mux.Handle(completions.Pattern, completions.NewHandler(catalog, demo.NewTextBackend().Completions()))

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
	// {PromptTokens:6 CompletionTokens:18 TotalTokens:24 CompletionTokensDetails:<nil>}
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
