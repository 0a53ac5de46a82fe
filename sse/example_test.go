package sse_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/sse"
)

// A chat completions handler streams its chunks and ends with [DONE].
func ExampleStart() {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Validate the request and start the backend call first: until the
		// first event, errors can still be JSON with a real status.
		s, err := sse.Start(w, r)
		if err != nil {
			apierrors.Write(w, r, err)
			return
		}
		defer s.Close()
		for _, text := range []string{"Hello", " world"} {
			chunk := map[string]any{
				"object":  "chat.completion.chunk",
				"choices": []any{map[string]any{"index": 0, "delta": map[string]string{"content": text}}},
			}
			if err := s.Send(chunk); err != nil {
				return // the client has gone
			}
		}
		_ = s.Done()
	})

	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil))
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("Cache-Control"))
	fmt.Print(rec.Body.String())
	// Output:
	// 200 text/event-stream no-cache
	// data: {"choices":[{"delta":{"content":"Hello"},"index":0}],"object":"chat.completion.chunk"}
	//
	// data: {"choices":[{"delta":{"content":" world"},"index":0}],"object":"chat.completion.chunk"}
	//
	// data: [DONE]
}

// Responses streams name each event after its type.
func ExampleStream_SendJSON() {
	rec := httptest.NewRecorder()
	s, _ := sse.Start(rec, httptest.NewRequest(http.MethodPost, "/v1/responses", nil))
	defer s.Close()

	_ = s.SendJSON("response.output_text.delta", map[string]any{
		"type": "response.output_text.delta", "sequence_number": 3, "delta": "Hi",
	})
	fmt.Print(rec.Body.String())
	// Output:
	// event: response.output_text.delta
	// data: {"delta":"Hi","sequence_number":3,"type":"response.output_text.delta"}
}

// After the first event, an error becomes an error event and the stream
// ends without [DONE]. Errors that are not API errors never leak their text.
func ExampleStream_Error() {
	rec := httptest.NewRecorder()
	s, _ := sse.Start(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil))
	defer s.Close()

	_ = s.Send(map[string]string{"object": "chat.completion.chunk"})
	_ = s.Error(errors.New("redis: connection pool exhausted"))
	fmt.Print(rec.Body.String())
	// Output:
	// data: {"object":"chat.completion.chunk"}
	//
	// data: {"error":{"message":"internal server error","type":"server_error","param":null,"code":"internal_server_error"}}
}

// Before the first event, an error is still a JSON error with its status.
func ExampleStream_Error_beforeFirstEvent() {
	rec := httptest.NewRecorder()
	s, _ := sse.Start(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil))
	defer s.Close()

	_ = s.Error(apierrors.ModelNotFound("gpt-nope"))
	fmt.Println(s.Started(), rec.Code, rec.Header().Get("Content-Type"))
	fmt.Print(rec.Body.String())
	// Output:
	// false 404 application/json
	// {"error":{"message":"The model \"gpt-nope\" does not exist or you do not have access to it.","type":"invalid_request_error","param":"model","code":"model_not_found"}}
}

// A relay passes the events of an upstream stream through unchanged.
func ExampleStream_SendEvent() {
	upstream := strings.NewReader("data: {\"id\":\"up-1\"}\n\n: keep-alive\n\ndata: [DONE]\n\n")

	rec := httptest.NewRecorder()
	s, _ := sse.Start(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil))
	defer s.Close()
	for ev, err := range sse.Read(upstream) {
		if err != nil {
			_ = s.Error(apierrors.BadGateway("upstream stream failed", err))
			return
		}
		if err := s.SendEvent(ev); err != nil {
			return
		}
	}
	fmt.Print(rec.Body.String())
	// Output:
	// data: {"id":"up-1"}
	//
	// data: [DONE]
}

func ExampleRead() {
	stream := "event: response.created\n" +
		"data: {\"type\":\"response.created\"}\n\n" +
		": keep-alive\n\n" +
		"data: {\"choices\":[]}\n\n" +
		"data: [DONE]\n\n"
	for ev, err := range sse.Read(strings.NewReader(stream)) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		if ev.IsDone() {
			fmt.Println("done")
			break
		}
		fmt.Printf("%q %s\n", ev.Type, ev.Data)
	}
	// Output:
	// "response.created" {"type":"response.created"}
	// "" {"choices":[]}
	// done
}

// While a backend is slow to its first token, keep-alive comments keep
// proxies from cutting the connection; clients and Read skip them.
func ExampleWithKeepAlive() {
	rec := &notifyingRecorder{ResponseRecorder: httptest.NewRecorder(), wrote: make(chan struct{})}
	s, _ := sse.Start(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil),
		sse.WithKeepAlive(time.Millisecond))
	defer s.Close()

	<-rec.wrote // the backend's first token arrives after a silence
	_ = s.Send(map[string]string{"content": "Hi"})
	_ = s.Done()
	s.Close()

	fmt.Println(strings.HasPrefix(rec.Body.String(), ": keep-alive\n\n"))
	for ev, err := range sse.Read(rec.Body) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(ev.Data)
	}
	// Output:
	// true
	// {"content":"Hi"}
	// [DONE]
}

// notifyingRecorder closes wrote after its first write.
type notifyingRecorder struct {
	*httptest.ResponseRecorder
	once  sync.Once
	wrote chan struct{}
}

func (n *notifyingRecorder) Write(p []byte) (int, error) {
	defer n.once.Do(func() { close(n.wrote) })
	return n.ResponseRecorder.Write(p)
}
