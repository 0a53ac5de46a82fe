package messages_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/messages"
	"github.com/gatewaykit/gatewaykit/models"
)

// The messages format over the demo's chat backend: a request with a
// system prompt and a token cap, answered as a message.
func ExampleNewHandler() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	mux := http.NewServeMux()
	messages.Register(mux, messages.NewHandler(catalog, demo.NewTextBackend().Chat()))

	body := `{"model":"demo-chat","max_tokens":8,"system":"Be brief.","messages":[{"role":"user","content":"hello"}]}`
	r := httptest.NewRequest(http.MethodPost, "/v1/messages", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)

	var reply messages.Reply
	if err := json.Unmarshal(w.Body.Bytes(), &reply); err != nil {
		panic(err)
	}
	fmt.Println(w.Code, reply.Type, reply.Role, reply.Model)
	fmt.Printf("%s: %q\n", reply.Content[0].Type, reply.Content[0].Text)
	fmt.Println(reply.StopReason, reply.Usage.InputTokens, reply.Usage.OutputTokens)
	// Output:
	// 200 message assistant demo-chat
	// text: "You said: \"hello\". This"
	// max_tokens 4 8
}

// A stream of the format: one named event per line pair, in the
// format's order.
func ExampleNewHandler_stream() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	h := messages.NewHandler(catalog, demo.NewTextBackend(demo.WithTokensPerChunk(4)).Chat())

	body := `{"model":"demo-chat","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hello"}]}`
	r := httptest.NewRequest(http.MethodPost, "/v1/messages", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)

	for line := range strings.Lines(w.Body.String()) {
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			fmt.Print(name)
		}
	}
	// Output:
	// message_start
	// content_block_start
	// ping
	// content_block_delta
	// content_block_delta
	// content_block_stop
	// message_delta
	// message_stop
}
