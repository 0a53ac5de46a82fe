package relay_test

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/relay/relaytest"
	"github.com/gatewaykit/gatewaykit/sse"
)

// TestDisconnectLeavesNothingRunning hangs up in the middle of a relayed
// stream, and before the first byte of a relayed reply, and checks that
// the upstream request is closed, the gateway's handler returns, and the
// number of goroutines comes back to what it was. It does not run in
// parallel: it counts goroutines.
func TestDisconnectLeavesNothingRunning(t *testing.T) {
	g := newGateway(t, nil)
	client := g.srv.Client()
	// Warm up: connections, the runner, the transport's pools.
	res := g.post(t, "/v1/chat/completions", chatBody(relaytest.ModeOK, `,"stream":true`))
	events(t, res.Body)
	g.waitServed()
	baseline := runtime.NumGoroutine()

	for i, tc := range []struct{ mode, extra string }{
		{relaytest.ModeHangMidStream, `,"stream":true`},
		{relaytest.ModeHang, ``},
		{relaytest.ModeHang, `,"stream":true`},
	} {
		ctx, hangUp := context.WithCancel(t.Context())
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.srv.URL+"/v1/chat/completions", strings.NewReader(chatBody(tc.mode, tc.extra)))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+clientKey)
		done := make(chan struct{})
		go func() {
			defer close(done)
			res, err := client.Do(req)
			if err != nil {
				return
			}
			defer res.Body.Close()
			for _, err := range sse.Read(res.Body) {
				if err != nil {
					return
				}
			}
		}()
		waitRequests(t, g.up, i+2)
		hangUp()
		<-done
		<-g.up.Requests()[i+1].Cancelled
		g.waitServed()
	}
	require.Eventually(t, func() bool {
		client.CloseIdleConnections()
		return runtime.NumGoroutine() <= baseline
	}, 10*time.Second, 10*time.Millisecond, "goroutines: %d, baseline %d", runtime.NumGoroutine(), baseline)
}
