package gemini_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gemini"
	"github.com/gatewaykit/gatewaykit/models"
)

// send posts body to path on h and returns the response.
func send(h http.Handler, path, body string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(w, r)
	return w
}

func ExampleNewHandler() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	mux := http.NewServeMux()
	gemini.Register(mux, gemini.NewHandler(catalog, demo.NewTextBackend().Chat()))

	w := send(mux, "/v1beta/models/demo-chat:generateContent",
		`{"contents":[{"role":"user","parts":[{"text":"Hello!"}]}],"generationConfig":{"maxOutputTokens":8}}`)
	var r gemini.Response
	_ = json.Unmarshal(w.Body.Bytes(), &r)
	c := r.Candidates[0]
	fmt.Println(w.Code, r.ModelVersion, c.Content.Role, c.FinishReason)
	fmt.Printf("%q\n", c.Content.Parts[0].Text)
	fmt.Printf("%+v\n", *r.UsageMetadata)
	// Output:
	// 200 demo-chat model MAX_TOKENS
	// "You said: \"Hello!\"."
	// {PromptTokenCount:2 CandidatesTokenCount:8 TotalTokenCount:10 CachedContentTokenCount:0 ThoughtsTokenCount:0}
}

func ExampleNewHandler_streaming() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	mux := http.NewServeMux()
	gemini.Register(mux, gemini.NewHandler(catalog, demo.NewTextBackend(demo.WithTokensPerChunk(4)).Chat()))

	w := send(mux, "/v1beta/models/demo-chat:streamGenerateContent?alt=sse",
		`{"contents":[{"parts":[{"text":"Hello!"}]}],"generationConfig":{"maxOutputTokens":8}}`)
	fmt.Println(w.Header().Get("Content-Type"))
	for _, block := range strings.Split(strings.TrimSuffix(w.Body.String(), "\n\n"), "\n\n") {
		var r gemini.Response
		_ = json.Unmarshal([]byte(strings.TrimPrefix(block, "data: ")), &r)
		c := r.Candidates[0]
		fmt.Printf("%q", c.Content.Parts[0].Text)
		if c.FinishReason != "" {
			fmt.Print(" ", c.FinishReason)
		}
		if r.UsageMetadata != nil {
			fmt.Printf(" total %d", r.UsageMetadata.TotalTokenCount)
		}
		fmt.Println()
	}
	// Output:
	// text/event-stream
	// "You said: \""
	// "Hello!\"."
	// "" MAX_TOKENS total 10
}

func ExampleToChat() {
	req, _ := gemini.DecodeRequest([]byte(`{
		"systemInstruction": {"parts": [{"text": "Be brief."}]},
		"contents": [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}],
		"tools": [{"functionDeclarations": [{"name": "get_weather",
			"parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}}}]}],
		"toolConfig": {"functionCallingConfig": {"mode": "ANY"}},
		"generationConfig": {"maxOutputTokens": 100, "stopSequences": ["END"]}}`))
	c, err := gemini.ToChat("demo-chat", req)
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := json.Marshal(c)
	fmt.Println(string(b))
	// Output:
	// {"model":"demo-chat","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Weather in Paris?"}],"max_completion_tokens":100,"stop":["END"],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"properties":{"city":{"type":"string"}},"type":"object"}}}],"tool_choice":"required"}
}
