package models_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
)

func exampleCatalog() *models.MemoryCatalog {
	return models.NewMemoryCatalog(
		models.Model{
			ID:            "chat-small",
			OwnedBy:       "gatewaykit",
			Created:       1700000000,
			EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse},
			DisplayName:   "Chat Small",
		},
		models.Model{
			ID:            "video-1",
			OwnedBy:       "vendor",
			Created:       1720000000,
			EndpointTypes: []models.EndpointType{models.CompatVideo},
			Video: &models.VideoCapabilities{
				Seconds:      models.FirstKindSeconds(),
				Sizes:        []string{"1280x720"},
				SizeRequired: true,
			},
		},
	)
}

// get serves one request and prints the status and body.
func get(h http.Handler, target string, header http.Header) {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for k, vs := range header {
		req.Header[k] = vs
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	fmt.Print(rec.Code, " ", rec.Body.String())
}

func ExampleNewHandler() {
	mux := http.NewServeMux()
	models.Register(mux, models.NewHandler(exampleCatalog()))

	get(mux, "/v1/models", http.Header{"Authorization": {"Bearer sk-example"}})
	get(mux, "/v1/models/video-1", nil)
	get(mux, "/v1/models/no-such-model", nil)
	// Output:
	// 200 {"object":"list","data":[{"id":"chat-small","object":"model","created":1700000000,"owned_by":"gatewaykit","supported_endpoint_types":["compat","compat-response"]},{"id":"video-1","object":"model","created":1720000000,"owned_by":"vendor","supported_endpoint_types":["compat-video"],"video":{"seconds":[4,8,12,16,20],"sizes":["1280x720"],"size_required":true}}]}
	// 200 {"id":"video-1","object":"model","created":1720000000,"owned_by":"vendor","supported_endpoint_types":["compat-video"],"video":{"seconds":[4,8,12,16,20],"sizes":["1280x720"],"size_required":true}}
	// 404 {"error":{"message":"The model \"no-such-model\" does not exist or you do not have access to it.","type":"invalid_request_error","param":"model","code":"model_not_found"}}
}

// The headers x-api-key and anthropic-version select the messages-format
// list.
func ExampleNewHandler_anthropic() {
	mux := http.NewServeMux()
	models.Register(mux, models.NewHandler(exampleCatalog()))

	get(mux, "/v1/models?limit=1", http.Header{
		"X-Api-Key":         {"sk-example"},
		"Anthropic-Version": {"2023-06-01"},
	})
	// Output:
	// 200 {"data":[{"type":"model","id":"chat-small","display_name":"Chat Small","created_at":"2023-11-14T22:13:20Z"}],"has_more":true,"first_id":"chat-small","last_id":"chat-small"}
}

// The header x-goog-api-key or the query parameter key selects the
// Gemini-style list on /v1/models; /v1beta/models always answers in it.
func ExampleNewHandler_gemini() {
	mux := http.NewServeMux()
	models.Register(mux, models.NewHandler(exampleCatalog()))

	get(mux, "/v1/models?key=sk-example", nil)
	get(mux, "/v1beta/models/chat-small", nil)
	// Output:
	// 200 {"models":[{"name":"models/chat-small","baseModelId":"chat-small","version":"1","displayName":"Chat Small","supportedGenerationMethods":["generateContent","streamGenerateContent"]},{"name":"models/video-1","baseModelId":"video-1","version":"1","displayName":"video-1","supportedGenerationMethods":[]}]}
	// 200 {"name":"models/chat-small","baseModelId":"chat-small","version":"1","displayName":"Chat Small","supportedGenerationMethods":["generateContent","streamGenerateContent"]}
}

// WithAllowed hides the models a caller may not use. The AllowFunc reads the
// request context, where an authentication middleware leaves the caller.
func ExampleWithAllowed() {
	type callerKey struct{}
	allow := func(ctx context.Context, id string) bool {
		caller, _ := ctx.Value(callerKey{}).(string)
		return caller == "admin" || id == "chat-small"
	}
	h := models.NewHandler(exampleCatalog(), models.WithAllowed(allow))

	auth := func(caller string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, caller)))
		})
	}
	get(auth("user"), "/v1/models", nil)
	get(auth("user"), "/v1/models/video-1", nil)
	// Output:
	// 200 {"object":"list","data":[{"id":"chat-small","object":"model","created":1700000000,"owned_by":"gatewaykit","supported_endpoint_types":["compat","compat-response"]}]}
	// 404 {"error":{"message":"The model \"video-1\" does not exist or you do not have access to it.","type":"invalid_request_error","param":"model","code":"model_not_found"}}
}

