package relay_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/relay"
)

// TestHotDocumentsTakeTheFastPath relays the benchmarks' reply and
// streams (the load test's mock upstream) and asserts that the hand
// decoders took every document: none went to encoding/json. It is not
// parallel, so that no other test's documents count meanwhile (parallel
// tests wait for the sequential ones to end).
func TestHotDocumentsTakeTheFastPath(t *testing.T) {
	gw := benchGateway(t, benchUpstream(t))
	c := benchClient{client: &http.Client{}, url: gw.URL}
	before := relay.Fallbacks()
	for _, body := range []string{benchJSONRequest, benchStreamRequest, benchLongStreamRequest} {
		c.do(t, body)
	}
	require.Equal(t, before, relay.Fallbacks(), "documents handed to encoding/json")
}
