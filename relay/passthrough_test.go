package relay_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
)

// throughRelay answers every upstream request with reply (a JSON body)
// or, if upstream is not nil, with those events' data as a stream ending
// with [DONE]; sends
// request to the handler that mount makes for the relay, and returns the
// client's reply: the JSON body, or the data of each event, with the
// gateway's id and created time replaced by ID and 0.
func throughRelay(t *testing.T, reply string, upstream []string, mount func(models.Catalog, *relay.Relay) http.Handler, request string) []string {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if upstream == nil {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(reply))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range upstream {
			w.Write([]byte("data: " + ev + "\n\n"))
		}
		w.Write([]byte("data: [DONE]\n\n"))
	}))
	t.Cleanup(up.Close)
	r, err := relay.New([]relay.Route{{Model: "pub", Upstreams: []relay.Upstream{{BaseURL: up.URL + "/v1", Model: "up-model"}}}})
	require.NoError(t, err)
	catalog := models.NewMemoryCatalog(models.Model{ID: "pub", EndpointTypes: []models.EndpointType{models.Compat}})
	gw := httptest.NewServer(mount(catalog, r))
	t.Cleanup(gw.Close)
	res, err := http.Post(gw.URL, "application/json", strings.NewReader(request))
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var got []string
	if upstream == nil {
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		got = []string{string(body)}
	} else {
		got = events(t, res.Body)
	}
	for i := range got {
		got[i] = gatewayID.ReplaceAllString(got[i], `{"id":"ID","object":"$1","created":0`)
	}
	return got
}

// gatewayID matches the gateway's head of a reply or chunk.
var gatewayID = regexp.MustCompile(`^\{"id":"(?:chatcmpl|cmpl)-[0-9A-Za-z]+","object":"([a-z_.]+)","created":[0-9]+`)

func mountChat(catalog models.Catalog, r *relay.Relay) http.Handler {
	return chat.NewHandler(catalog, r.Chat())
}

func mountCompletions(catalog models.Catalog, r *relay.Relay) http.Handler {
	return completions.NewHandler(catalog, r.Completions())
}

// streamThrough serves upstream's events to a chat request with body
// through the relay; see throughRelay.
func streamThrough(t *testing.T, upstream []string, body string) []string {
	t.Helper()
	return throughRelay(t, "", upstream, mountChat, body)
}

