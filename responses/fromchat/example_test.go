package fromchat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/responses/fromchat"
	"github.com/gatewaykit/gatewaykit/sse"
)

// shout is an in-house chat backend: it answers the last message in
// capitals, and says how many messages it was given.
type shout struct{}

func (shout) Complete(_ context.Context, p *chat.Params) (*chat.Result, error) {
	msgs := p.Request.Messages
	text := fmt.Sprintf("%s (%d messages)", strings.ToUpper(msgs[len(msgs)-1].Content.String()), len(msgs))
	return &chat.Result{Choices: []chat.Output{{Content: text}}, Usage: chat.Usage{PromptTokens: len(msgs), CompletionTokens: 3}}, nil
}

// create posts body to POST /v1/responses on h, and decodes the response.
func create(h http.Handler, body string) *responses.Response {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/v1/responses", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(w, r)
	var resp responses.Response
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
		panic(err)
	}
	return &resp
}

// An in-house chat backend serves chat completions and, through the
// adapter, responses: the handler keeps the conversation, and the backend
// is given all of it.
func ExampleNew() {
	catalog := models.NewMemoryCatalog(models.Model{ID: "shout", EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse}})
	mux := http.NewServeMux()
	chat.Register(mux, chat.NewHandler(catalog, shout{}))
	responses.Register(mux, responses.NewHandler(catalog, fromchat.New(shout{})))

	first := create(mux, `{"model":"shout","input":"hello"}`)
	fmt.Println(first.Status, first.Output[0].Text(), first.Usage.TotalTokens)
	second := create(mux, `{"model":"shout","instructions":"Be loud.","previous_response_id":"`+first.ID+`","input":"again"}`)
	fmt.Println(second.Status, second.Output[0].Text())

	// A chat backend that does not stream is streamed too.
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/v1/responses", strings.NewReader(`{"model":"shout","stream":true,"input":"stream"}`))
	r.Header.Set("Content-Type", "application/json")
	mux.ServeHTTP(w, r)
	for ev := range sse.Read(w.Body) {
		if ev.IsDone() {
			fmt.Println("[DONE]")
			continue
		}
		var data struct {
			Delta string `json:"delta"`
		}
		_ = json.Unmarshal([]byte(ev.Data), &data)
		fmt.Println(strings.TrimSpace(ev.Type + " " + data.Delta))
	}
	// Output:
	// completed HELLO (1 messages) 4
	// completed AGAIN (4 messages)
	// response.created
	// response.in_progress
	// response.output_item.added
	// response.content_part.added
	// response.output_text.delta STREAM (1 messages)
	// response.output_text.done
	// response.content_part.done
	// response.output_item.done
	// response.completed
	// [DONE]
}

// ChatParams shows the chat request that a responses request amounts to.
func ExampleChatParams() {
	req := &responses.Request{}
	_ = json.Unmarshal([]byte(`{"model":"shout","instructions":"Be loud.","max_output_tokens":50,
		"input":[{"role":"user","content":"Weather?"},
		         {"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{}"},
		         {"type":"function_call_output","call_id":"call_1","output":"Sunny."}]}`), req)
	cp, err := fromchat.ChatParams(&responses.Params{Request: req})
	if err != nil {
		panic(err)
	}
	out, _ := json.Marshal(cp.Request)
	fmt.Println(string(out))

	_, err = fromchat.ChatParams(&responses.Params{Request: &responses.Request{Model: "shout", Input: responses.TextInput("Hi"),
		Tools: []responses.Tool{{Type: "web_search"}}}})
	fmt.Println(err)
	// Output:
	// {"model":"shout","messages":[{"role":"system","content":"Be loud."},{"role":"user","content":"Weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},{"role":"tool","content":"Sunny.","tool_call_id":"call_1"}],"max_completion_tokens":50}
	// 400 invalid_request_error: tools[0]: "web_search" tools are not supported by this model (param tools[0].type)
}
