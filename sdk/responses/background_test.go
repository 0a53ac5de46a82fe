package responses_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	oresponses "github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/gateway/gatewaytest"
	"github.com/gatewaykit/gatewaykit/relay"
)

// demoKey is the key of gateway.DemoFile.
const demoKey = "sk-demo"

func gatewayClient(t *testing.T, g *gateway.Gateway) openai.Client {
	t.Helper()
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey(demoKey),
		option.WithMaxRetries(0), option.WithHTTPClient(srv.Client()))
}

// TestSDKBackground drives background responses with the official Go
// SDK against the example server's gateway (the demo backend, paced for
// background runs) and through a relay to it (the relaying gateway runs
// the background run itself, asking its upstream in the foreground):
// create → poll → completed; create → cancel → cancelled; a background
// stream dropped after event 20 and resumed with GetStreaming and
// starting_after, every event once.
func TestSDKBackground(t *testing.T) {
	t.Parallel()
	direct := gatewaytest.NewDemo(t, nil, demo.WithBackgroundChunkDelay(20*time.Millisecond))
	upstream := gatewaytest.NewDemo(t, nil, demo.WithChunkDelay(20*time.Millisecond))
	upSrv := httptest.NewServer(upstream)
	t.Cleanup(upSrv.Close)
	r, err := relay.New([]relay.Route{{Model: demo.ChatModel, Upstreams: []relay.Upstream{{BaseURL: upSrv.URL + "/v1", Key: demoKey}}}})
	require.NoError(t, err)
	relayed := gatewaytest.NewDemo(t, func(c *gateway.Config) { c.Responses = r.Responses() })

	for name, g := range map[string]*gateway.Gateway{"direct": direct, "relayed": relayed} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			driveBackground(t, gatewayClient(t, g))
		})
	}
}

func driveBackground(t *testing.T, client openai.Client) {
	ctx := t.Context()
	params := oresponses.ResponseNewParams{
		Model:      demo.ChatModel,
		Input:      oresponses.ResponseNewParamsInputUnion{OfString: openai.String("hello")},
		Background: openai.Bool(true),
	}

	// create → poll → completed
	created, err := client.Responses.New(ctx, params)
	require.NoError(t, err)
	require.Equal(t, oresponses.ResponseStatusQueued, created.Status)
	require.True(t, created.Background)
	got := created
	for tries := 0; got.Status == oresponses.ResponseStatusQueued || got.Status == oresponses.ResponseStatusInProgress; tries++ {
		require.Less(t, tries, 1000, "still %s", got.Status)
		time.Sleep(10 * time.Millisecond) // a client's poll
		got, err = client.Responses.Get(ctx, created.ID, oresponses.ResponseGetParams{})
		require.NoError(t, err)
	}
	require.Equal(t, oresponses.ResponseStatusCompleted, got.Status)
	require.True(t, strings.HasPrefix(got.OutputText(), `You said: "hello".`), got.OutputText())
	require.Positive(t, got.Usage.TotalTokens)

	// create → cancel → cancelled
	created, err = client.Responses.New(ctx, params)
	require.NoError(t, err)
	cancelled, err := client.Responses.Cancel(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, oresponses.ResponseStatusCancelled, cancelled.Status)
	got, err = client.Responses.Get(ctx, created.ID, oresponses.ResponseGetParams{})
	require.NoError(t, err)
	require.Equal(t, oresponses.ResponseStatusCancelled, got.Status)
	_, err = client.Responses.Cancel(ctx, created.ID)
	require.NoError(t, err, "cancelling again answers the cancelled response")

	// A finished background response is answered as it is; a
	// foreground one cannot be cancelled.
	finished, err := client.Responses.Cancel(ctx, got.ID)
	require.NoError(t, err)
	require.Equal(t, oresponses.ResponseStatusCancelled, finished.Status)
	var apiErr *openai.Error
	done, err := client.Responses.New(ctx, oresponses.ResponseNewParams{Model: demo.ChatModel,
		Input: oresponses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
	require.NoError(t, err)
	_, err = client.Responses.Cancel(ctx, done.ID)
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, 400, apiErr.StatusCode)

	// A background stream, dropped after event 20, resumed.
	stream := client.Responses.NewStreaming(ctx, params)
	var (
		seqs []int64
		text strings.Builder
		id   string
	)
	for stream.Next() {
		ev := stream.Current()
		seqs = append(seqs, ev.SequenceNumber)
		if ev.Type == "response.created" {
			id = ev.Response.ID
		}
		if ev.Type == "response.output_text.delta" {
			text.WriteString(ev.Delta)
		}
		if ev.SequenceNumber == 20 {
			break
		}
	}
	require.NoError(t, stream.Err())
	require.NoError(t, stream.Close())
	require.NotEmpty(t, id)
	resumed := client.Responses.GetStreaming(ctx, id, oresponses.ResponseGetParams{StartingAfter: openai.Int(20)})
	final := ""
	for resumed.Next() {
		ev := resumed.Current()
		seqs = append(seqs, ev.SequenceNumber)
		if ev.Type == "response.output_text.delta" {
			text.WriteString(ev.Delta)
		}
		if ev.Type == "response.completed" {
			final = ev.Response.OutputText()
		}
	}
	require.NoError(t, resumed.Err())
	for i, seq := range seqs {
		require.Equal(t, int64(i), seq, "every event once, in order")
	}
	require.NotEmpty(t, final, "the resumed stream ends with response.completed")
	require.Equal(t, final, text.String())
}
