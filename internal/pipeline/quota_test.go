package pipeline_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/responses"
)

// gate holds the demo backend's replies: each call says it arrived, waits
// for release (nil: no wait), then passes at most limit deltas through
// (limit < 0: all) and, if it stopped early, blocks until the request's
// context ends, as a backend that never finishes would.
type gate struct {
	arrived chan<- struct{}
	release <-chan struct{}
	limit   int
}

func (g *gate) wait(ctx context.Context) error {
	if g.arrived != nil {
		g.arrived <- struct{}{}
	}
	if g.release == nil {
		return nil
	}
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// gated holds seq as g says; before the gate blocks, it calls flush (the
// Params' Flush), as a backend does before it waits, and the handler
// sends what it has.
func gated[D any](ctx context.Context, g *gate, flush func(), seq iter.Seq2[D, error]) iter.Seq2[D, error] {
	return func(yield func(D, error) bool) {
		if err := g.wait(ctx); err != nil {
			var zero D
			yield(zero, err)
			return
		}
		n := 0
		for d, err := range seq {
			if g.limit >= 0 && n == g.limit {
				flush()
				<-ctx.Done()
				var zero D
				yield(zero, ctx.Err())
				return
			}
			n++
			if !yield(d, err) {
				return
			}
		}
	}
}

type chatGate struct {
	b *demo.ChatBackend
	g *gate
}

func (c chatGate) Complete(ctx context.Context, p *chat.Params) (*chat.Result, error) {
	if err := c.g.wait(ctx); err != nil {
		return nil, err
	}
	return c.b.Complete(ctx, p)
}

func (c chatGate) Stream(ctx context.Context, p *chat.Params) iter.Seq2[chat.Delta, error] {
	return gated(ctx, c.g, p.Flush, c.b.Stream(ctx, p))
}

type completionsGate struct {
	b *demo.CompletionsBackend
	g *gate
}

func (c completionsGate) Complete(ctx context.Context, p *completions.Params) (*completions.Result, error) {
	if err := c.g.wait(ctx); err != nil {
		return nil, err
	}
	return c.b.Complete(ctx, p)
}

func (c completionsGate) Stream(ctx context.Context, p *completions.Params) iter.Seq2[completions.Delta, error] {
	return gated(ctx, c.g, p.Flush, c.b.Stream(ctx, p))
}

type responsesGate struct {
	b *demo.ResponsesBackend
	g *gate
}

func (c responsesGate) Complete(ctx context.Context, p *responses.Params) (*responses.Result, error) {
	if err := c.g.wait(ctx); err != nil {
		return nil, err
	}
	return c.b.Complete(ctx, p)
}

func (c responsesGate) Stream(ctx context.Context, p *responses.Params) iter.Seq2[responses.Delta, error] {
	return gated(ctx, c.g, p.Flush, c.b.Stream(ctx, p))
}

// textEndpoint is one of the text endpoints, on the demo backend.
type textEndpoint struct {
	name string
	path string
	body func(stream bool) string
	// capMember is the member of the body that caps the output.
	capMember string
	handler   func(catalog models.Catalog, text *demo.TextBackend, g *gate) http.Handler
}

var textEndpoints = []textEndpoint{
	{
		name:      "Chat",
		path:      "/v1/chat/completions",
		capMember: "max_completion_tokens",
		body: func(stream bool) string {
			return fmt.Sprintf(`{"model":%q,"stream":%t,"messages":[{"role":"user","content":"Tell me a story."}]}`, demo.ChatModel, stream)
		},
		handler: func(c models.Catalog, text *demo.TextBackend, g *gate) http.Handler {
			return chat.NewHandler(c, chatGate{text.Chat(), g})
		},
	},
	{
		name:      "Completions",
		path:      "/v1/completions",
		capMember: "max_tokens",
		body: func(stream bool) string {
			return fmt.Sprintf(`{"model":%q,"stream":%t,"prompt":"Tell me a story."}`, demo.ChatModel, stream)
		},
		handler: func(c models.Catalog, text *demo.TextBackend, g *gate) http.Handler {
			return completions.NewHandler(c, completionsGate{text.Completions(), g})
		},
	},
	{
		name:      "Responses",
		path:      "/v1/responses",
		capMember: "max_output_tokens",
		body: func(stream bool) string {
			return fmt.Sprintf(`{"model":%q,"stream":%t,"input":"Tell me a story."}`, demo.ChatModel, stream)
		},
		handler: func(c models.Catalog, text *demo.TextBackend, g *gate) http.Handler {
			return responses.NewHandler(c, responsesGate{text.Responses(), g})
		},
	},
}

// quotaBundle is a server of one text endpoint behind auth.Middleware,
// with one key.
type quotaBundle struct {
	srv    *httptest.Server
	keys   *auth.MemoryKeyStore
	secret string
	served chan struct{} // receives when a request's handler has returned
	passed chan struct{} // receives when a request has passed auth.Middleware
}

func newQuotaBundle(t *testing.T, ep textEndpoint, budget int64, g *gate, opts ...demo.TextOption) *quotaBundle {
	t.Helper()
	b := &quotaBundle{keys: auth.NewMemoryKeyStore(), served: make(chan struct{}, 128), passed: make(chan struct{}, 128)}
	var err error
	b.secret, err = auth.NewSecret()
	require.NoError(t, err)
	require.NoError(t, b.keys.Add(t.Context(), b.secret, auth.Key{ID: "key_1", Quota: auth.LimitedQuota(budget)}))
	inner := ep.handler(models.NewMemoryCatalog(pricedModels()...), demo.NewTextBackend(opts...), g)
	h := auth.Middleware(b.keys)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case b.passed <- struct{}{}:
		default:
		}
		inner.ServeHTTP(w, r)
	}))
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { b.served <- struct{}{} }()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		b.srv.CloseClientConnections() // those of clients that hung up
		b.srv.Close()
	})
	return b
}