// A generation handler checks the request's model before calling its
// backend, and renders the error, if any, with apierrors.
func ExampleRequire() {
	catalog := exampleCatalog()
	chat := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, err := models.Require(r.Context(), catalog, r.URL.Query().Get("model"), models.Compat, nil)
		if err != nil {
			apierrors.Renderer{}.Write(w, r, err)
			return
		}
		fmt.Fprintf(w, "calling the backend with %s\n", m.ID)
	})

	for _, model := range []string{"chat-small", "", "no-such-model", "video-1"} {
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions?model="+model, nil)
		rec := httptest.NewRecorder()
		chat.ServeHTTP(rec, req)
		fmt.Print(rec.Code, " ", rec.Body.String())
	}
	// Output:
	// 200 calling the backend with chat-small
	// 400 {"error":{"message":"model is required","type":"invalid_request_error","param":"model","code":"invalid_request_error"}}
	// 404 {"error":{"message":"The model \"no-such-model\" does not exist or you do not have access to it.","type":"invalid_request_error","param":"model","code":"model_not_found"}}
	// 400 {"error":{"message":"model \"video-1\" does not support endpoint type \"compat\" (supported_endpoint_types: compat-video)","type":"invalid_request_error","param":"model","code":"invalid_request_error"}}
}

func ExampleParseModels() {
	config := []byte(`[
		{"id": "chat-small", "supported_endpoint_types": ["compat", "compat-response"], "owned_by": "gatewaykit"},
		{"id": "video-1", "supported_endpoint_types": ["compat-video"],
		 "video": {"seconds": [4, 8, 12, 16, 20], "sizes": ["1280x720"], "size_required": true}}
	]`)
	list, err := models.ParseModels(config)
	if err != nil {
		fmt.Println(err)
		return
	}
	video := list[1].Video
	fmt.Println(len(list), "models")
	fmt.Println("8s allowed:", video.AllowsSeconds(8), "10s allowed:", video.AllowsSeconds(10))
	fmt.Println("prompt limit:", video.PromptLimit())

	_, err = models.ParseModels([]byte(`[{"id": "typo", "supported_endpoint_types": ["compat_video"]}]`))
	fmt.Println(err)
	// Output:
	// 2 models
	// 8s allowed: true 10s allowed: false
	// prompt limit: 2500
	// models: invalid model list: models[0]: model "typo": supported_endpoint_types[0]: unknown endpoint type "compat_video" (want "compat", "compat-response", "compat-video", "embeddings", "moderation", "rerank", "image-generation", "audio-speech" or "audio-transcription")
}

// A model's pricing gives the cost in US dollars of a request's tokens.
func ExamplePricing_Cost() {
	p := &models.Pricing{InputPerMillion: 0.15, OutputPerMillion: 0.60}
	fmt.Printf("%.6f\n", p.Cost(1200, 800))
	var free *models.Pricing
	fmt.Println(free.Cost(1200, 800))
	// Output:
	// 0.000660
	// 0
}

// Cached prompt tokens, cache writes and reasoning tokens cost what the
// provider charges for them; a rate left unset is the input or output
// rate.
func ExamplePricing_TokensCost() {
	cached, write := 0.30, 3.75
	p := &models.Pricing{InputPerMillion: 3, OutputPerMillion: 15, CachedInputPerMillion: &cached, CacheWritePerMillion: &write}
	// 1M prompt tokens: 600k read from the cache, 100k written to it;
	// 100k output tokens, 40k of them reasoning (at the output rate).
	t := models.Tokens{Input: 1_000_000, Cached: 600_000, CacheWrite: 100_000, Output: 100_000, Reasoning: 40_000}
	fmt.Printf("%.4f\n", p.TokensCost(t))
	fmt.Printf("%.4f\n", p.Cost(t.Input, t.Output))
	// Output:
	// 2.9550
	// 4.5000
}
