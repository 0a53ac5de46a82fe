package responses_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/sse"
)

// send sends a request to h and returns the response.
func send(h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(w, r)
	return w
}

func ExampleNewHandler() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	mux := http.NewServeMux()
	responses.Register(mux, responses.NewHandler(catalog, demo.NewTextBackend().Responses()))

	w := send(mux, "POST", "/v1/responses", `{"model":"demo-chat","input":"Hello!","max_output_tokens":8}`)
	var resp responses.Response
	_ = json.Unmarshal(w.Body.Bytes(), &resp)
	fmt.Println(w.Code, resp.Object, resp.Model, resp.Status, resp.IncompleteDetails.Reason)
	fmt.Printf("%s %q\n", resp.Output[0].Type, resp.Output[0].Text())
	fmt.Printf("%d+%d=%d tokens\n", resp.Usage.InputTokens, resp.Usage.OutputTokens, resp.Usage.TotalTokens)
	// Output:
	// 200 response demo-chat incomplete max_output_tokens
	// message "You said: \"Hello!\"."
	// 2+8=10 tokens
}

func ExampleNewHandler_streaming() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	h := responses.NewHandler(catalog, demo.NewTextBackend(demo.WithTokensPerChunk(4)).Responses())

	w := send(h, "POST", "/v1/responses", `{"model":"demo-chat","stream":true,"max_output_tokens":8,"input":"Hello!"}`)
	fmt.Println(w.Header().Get("Content-Type"))
	for ev := range sse.Read(w.Body) {
		if ev.IsDone() {
			fmt.Println("[DONE]")
			continue
		}
		var data struct {
			Sequence int                 `json:"sequence_number"`
			Delta    string              `json:"delta"`
			Response *responses.Response `json:"response"`
		}
		_ = json.Unmarshal([]byte(ev.Data), &data)
		switch {
		case ev.Type == responses.EventOutputTextDelta:
			fmt.Printf("%d %s %q\n", data.Sequence, ev.Type, data.Delta)
		case data.Response != nil && data.Response.Usage != nil:
			fmt.Printf("%d %s %s, %d tokens\n", data.Sequence, ev.Type, data.Response.Status, data.Response.Usage.TotalTokens)
		default:
			fmt.Println(data.Sequence, ev.Type)
		}
	}
	// Output:
	// text/event-stream
	// 0 response.created
	// 1 response.in_progress
	// 2 response.output_item.added
	// 3 response.content_part.added
	// 4 response.output_text.delta "You said: \""
	// 5 response.output_text.delta "Hello!\"."
	// 6 response.output_text.done
	// 7 response.content_part.done
	// 8 response.output_item.done
	// 9 response.incomplete incomplete, 10 tokens
	// [DONE]
}

func ExampleNewHandler_previousResponseID() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	h := responses.NewHandler(catalog, demo.NewTextBackend().Responses())

	var first, second responses.Response
	w := send(h, "POST", "/v1/responses", `{"model":"demo-chat","input":"My name is Ada."}`)
	_ = json.Unmarshal(w.Body.Bytes(), &first)
	w = send(h, "POST", "/v1/responses", `{"model":"demo-chat","max_output_tokens":27,"input":"Who am I?","previous_response_id":"`+first.ID+`"}`)
	_ = json.Unmarshal(w.Body.Bytes(), &second)
	fmt.Println(*second.PreviousResponseID == first.ID)
	fmt.Println(second.Output[0].Text())

	w = send(h, "POST", "/v1/responses", `{"model":"demo-chat","input":"Hi","previous_response_id":"resp_unknown"}`)
	fmt.Println(w.Code, w.Body.String())
	// Output:
	// true
	// Earlier you said: "My name is Ada." (1 earlier message). You said: "Who am I?".
	// 400 {"error":{"message":"Previous response with id \"resp_unknown\" not found.","type":"invalid_request_error","param":"previous_response_id","code":"invalid_request_error"}}
}

func ExampleNewHandler_functionCall() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	h := responses.NewHandler(catalog, demo.NewTextBackend().Responses())
	const tools = `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]`

	var call responses.Response
	w := send(h, "POST", "/v1/responses", `{"model":"demo-chat","input":"Paris","tool_choice":"required",`+tools+`}`)
	_ = json.Unmarshal(w.Body.Bytes(), &call)
	fc := call.Output[0]
	fmt.Println(fc.Type, fc.Name, fc.Arguments)

	var final responses.Response
	w = send(h, "POST", "/v1/responses", `{"model":"demo-chat","previous_response_id":"`+call.ID+`",`+tools+`,`+
		`"input":[{"type":"function_call_output","call_id":"`+fc.CallID+`","output":"18 C, sunny"}],"max_output_tokens":24}`)
	_ = json.Unmarshal(w.Body.Bytes(), &final)
	fmt.Println(final.Output[0].Text())
	// Output:
	// function_call get_weather {"city":"Paris"}
	// Earlier you said: "Paris" (1 earlier message). The tool returned: "18 C, sunny".
}

func ExampleNewHandler_compact() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	h := responses.NewHandler(catalog, demo.NewTextBackend().Responses())

	w := send(h, "POST", "/v1/responses/compact", `{"model":"demo-chat","input":[`+
		`{"role":"user","content":"First question."},`+
		`{"role":"assistant","content":[{"type":"output_text","text":"First answer."}]},`+
		`{"role":"user","content":"Second question."}]}`)
	var c responses.CompactedResponse
	_ = json.Unmarshal(w.Body.Bytes(), &c)
	fmt.Println(w.Code, c.Object)
	for _, it := range c.Output {
		fmt.Println(it.Type, it.Role, len(it.EncryptedContent) > 0)
	}
	// Output:
	// 200 response.compaction
	// message user false
	// message user false
	// compaction  true
}

