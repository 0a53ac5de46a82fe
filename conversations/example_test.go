package conversations_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gatewaykit/gatewaykit/conversations"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/responses"
)

// send sends a JSON request to h and returns the response.
func send(h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(w, r)
	return w
}

// A conversation created with an item, continued by a response, and
// listed: the response saw the item, and the conversation holds the
// response's input and output after it.
func ExampleNewHandler() {
	store := conversations.NewMemoryStore(nil)
	mux := http.NewServeMux()
	conversations.Register(mux, conversations.NewHandler(store))
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	responses.Register(mux, responses.NewHandler(catalog, demo.NewTextBackend().Responses(), responses.WithConversations(store)))

	var conv conversations.Conversation
	w := send(mux, "POST", "/v1/conversations", `{"items":[{"role":"user","content":"My name is Ada."}],"metadata":{"topic":"names"}}`)
	_ = json.Unmarshal(w.Body.Bytes(), &conv)
	fmt.Println(w.Code, conv.Object, conv.Metadata["topic"])

	var resp responses.Response
	w = send(mux, "POST", "/v1/responses", `{"model":"demo-chat","input":"What is my name?","max_output_tokens":17,"conversation":"`+conv.ID+`"}`)
	_ = json.Unmarshal(w.Body.Bytes(), &resp)
	fmt.Println(w.Code, resp.Conversation.ID == conv.ID)
	fmt.Printf("%q\n", resp.Output[0].Text())

	var list conversations.ItemList
	w = send(mux, "GET", "/v1/conversations/"+conv.ID+"/items?order=asc", "")
	_ = json.Unmarshal(w.Body.Bytes(), &list)
	for _, it := range list.Data {
		fmt.Printf("%s %s: %.20q\n", it.Type, it.Role, it.Content.String())
	}
	// Output:
	// 200 conversation names
	// 200 true
	// "Earlier you said: \"My name is Ada.\" (1 earlier message)."
	// message user: "My name is Ada."
	// message user: "What is my name?"
	// message assistant: "Earlier you said: \"M"
}
