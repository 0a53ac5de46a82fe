package router_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/router"
)

// shout is an embedder's own chat backend: it answers with the last
// message in capitals.
type shout struct{}

func (shout) Complete(_ context.Context, p *chat.Params) (*chat.Result, error) {
	last := p.Request.Messages[len(p.Request.Messages)-1].Content.String()
	return &chat.Result{Choices: []chat.Output{{Content: strings.ToUpper(last)}}}, nil
}

// ExampleNew routes an embedder's own model to its backend and the
// demo's models to the demo, with one catalogue for /v1/models and the
// chat handler. (A relay's backends take a route the same way.)
func ExampleNew() {
	rt, err := router.New(
		router.Route{Models: []models.Model{{ID: "acme-shout", EndpointTypes: []models.EndpointType{models.Compat}}}, Chat: shout{}},
		router.Route{Models: demo.TextModels(), Chat: demo.NewTextBackend().Chat()},
	)
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	models.Register(mux, models.NewHandler(rt.Catalog()))
	chat.Register(mux, chat.NewHandler(rt.Catalog(), rt.Chat()))

	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v1/models", nil))
	var list models.OpenAIList
	_ = json.Unmarshal(w.Body.Bytes(), &list)
	for _, m := range list.Data {
		fmt.Println(m.ID)
	}
	for _, model := range []string{"acme-shout", "demo-chat"} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions",
			strings.NewReader(`{"model":"`+model+`","max_tokens":8,"messages":[{"role":"user","content":"Hello!"}]}`))
		r.Header.Set("Content-Type", "application/json")
		mux.ServeHTTP(w, r)
		var c chat.Completion
		_ = json.Unmarshal(w.Body.Bytes(), &c)
		fmt.Printf("%s: %q\n", c.Model, *c.Choices[0].Message.Content)
	}
	// Output:
	// acme-shout
	// demo-chat
	// demo-reasoner
	// demo-instruct
	// acme-shout: "HELLO!"
	// demo-chat: "You said: \"Hello!\"."
}