func (b *quotaBundle) request(ctx context.Context, t *testing.T, path, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+b.secret)
	return req
}

// pricedModels are the demo text models, the chat model priced at 1 USD
// an input token and 2 an output token, so that a cost is easy to check.
func pricedModels() []models.Model {
	ms := demo.TextModels()
	for i := range ms {
		if ms[i].ID == demo.ChatModel {
			ms[i].Pricing = &models.Pricing{InputPerMillion: 1e6, OutputPerMillion: 2e6}
		}
	}
	return ms
}

// usage returns the key's one usage row, checked against its quota: the
// chat model, tokens that add up to what the key was charged, and their
// cost at pricedModels' prices.
func (b *quotaBundle) usage(t *testing.T) auth.UsageRow {
	t.Helper()
	rows, err := b.keys.Usage(context.Background(), auth.UsageParams{KeyID: "key_1", GroupBy: auth.GroupByModel})
	require.NoError(t, err)
	require.Len(t, rows, 1, "one row: %+v", rows)
	row := rows[0]
	require.Equal(t, demo.ChatModel, row.Model)
	require.Equal(t, int64(1), row.Requests, "the request is recorded once")
	q := b.quota(t)
	require.Equal(t, q.Used, row.InputTokens+row.OutputTokens, "the row's tokens are what the key was charged")
	require.Equal(t, float64(row.InputTokens+2*row.OutputTokens), row.CostUSD)
	require.Equal(t, row.CostUSD, q.CostUSD, "the key accumulates the cost")
	return row
}

func (b *quotaBundle) quota(t *testing.T) auth.Quota {
	t.Helper()
	k, err := b.keys.Lookup(context.Background(), b.secret)
	require.NoError(t, err)
	return k.Quota
}