func TestChatStreamPassesChunksThrough(t *testing.T) {
	t.Parallel()
	const head = `{"id":"ID","object":"chat.completion.chunk","created":0,"model":"pub",`
	const stream = `{"model":"pub","stream":true,"messages":[{"role":"user","content":"Hi"}]}`
	const withUsage = `{"model":"pub","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Hi"}]}`
	const upHead = `{"id":"up-1","object":"chat.completion.chunk","created":7,"model":"up-model","system_fingerprint":"fp_1",`
	usage := `{"id":"up-1","object":"chat.completion.chunk","created":7,"model":"up-model","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`
	for _, tc := range []struct {
		name     string
		body     string
		upstream []string
		want     []string
	}{{
		name: "members the gateway does not model are kept, usage:null is dropped",
		body: stream,
		upstream: []string{
			upHead + `"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"x1"}`,
			upHead + `"choices":[{"index":0,"delta":{"content":"Hé \"you\"\n"},"logprobs":{"content":[]},"finish_reason":null}],"usage":null,"obfuscation":"x2"}`,
			upHead + `"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`,
			usage,
		},
		want: []string{
			head + `"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"obfuscation":"x1"}`,
			head + `"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hé \"you\"\n"},"logprobs":{"content":[]},"finish_reason":null}],"obfuscation":"x2"}`,
			head + `"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			"[DONE]",
		},
	}, {
		name: "the usage chunk is the gateway's, when asked",
		body: withUsage,
		upstream: []string{
			`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}]}`,
			usage,
		},
		want: []string{
			head + `"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}]}`,
			head + `"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`,
			"[DONE]",
		},
	}, {
		name: "the usage chunk keeps the upstream's details (issue 26)",
		body: withUsage,
		upstream: []string{
			`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}]}`,
			`{"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":20,"total_tokens":70,"prompt_tokens_details":{"cached_tokens":30,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":12,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`,
		},
		want: []string{
			head + `"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}]}`,
			head + `"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":20,"total_tokens":70,"prompt_tokens_details":{"cached_tokens":30},"completion_tokens_details":{"reasoning_tokens":12}}}`,
			"[DONE]",
		},
	}, {
		name: "a first chunk without the role is encoded by the handler, which adds it",
		body: stream,
		upstream: []string{
			`{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{"content":"!"},"finish_reason":null}]}`,
		},
		want: []string{
			head + `"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}`,
			head + `"choices":[{"index":0,"delta":{"content":"!"},"finish_reason":null}]}`,
			head + `"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			"[DONE]",
		},
	}, {
		name: "tool calls are decoded and encoded again, between passed chunks",
		body: stream,
		upstream: []string{
			`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Let me look."},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		},
		want: []string{
			head + `"choices":[{"index":0,"delta":{"role":"assistant","content":"Let me look."},"finish_reason":null}]}`,
			head + `"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]},"finish_reason":null}]}`,
			head + `"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":null}]}`,
			head + `"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			"[DONE]",
		},
	}, {
		name: "two choices, interleaved, each with its role",
		body: `{"model":"pub","n":2,"stream":true,"messages":[{"role":"user","content":"Hi"}]}`,
		upstream: []string{
			`{"choices":[{"index":0,"delta":{"role":"assistant","content":"a"},"finish_reason":null}]}`,
			`{"choices":[{"index":1,"delta":{"role":"assistant","content":"b"},"finish_reason":null}]}`,
			`{"choices":[{"index":1,"delta":{},"finish_reason":"length"}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		},
		want: []string{
			head + `"choices":[{"index":0,"delta":{"role":"assistant","content":"a"},"finish_reason":null}]}`,
			head + `"choices":[{"index":1,"delta":{"role":"assistant","content":"b"},"finish_reason":null}]}`,
			head + `"choices":[{"index":1,"delta":{},"finish_reason":"length"}]}`,
			head + `"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			"[DONE]",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, streamThrough(t, tc.upstream, tc.body)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// replyThrough serves upstream's JSON reply to a chat request through
// the relay; see throughRelay.
func replyThrough(t *testing.T, upstream string) string {
	t.Helper()
	return throughRelay(t, upstream, nil, mountChat, `{"model":"pub","messages":[{"role":"user","content":"Hi"}]}`)[0]
}

func TestChatCompletePassesTheReplyThrough(t *testing.T) {
	t.Parallel()
	const head = `{"id":"ID","object":"chat.completion","created":0,"model":"pub",`
	for _, tc := range []struct {
		name, upstream, want string
	}{{
		name:     "members the gateway does not model are kept; the usage is the gateway's, with the upstream's details",
		upstream: `{"id":"up-1","object":"chat.completion","created":7,"model":"up-model","choices":[{"index":0,"message":{"role":"assistant","content":"Hé \"you\"","refusal":null,"annotations":[]},"logprobs":{"content":[]},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":0}},"service_tier":"default","system_fingerprint":"fp_1"}`,
		want:     head + `"choices":[{"index":0,"message":{"role":"assistant","content":"Hé \"you\"","refusal":null,"annotations":[]},"logprobs":{"content":[]},"finish_reason":"stop"}],"service_tier":"default","system_fingerprint":"fp_1","usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":0}}}`,
	}, {
		name:     "cached, audio, reasoning and prediction tokens are kept (issue 26)",
		upstream: `{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":50,"completion_tokens":20,"total_tokens":70,"prompt_tokens_details":{"cached_tokens":30,"audio_tokens":2},"completion_tokens_details":{"reasoning_tokens":12,"audio_tokens":1,"accepted_prediction_tokens":3,"rejected_prediction_tokens":4}}}`,
		want:     head + `"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":50,"completion_tokens":20,"total_tokens":70,"prompt_tokens_details":{"cached_tokens":30,"audio_tokens":2},"completion_tokens_details":{"reasoning_tokens":12,"audio_tokens":1,"accepted_prediction_tokens":3,"rejected_prediction_tokens":4}}}`,
	}, {
		name:     "details over their counts are taken at most the counts",
		upstream: `{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":30},"completion_tokens_details":{"reasoning_tokens":-3}}}`,
		want:     head + `"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":5},"completion_tokens_details":{"reasoning_tokens":0}}}`,
	}, {
		name:     "without the upstream's usage, the gateway's estimate",
		upstream: `{"choices":[{"index":0,"message":{"role":"assistant","content":"Hello there"},"finish_reason":"stop"}]}`,
		want:     head + `"choices":[{"index":0,"message":{"role":"assistant","content":"Hello there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":4,"completion_tokens":3,"total_tokens":7}}`,
	}, {
		name:     "tool calls are decoded and encoded again",
		upstream: `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7},"system_fingerprint":"fp_1"}`,
		want:     head + `"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, replyThrough(t, tc.upstream)); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompletionsPassThrough(t *testing.T) {
	t.Parallel()
	logprobs := `"logprobs":{"tokens":[" fox"],"token_logprobs":[-0.1],"top_logprobs":null,"text_offset":[3]}`
	t.Run("stream", func(t *testing.T) {
		t.Parallel()
		got := throughRelay(t, "", []string{
			`{"id":"cmpl-up","object":"text_completion","created":7,"model":"up-model","choices":[{"text":" fox","index":0,` + logprobs + `,"finish_reason":null}],"usage":null}`,
			`{"id":"cmpl-up","object":"text_completion","created":7,"model":"up-model","choices":[{"text":"","index":0,"logprobs":null,"finish_reason":"length"}],"usage":null}`,
			`{"id":"cmpl-up","object":"text_completion","created":7,"model":"up-model","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`,
		}, mountCompletions, `{"model":"pub","stream":true,"prompt":"The"}`)
		const head = `{"id":"ID","object":"text_completion","created":0,`
		want := []string{
			head + `"choices":[{"text":" fox","index":0,` + logprobs + `,"finish_reason":null}]}`,
			head + `"choices":[{"text":"","index":0,"logprobs":null,"finish_reason":"length"}]}`,
			"[DONE]",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})
	t.Run("reply", func(t *testing.T) {
		t.Parallel()
		got := throughRelay(t, `{"id":"cmpl-up","object":"text_completion","created":7,"model":"up-model","choices":[{"text":" fox","index":0,`+logprobs+`,"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2},"system_fingerprint":"fp"}`,
			nil, mountCompletions, `{"model":"pub","prompt":"The"}`)
		want := `{"id":"ID","object":"text_completion","created":0,"model":"pub","choices":[{"text":" fox","index":0,` + logprobs + `,"finish_reason":"length"}],"system_fingerprint":"fp","usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
		if diff := cmp.Diff(want, got[0]); diff != "" {
			t.Errorf("reply (-want +got):\n%s", diff)
		}
	})
}
