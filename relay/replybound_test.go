package relay_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/responses"
)

// sizedUpstream answers every non-streamed request of the chat,
// completions, responses, messages and generateContent APIs with a valid
// reply of exactly size bytes (its text padded), with a Content-Length or
// chunked. When hold is set, it sends half the reply, then waits for hold
// to be closed (or the request to end) before the rest.
type sizedUpstream struct {
	size   int
	length bool
	hold   chan struct{}
}

func (u *sizedUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	var before, after string
	switch p := r.URL.Path; {
	case strings.HasSuffix(p, "/chat/completions"):
		before = `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"`
		after = `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
	case strings.HasSuffix(p, "/completions"):
		before = `{"id":"c1","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":"`
		after = `","finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
	case strings.HasSuffix(p, "/responses"):
		before = `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"m","output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":"`
		after = `"}]}],"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}`
	case strings.HasSuffix(p, "/messages"):
		before = `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"`
		after = `"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`
	case strings.HasSuffix(p, ":generateContent"):
		before = `{"candidates":[{"index":0,"content":{"role":"model","parts":[{"text":"`
		after = `"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2}}`
	default:
		http.NotFound(w, r)
		return
	}
	reply := before + strings.Repeat("a", u.size-len(before)-len(after)) + after
	w.Header().Set("Content-Type", "application/json")
	if u.length {
		w.Header().Set("Content-Length", strconv.Itoa(len(reply)))
	}
	if u.hold == nil {
		_, _ = io.WriteString(w, reply)
		return
	}
	_, _ = io.WriteString(w, reply[:len(reply)/2])
	http.NewResponseController(w).Flush()
	select {
	case <-u.hold:
	case <-r.Context().Done():
		return
	}
	_, _ = io.WriteString(w, reply[len(reply)/2:])
}

// boundedGateway is the chat, completions and responses handlers over a
// relay whose bound on buffered replies is bound, in front of up: model
// "pub" speaks the OpenAI format, "pub-anthropic" the messages format and
// "pub-gemini" Google's.
func boundedGateway(t *testing.T, up http.Handler, bound int64) (*relay.Relay, *httptest.Server) {
	t.Helper()
	usrv := httptest.NewServer(up)
	t.Cleanup(usrv.Close)
	var routes []relay.Route
	var list []models.Model
	for model, api := range map[string]relay.API{"pub": relay.APIOpenAI, "pub-anthropic": relay.APIAnthropic, "pub-gemini": relay.APIGemini} {
		routes = append(routes, relay.Route{Model: model, Upstreams: []relay.Upstream{{BaseURL: usrv.URL + "/v1", Key: upstreamKey, Model: "m", API: api}}})
		list = append(list, models.Model{ID: model, EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse}})
	}
	r, err := relay.New(routes, relay.WithMaxReplyBytesInFlight(bound))
	require.NoError(t, err)
	catalog := models.NewMemoryCatalog(list...)
	keys := auth.NewMemoryKeyStore()
	require.NoError(t, keys.Add(t.Context(), clientKey, auth.Key{ID: "key_test", Quota: auth.LimitedQuota(quota)}))
	mux := http.NewServeMux()
	chat.Register(mux, chat.NewHandler(catalog, r.Chat()))
	completions.Register(mux, completions.NewHandler(catalog, r.Completions()))
	responses.Register(mux, responses.NewHandler(catalog, r.Responses()))
	srv := httptest.NewServer(auth.Middleware(keys)(mux))
	t.Cleanup(srv.Close)
	return r, srv
}

// boundedCall is one non-streamed request of each backend and upstream
// format that reads its reply whole.
type boundedCall struct{ name, path, body string }

var boundedCalls = []boundedCall{
	{"chat", "/v1/chat/completions", `{"model":"pub","messages":[{"role":"user","content":"hi"}]}`},
	{"chat to a messages-format upstream", "/v1/chat/completions", `{"model":"pub-anthropic","messages":[{"role":"user","content":"hi"}]}`},
	{"chat to a Gemini upstream", "/v1/chat/completions", `{"model":"pub-gemini","messages":[{"role":"user","content":"hi"}]}`},
	{"completions", "/v1/completions", `{"model":"pub","prompt":"hi"}`},
	{"responses", "/v1/responses", `{"model":"pub","input":"hi","store":false}`},
	{"responses to a messages-format upstream", "/v1/responses", `{"model":"pub-anthropic","input":"hi","store":false}`},
}