// TestConcurrentRequestsHoldTheQuota reproduces the overrun of a key's
// quota by concurrent requests: 50 requests on a key with 50 tokens, all
// admitted before any is charged. Each reserves its estimate; requests
// are admitted while less than the budget is reserved, so without an
// output cap (an estimate over 50 tokens) one is served and 49 are
// refused with 403 insufficient_quota, and with a cap of 5 tokens as many
// as fit. The key is charged within the bound of auth's documentation
// (budget − 1 + the largest estimate).
func TestConcurrentRequestsHoldTheQuota(t *testing.T) {
	t.Parallel()
	const requests, budget = 50, 50
	for _, ep := range textEndpoints {
		for _, tc := range []struct {
			stream bool
			cap    int
		}{{true, 0}, {false, 0}, {true, 5}, {false, 5}, {true, endpoint.MaxOutputTokens}, {false, endpoint.MaxOutputTokens}} {
			t.Run(fmt.Sprintf("%s/stream=%t/cap=%d", ep.name, tc.stream, tc.cap), func(t *testing.T) {
				t.Parallel()
				events := make(chan struct{}, requests) // a request reached the backend, or was refused
				release := make(chan struct{})
				b := newQuotaBundle(t, ep, budget, &gate{arrived: events, release: release, limit: -1})
				body := ep.body(tc.stream)
				if tc.cap > 0 {
					body = fmt.Sprintf(`{%q:%d,`, ep.capMember, tc.cap) + body[1:]
				}
				estimate := pipeline.Estimate(pipeline.PromptTokens(len(body)), 1, tc.cap, nil)
				admitted := int((budget + estimate - 1) / estimate) // while less than the budget is reserved

				type result struct {
					status int
					body   []byte
				}
				results := make(chan result, requests)
				var wg sync.WaitGroup
				for range requests {
					wg.Go(func() {
						res, err := b.srv.Client().Do(b.request(t.Context(), t, ep.path, body))
						if err != nil {
							t.Errorf("request: %v", err)
							events <- struct{}{}
							return
						}
						defer res.Body.Close()
						if res.StatusCode != http.StatusOK {
							events <- struct{}{}
						}
						data, err := io.ReadAll(res.Body)
						require.NoError(t, err)
						results <- result{res.StatusCode, data}
					})
				}
				// Every request is either held in the backend or refused:
				// only then may the backend answer.
				for range requests {
					<-events
				}
				close(release)
				wg.Wait()
				close(results)

				served := 0
				for res := range results {
					if res.status == http.StatusOK {
						served++
						continue
					}
					require.Equal(t, http.StatusForbidden, res.status, "%s", res.body)
					var e struct {
						Error struct {
							Type, Code string
						}
					}
					require.NoError(t, json.Unmarshal(res.body, &e), "%s", res.body)
					require.Equal(t, "insufficient_quota", e.Error.Code)
					require.Equal(t, "insufficient_quota", e.Error.Type)
				}
				require.Equal(t, admitted, served, "requests served on a key of %d tokens, estimated at %d each", budget, estimate)

				q := b.quota(t)
				require.Zero(t, q.Reserved, "every reservation is settled")
				require.Positive(t, q.Used)
				require.LessOrEqual(t, q.Used, budget-1+estimate, "usage charged, against the documented bound")
			})
		}
	}
}

// TestHugeOutputCapsAreRefused reproduces a bypass of the quota: an
// output cap so large that choices × cap overflowed the estimate (n=4
// and 2⁶² wrapped to 0, so that every request on a key of 2000 tokens was
// served), or made it negative (2⁶³−1, a 500). A cap above
// endpoint.MaxOutputTokens is refused with a 400 naming the field, before
// anything is reserved.
func TestHugeOutputCapsAreRefused(t *testing.T) {
	t.Parallel()
	for _, ep := range textEndpoints {
		for _, c := range []string{"4611686018427387904", "9223372036854775807", "2147483648"} {
			t.Run(ep.name+"/"+c, func(t *testing.T) {
				t.Parallel()
				b := newQuotaBundle(t, ep, 2000, &gate{limit: -1})
				body := fmt.Sprintf(`{%q:%s,`, ep.capMember, c) + ep.body(false)[1:]
				if ep.name != "Responses" {
					body = `{"n":4,` + body[1:]
				}
				res, err := b.srv.Client().Do(b.request(t.Context(), t, ep.path, body))
				require.NoError(t, err)
				data, err := io.ReadAll(res.Body)
				res.Body.Close()
				require.NoError(t, err)
				require.Equal(t, http.StatusBadRequest, res.StatusCode, "%s", data)
				var e struct {
					Error struct{ Message, Param string }
				}
				require.NoError(t, json.Unmarshal(data, &e), "%s", data)
				require.Equal(t, ep.capMember, e.Error.Param)
				require.Equal(t, fmt.Sprintf("%s must be at most %d, got %s", ep.capMember, endpoint.MaxOutputTokens, c), e.Error.Message)
				<-b.served
				require.Equal(t, auth.LimitedQuota(2000), b.quota(t), "nothing reserved, nothing charged")
			})
		}
	}
}

// TestAbandonedStreamIsCharged reproduces a stream that costs nothing
// because its client left before the backend reported the usage (the
// demo backend reports it only at the end): the client reads a few
// events and hangs up; the key is then charged the estimate of the
// prompt and of the output sent.
func TestAbandonedStreamIsCharged(t *testing.T) {
	t.Parallel()
	backends := []struct {
		name string
		gate *gate
		opts []demo.TextOption
	}{
		// The demo backend stops after 4 deltas, as if the model were
		// thinking, until the client leaves.
		{name: "Held", gate: &gate{limit: 4}},
		// The demo backend streams one token every 10ms: the client
		// leaves long before its end (a pace, not an assertion: were the
		// stream over first, its usage would be charged all the same).
		{name: "Paced", gate: &gate{limit: -1}, opts: []demo.TextOption{demo.WithChunkDelay(10 * time.Millisecond), demo.WithTokensPerChunk(1)}},
	}
	for _, ep := range textEndpoints {
		for _, be := range backends {
			t.Run(ep.name+"/"+be.name, func(t *testing.T) {
				t.Parallel()
				b := newQuotaBundle(t, ep, 1_000_000, be.gate, be.opts...)
				ctx, hangUp := context.WithCancel(t.Context())
				defer hangUp()
				body := ep.body(true)
				res, err := b.srv.Client().Do(b.request(ctx, t, ep.path, body))
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, res.StatusCode)
				lines := bufio.NewScanner(res.Body)
				for events := 0; events < 2 && lines.Scan(); {
					if strings.HasPrefix(lines.Text(), "data: ") {
						events++
					}
				}
				hangUp()
				res.Body.Close()
				<-b.served

				q := b.quota(t)
				require.Zero(t, q.Reserved, "the reservation is settled")
				require.Greater(t, q.Used, pipeline.PromptTokens(len(body)), "charged the prompt and the output sent")
				row := b.usage(t)
				require.Equal(t, pipeline.PromptTokens(len(body)), row.InputTokens, "the estimate of the prompt")
				require.Positive(t, row.OutputTokens, "the estimate of the output sent")
			})
		}
	}
}

