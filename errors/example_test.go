package errors_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

func ExampleWrite() {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)

	apierrors.Write(rec, req, apierrors.InvalidRequest("temperature", "temperature must be between 0 and 2"))

	fmt.Println(rec.Code)
	fmt.Print(rec.Body.String())
	// Output:
	// 400
	// {"error":{"message":"temperature must be between 0 and 2","type":"invalid_request_error","param":"temperature","code":"invalid_request_error"}}
}

func ExampleRenderer_flat() {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/v1/videos", nil)

	rd := apierrors.Renderer{Shape: apierrors.Flat}
	rd.Write(rec, req, apierrors.InvalidRequest("seconds", "seconds must be one of 4, 8, 12, 16, 20"))

	fmt.Println(rec.Code)
	fmt.Print(rec.Body.String())
	// Output:
	// 400
	// {"code":"invalid_request","message":"seconds must be one of 4, 8, 12, 16, 20","error":{"message":"seconds must be one of 4, 8, 12, 16, 20","type":"invalid_request_error","param":"seconds","code":"invalid_request"}}
}

func ExampleRenderer_content() {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/v1/videos/task_1/content?variant=audio", nil)

	rd := apierrors.Renderer{Shape: apierrors.Content}
	rd.Write(rec, req, apierrors.InvalidRequest("variant", `variant must be "video" or "thumbnail", got "audio"`))

	fmt.Println(rec.Code)
	fmt.Print(rec.Body.String())
	// Output:
	// 400
	// {"error":{"message":"variant must be \"video\" or \"thumbnail\", got \"audio\"","type":"invalid_request_error","code":"invalid_request_error"}}
}

func ExampleFrom() {
	// Errors that are not API errors never reach the client as they are.
	e := apierrors.From(fmt.Errorf("open /var/lib/keys.db: permission denied"))
	fmt.Println(e.Status, e.Code, e.Message)
	// Output:
	// 500 internal_server_error internal server error
}

func ExampleRenderer_messages() {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/v1/messages", nil)

	rd := apierrors.Renderer{Shape: apierrors.Messages}
	rd.Write(rec, req, apierrors.ModelNotFound("claude-x"))

	fmt.Println(rec.Code)
	fmt.Print(rec.Body.String())
	// Output:
	// 404
	// {"type":"error","error":{"type":"not_found_error","message":"The model \"claude-x\" does not exist or you do not have access to it."}}
}

func ExampleRenderer_google() {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/v1beta/models/gemini-x:generateContent", nil)

	rd := apierrors.Renderer{Shape: apierrors.Google}
	rd.Write(rec, req, apierrors.InvalidAPIKey("Incorrect API key provided."))

	fmt.Println(rec.Code)
	fmt.Print(rec.Body.String())
	// Output:
	// 401
	// {"error":{"code":401,"message":"Incorrect API key provided.","status":"UNAUTHENTICATED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_API_KEY","domain":"gatewaykit"}]}}
}

func ExampleFromDependency() {
	// A store that cannot be reached, in a handler: after the sentinels
	// of its contract (not found…), the rest is an outage.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/v1/videos/task_1", nil)
	err := fmt.Errorf("videos: store: %w", errors.New("dial tcp 10.0.0.5:5432: connect: connection refused"))

	apierrors.Write(rec, req, apierrors.FromDependency(req.Context(), err))

	fmt.Println(rec.Code, rec.Header().Get("Retry-After"))
	fmt.Print(rec.Body.String())
	// Output:
	// 503 2
	// {"error":{"message":"The gateway cannot reach a service it depends on (its database or rate limiter) right now. Please retry shortly.","type":"server_error","param":null,"code":"service_unavailable"}}
}
