package relay_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
	"github.com/gatewaykit/gatewaykit/sse"
)

// A gateway that serves the public model "gpt-4o-mini" from an upstream
// that calls it "ok" (here a fake OpenAI-compatible service). The
// upstream gets the client's body as it was sent, but for the model, and
// the upstream's key, not the client's.
func ExampleNew() {
	upstream := relaytest.NewUpstream()
	defer upstream.Close()
	upstream.Chunks = 3

	r, err := relay.New([]relay.Route{{
		Model: "gpt-4o-mini",
		Upstreams: []relay.Upstream{
			{BaseURL: upstream.BaseURL(), Key: "sk-upstream", Model: relaytest.ModeOK},
		},
	}})
	if err != nil {
		panic(err)
	}
	catalog := models.NewMemoryCatalog(models.Model{ID: "gpt-4o-mini", EndpointTypes: []models.EndpointType{models.Compat}})
	mux := http.NewServeMux()
	chat.Register(mux, chat.NewHandler(catalog, r.Chat()))
	completions.Register(mux, completions.NewHandler(catalog, r.Completions()))
	gateway := httptest.NewServer(relay.ForwardHeaders(mux))
	defer gateway.Close()

	res, err := http.Post(gateway.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}],"seed":7}`))
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	fmt.Println(res.StatusCode, strings.Contains(string(body), `"content":"tok0 tok1 tok2"`))
	fmt.Printf("upstream got: %s\n", upstream.Last().Body)
	fmt.Println("with:", upstream.Last().Header.Get("Authorization"))
	// Output:
	// 200 true
	// upstream got: {"model":"ok","messages":[{"role":"user","content":"Hi"}],"seed":7}
	// with: Bearer sk-upstream
}

// Streams are read from the upstream event by event and passed through
// with the gateway's id, created time and model name in each chunk; the
// upstream is asked for its usage whatever the client asked, so that the
// reply can be charged, and its usage chunk goes to the client only if
// the client asked for it.
func ExampleRelay_Chat_streaming() {
	upstream := relaytest.NewUpstream()
	defer upstream.Close()
	upstream.Chunks = 3
	r, err := relay.New([]relay.Route{{Model: "m", Upstreams: []relay.Upstream{{BaseURL: upstream.BaseURL(), Model: relaytest.ModeOK}}}})
	if err != nil {
		panic(err)
	}
	catalog := models.NewMemoryCatalog(models.Model{ID: "m", EndpointTypes: []models.EndpointType{models.Compat}})
	gateway := httptest.NewServer(chat.NewHandler(catalog, r.Chat()))
	defer gateway.Close()

	res, err := http.Post(gateway.URL, "application/json",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"Hi"}]}`))
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	for ev, err := range sse.Read(res.Body) {
		if err != nil {
			panic(err)
		}
		if ev.IsDone() {
			fmt.Println(ev.Data)
			break
		}
		var c chat.Chunk
		if err := json.Unmarshal([]byte(ev.Data), &c); err != nil {
			panic(err)
		}
		d := c.Choices[0]
		fmt.Printf("%s… %q %q finish=%v\n", c.ID[:9], d.Delta.Role, d.Delta.Content, d.FinishReason != nil)
	}
	fmt.Printf("upstream got: %s\n", upstream.Last().Body)
	// Output:
	// chatcmpl-… "assistant" "" finish=false
	// chatcmpl-… "" "tok0" finish=false
	// chatcmpl-… "" " tok1" finish=false
	// chatcmpl-… "" " tok2" finish=false
	// chatcmpl-… "" "" finish=true
	// [DONE]
	// upstream got: {"model":"ok","messages":[{"role":"user","content":"Hi"}],"stream":true,"stream_options":{"include_usage":true}}
}

// Several upstreams serve one model in failover order: the second is
// asked only when the first cannot be reached or answers 5xx.
func ExampleRelay_Do() {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"object":"list","data":[],"auth":%q}`, r.Header.Get("Authorization"))
	}))
	defer up.Close()
	r, err := relay.New([]relay.Route{{Model: "m", Upstreams: []relay.Upstream{
		{Name: "primary", BaseURL: down.URL + "/v1", Key: "sk-1"},
		{Name: "secondary", BaseURL: up.URL + "/v1", Key: "sk-2"},
	}}})
	if err != nil {
		panic(err)
	}
	ctx := httptest.NewRequest(http.MethodGet, "/", nil).Context()
	res, u, err := r.Do(ctx, "m", relay.JSONRequest(ctx, http.MethodGet, "/models", nil))
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	fmt.Println(u.Name, res.StatusCode, string(body))
	// Output:
	// secondary 200 {"object":"list","data":[],"auth":"Bearer sk-2"}
}

// Redact hides the credentials in an upstream's text: the relay's own
// upstream key wherever it occurs, and whatever looks like one.
func ExampleRedact() {
	reply := `Incorrect API key provided: Bearer sk-proj-Abc123xyz789 (x-api-key: up-key-7, also key=up-key-7) at llm-7.internal`
	fmt.Println(relay.Redact(reply, "up-key-7"))
	// Output:
	// Incorrect API key provided: Bearer [redacted] (x-api-key: [redacted], also key=[redacted]) at llm-7.internal
}

// An upstream that refuses the gateway's key answers 401; the client,
// whose own key was fine, gets a 502 that says so, and the upstream's
// reply, redacted, goes to the log only.
func ExampleUpstreamError_refused() {
	res := &http.Response{
		StatusCode: http.StatusUnauthorized,
		Status:     "401 Unauthorized",
		Body:       io.NopCloser(strings.NewReader(`{"error":{"message":"Incorrect API key provided: sk-up-1234567890","code":"invalid_api_key"}}`)),
	}
	err := relay.UpstreamError(res, &relay.Upstream{Name: "openai", Key: "sk-up-1234567890"})
	var e *apierrors.Error
	errors.As(err, &e)
	fmt.Println(e.Status, e.Code)
	fmt.Println(e.Message)
	fmt.Println(e.Err)
	// Output:
	// 502 bad_gateway
	// The upstream refused the gateway's credentials (HTTP 401 Unauthorized); your API key was accepted: the gateway's operator must fix the upstream key.
	// relay: upstream openai answered 401 Unauthorized: {"error":{"message":"Incorrect API key provided: [redacted]","code":"invalid_api_key"}}
}