// TestFailedRepliesReleaseTheirReservation: a reply that fails before it
// starts is charged nothing, and every reservation is settled.
func TestFailedRepliesReleaseTheirReservation(t *testing.T) {
	t.Parallel()
	for _, ep := range textEndpoints {
		t.Run(ep.name, func(t *testing.T) {
			t.Parallel()
			b := newQuotaBundle(t, ep, 100_000, &gate{limit: -1})
			body := strings.Replace(ep.body(false), "Tell me a story.", demo.DirectiveFail, 1)
			res, err := b.srv.Client().Do(b.request(t.Context(), t, ep.path, body))
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			require.Equal(t, http.StatusBadGateway, res.StatusCode)
			<-b.served
			require.Equal(t, auth.LimitedQuota(100_000), b.quota(t))
			require.Equal(t, auth.UsageRow{Model: demo.ChatModel, Requests: 1}, b.usage(t), "recorded once, at no cost")
		})
	}
}

// TestEveryReplyIsRecordedOnce: a reply, streamed or not, is recorded in
// the key's usage once, with the model, the tokens that the backend
// reported and their cost at the model's pricing.
func TestEveryReplyIsRecordedOnce(t *testing.T) {
	t.Parallel()
	for _, ep := range textEndpoints {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%t", ep.name, stream), func(t *testing.T) {
				t.Parallel()
				b := newQuotaBundle(t, ep, 1_000_000, &gate{limit: -1})
				res, err := b.srv.Client().Do(b.request(t.Context(), t, ep.path, ep.body(stream)))
				require.NoError(t, err)
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				require.Equal(t, http.StatusOK, res.StatusCode)
				<-b.served
				row := b.usage(t)
				require.Positive(t, row.InputTokens)
				require.Positive(t, row.OutputTokens)
			})
		}
	}
}

// TestRequestsHeldAtTheirLastBodyByteHoldTheQuota reproduces the other
// overrun: 20 streamed requests on a key with 50 tokens pass the auth
// middleware's check while nothing is spent yet, then wait with their
// body one byte short; once the last bytes are sent, one is served and
// 19 are refused with 403.
func TestRequestsHeldAtTheirLastBodyByteHoldTheQuota(t *testing.T) {
	t.Parallel()
	const requests, budget = 20, 50
	for _, ep := range textEndpoints {
		t.Run(ep.name, func(t *testing.T) {
			t.Parallel()
			b := newQuotaBundle(t, ep, budget, &gate{limit: -1})
			body := ep.body(true)
			statuses := make(chan int, requests)
			lastBytes := make([]*io.PipeWriter, requests)
			var wg sync.WaitGroup
			for i := range requests {
				pr, pw := io.Pipe()
				lastBytes[i] = pw
				req, err := http.NewRequest(http.MethodPost, b.srv.URL+ep.path, pr)
				require.NoError(t, err)
				req.ContentLength = int64(len(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+b.secret)
				wg.Go(func() {
					res, err := b.srv.Client().Do(req)
					if err != nil {
						t.Errorf("request: %v", err)
						return
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					statuses <- res.StatusCode
				})
				go func() { _, _ = io.WriteString(pw, body[:len(body)-1]) }()
			}
			for range requests {
				<-b.passed
			}
			for _, pw := range lastBytes {
				_, _ = io.WriteString(pw, body[len(body)-1:])
				pw.Close()
			}
			wg.Wait()
			close(statuses)
			count := map[int]int{}
			for s := range statuses {
				count[s]++
			}
			require.Equal(t, map[int]int{http.StatusOK: 1, http.StatusForbidden: requests - 1}, count)
		})
	}
}