func ExampleWithStore() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	// One store for two handlers (two gateway instances, say), keeping the
	// 1000 most recent responses for a day.
	store := responses.NewMemoryStore(&responses.MemoryStoreOptions{MaxResponses: 1000, MaxAge: 24 * time.Hour})
	a := responses.NewHandler(catalog, demo.NewTextBackend().Responses(), responses.WithStore(store))
	b := responses.NewHandler(catalog, demo.NewTextBackend().Responses(), responses.WithStore(store))

	var resp responses.Response
	_ = json.Unmarshal(send(a, "POST", "/v1/responses", `{"model":"demo-chat","input":"Hi"}`).Body.Bytes(), &resp)
	fmt.Println(send(b, "GET", "/v1/responses/"+resp.ID, "").Code, store.Len())
	fmt.Println(send(b, "DELETE", "/v1/responses/"+resp.ID, "").Code, store.Len())
	fmt.Println(send(a, "GET", "/v1/responses/"+resp.ID, "").Code)
	// Output:
	// 200 1
	// 200 0
	// 404
}

func ExampleWithOwner() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	// Scope stored responses by API key rather than by account.
	h := responses.NewHandler(catalog, demo.NewTextBackend().Responses(), responses.WithOwner(auth.KeyOwner))
	as := func(keyID, method, path, body string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r = r.WithContext(auth.WithPrincipal(r.Context(), &auth.Principal{KeyID: keyID, Owner: "acme"}))
		h.ServeHTTP(w, r)
		return w
	}
	var resp responses.Response
	_ = json.Unmarshal(as("key_1", "POST", "/v1/responses", `{"model":"demo-chat","input":"Hi"}`).Body.Bytes(), &resp)
	fmt.Println(as("key_1", "GET", "/v1/responses/"+resp.ID, "").Code)
	fmt.Println(as("key_2", "GET", "/v1/responses/"+resp.ID, "").Code, "(same account, another key)")
	// Output:
	// 200
	// 404 (same account, another key)
}

func ExampleWithClock() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	clock := func() time.Time { return time.Unix(1700000000, 0) }
	h := responses.NewHandler(catalog, demo.NewTextBackend().Responses(), endpoint.WithClock(clock))

	var resp responses.Response
	_ = json.Unmarshal(send(h, "POST", "/v1/responses", `{"model":"demo-chat","input":"Hi"}`).Body.Bytes(), &resp)
	fmt.Println(resp.CreatedAt, *resp.CompletedAt)
	// Output:
	// 1700000000 1700000000
}

func ExampleWithMaxRequestBytes() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	h := responses.NewHandler(catalog, demo.NewTextBackend().Responses(), endpoint.WithMaxRequestBytes(64))

	w := send(h, "POST", "/v1/responses", `{"model":"demo-chat","input":"`+strings.Repeat("a", 64)+`"}`)
	fmt.Println(w.Code, w.Body.String())
	// Output:
	// 400 {"error":{"message":"request body is larger than the 64 bytes limit","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}
}

func ExampleWithAllowed() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	onlyChat := func(_ context.Context, id string) bool { return id == demo.ChatModel }
	h := responses.NewHandler(catalog, demo.NewTextBackend().Responses(), endpoint.WithAllowed(onlyChat))

	w := send(h, "POST", "/v1/responses", `{"model":"demo-reasoner","input":"Hi"}`)
	fmt.Println(w.Code, w.Body.String())
	// Output:
	// 404 {"error":{"message":"The model \"demo-reasoner\" does not exist or you do not have access to it.","type":"invalid_request_error","param":"model","code":"model_not_found"}}
}

func ExampleWithKeepAlive() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	// A backend slow to its first token: a keep-alive comment bridges the
	// silence.
	slow := demo.NewTextBackend(demo.WithChunkDelay(200*time.Millisecond), demo.WithTokensPerChunk(64))
	h := responses.NewHandler(catalog, slow.Responses(), endpoint.WithKeepAlive(5*time.Millisecond))

	w := send(h, "POST", "/v1/responses", `{"model":"demo-chat","stream":true,"input":"Hi"}`)
	fmt.Println(strings.HasPrefix(w.Body.String(), ": keep-alive\n\n"))
	// Output:
	// true
}

// A background response: answered at once, queued; the Background's
// workers run it; Shutdown waits for the running ones.
func ExampleNewBackground() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	bg := responses.NewBackground(responses.NewMemoryRunStore())
	mux := http.NewServeMux()
	responses.Register(mux, responses.NewHandler(catalog, demo.NewTextBackend().Responses(), responses.WithBackground(bg)))

	w := send(mux, "POST", "/v1/responses", `{"model":"demo-chat","input":"Hello!","max_output_tokens":8,"background":true}`)
	var resp responses.Response
	_ = json.Unmarshal(w.Body.Bytes(), &resp)
	fmt.Println(w.Code, resp.Status, *resp.Background)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = bg.Run(ctx) }()
	bg.Wake()
	for resp.Status == responses.StatusQueued || resp.Status == responses.StatusInProgress {
		time.Sleep(time.Millisecond) // poll
		_ = json.Unmarshal(send(mux, "GET", "/v1/responses/"+resp.ID, "").Body.Bytes(), &resp)
	}
	_ = bg.Shutdown(context.Background())
	fmt.Println(resp.Status, resp.IncompleteDetails.Reason)
	// Output:
	// 200 queued true
	// incomplete max_output_tokens
}
