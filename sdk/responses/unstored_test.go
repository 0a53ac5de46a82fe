package responses_test

import (
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	oresponses "github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/sdk/internal/openaitest"
)

// TestSDKSeesAResponseThatCannotBeStored: the official SDK, retrying as
// it does by default, gets the 500 once (X-Should-Retry: false), and a
// stream that ends with response.failed, whose error says why.
func TestSDKSeesAResponseThatCannotBeStored(t *testing.T) {
	t.Parallel()
	store := &fullStore{MemoryStore: responses.NewMemoryStore(nil)}
	mux := http.NewServeMux()
	responses.Register(mux, responses.NewHandler(testCatalog(), demo.NewTextBackend().Responses(), responses.WithStore(store)))
	srv, secrets := openaitest.SDKServer(t, mux, auth.Key{ID: "key_sdk", Quota: auth.UnlimitedQuota()})
	client := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey(secrets[0]),
		option.WithHTTPClient(srv.Client()), option.WithMaxRetries(2))
	params := oresponses.ResponseNewParams{Model: demo.ChatModel, Input: text("Keep this for later.")}

	_, err := client.Responses.New(t.Context(), params)
	apiErr := openaitest.RequireAPIError(t, err, http.StatusInternalServerError, "internal_server_error", "")
	require.Equal(t, notStoredMessage, apiErr.Message)
	require.Equal(t, int32(1), store.puts.Load(), "not retried: a retry would be charged again")

	stream := client.Responses.NewStreaming(t.Context(), params)
	var failed *oresponses.Response
	for stream.Next() {
		switch e := stream.Current().AsAny().(type) {
		case oresponses.ResponseCompletedEvent:
			t.Fatal("response.completed for a response that is not stored")
		case oresponses.ResponseFailedEvent:
			failed = &e.Response
		}
	}
	require.NoError(t, stream.Err(), "a response.failed event is an event, not a transport error")
	require.NotNil(t, failed)
	require.Equal(t, oresponses.ResponseStatusFailed, failed.Status)
	require.Equal(t, notStoredMessage, failed.Error.Message)
	require.NotEmpty(t, failed.OutputText(), "the output generated is in it")
}