func postTo(t *testing.T, srv *httptest.Server, path, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+clientKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(data)
}

// TestReplyOverTheBoundIs502: a reply larger than the relay's bound on
// buffered replies is a 502 in the general shape, read no further than
// the bound, and its bytes are given back: a reply that fits is served
// next.
func TestReplyOverTheBoundIs502(t *testing.T) {
	t.Parallel()
	const bound = 16 << 10
	for _, length := range []bool{true, false} {
		for _, c := range boundedCalls {
			t.Run(fmt.Sprintf("%s, Content-Length %v", c.name, length), func(t *testing.T) {
				t.Parallel()
				up := &sizedUpstream{size: bound + 1, length: length}
				r, srv := boundedGateway(t, up, bound)
				res, body := postTo(t, srv, c.path, c.body)
				require.Equal(t, http.StatusBadGateway, res.StatusCode, body)
				require.JSONEq(t, `{"error":{"message":"The upstream's reply is too large.","type":"upstream_error","param":null,"code":"bad_gateway"}}`, body)
				require.Zero(t, relay.ReplyBytesHeld(r), "the reply's bytes are given back")

				up.size = bound
				res, body = postTo(t, srv, c.path, c.body)
				require.Equal(t, http.StatusOK, res.StatusCode, body)
				require.Zero(t, relay.ReplyBytesHeld(r))
			})
		}
	}
}

// TestConcurrentRepliesShareTheBound: replies read at once share the
// bound. While one reply holds most of it, another that would fit alone
// is a 503 with Retry-After; once the first is read, the bound is free
// again.
func TestConcurrentRepliesShareTheBound(t *testing.T) {
	t.Parallel()
	const bound, size = 64 << 10, 40 << 10
	for _, c := range boundedCalls {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			held := &sizedUpstream{size: size, length: true, hold: make(chan struct{})}
			free := &sizedUpstream{size: size, length: true}
			first := make(chan struct{}, 1)
			first <- struct{}{}
			// The first request gets the held reply; the others a whole one.
			up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-first:
					held.ServeHTTP(w, r)
				default:
					free.ServeHTTP(w, r)
				}
			})
			r, srv := boundedGateway(t, up, bound)

			type result struct {
				status int
				body   string
			}
			done := make(chan result, 1)
			go func() {
				var got result
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+c.path, strings.NewReader(c.body))
				req.Header.Set("Authorization", "Bearer "+clientKey)
				req.Header.Set("Content-Type", "application/json")
				res, err := srv.Client().Do(req)
				if err != nil {
					got.body = err.Error()
				} else {
					data, _ := io.ReadAll(res.Body)
					res.Body.Close()
					got = result{res.StatusCode, string(data)}
				}
				done <- got
			}()
			// The held reply declared its length: its bytes are taken
			// at its first read.
			require.Eventually(t, func() bool { return relay.ReplyBytesHeld(r) == size }, 10*time.Second, time.Millisecond)

			res, body := postTo(t, srv, c.path, c.body)
			require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, body)
			require.Equal(t, "1", res.Header.Get("Retry-After"))
			require.JSONEq(t, `{"error":{"message":"The gateway is reading too many upstream replies at once; retry in a moment.","type":"server_error","param":null,"code":"service_unavailable"}}`, body)
			require.Equal(t, int64(size), relay.ReplyBytesHeld(r), "the refused reply holds nothing")

			close(held.hold)
			got := <-done
			require.Equal(t, http.StatusOK, got.status, got.body)
			require.Zero(t, relay.ReplyBytesHeld(r))
			res, body = postTo(t, srv, c.path, c.body)
			require.Equal(t, http.StatusOK, res.StatusCode, body)
			require.Zero(t, relay.ReplyBytesHeld(r))
		})
	}
}
