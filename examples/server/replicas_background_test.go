package main

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/sse"
	"github.com/gatewaykit/gatewaykit/store/postgres/pgtest"
)

// TestTwoReplicasRunBackgroundResponses runs two example server
// processes on one PostgreSQL database: a background run whose replica
// is killed is left to the other (run again when no client saw any of
// it, failed when a client had seen its events), and a run created on
// one replica is polled, cancelled and its stream resumed on the other.
func TestTwoReplicasRunBackgroundResponses(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	bin := buildServer(t)
	start := func(t *testing.T, name string) *replica {
		t.Helper()
		return startReplica(t, bin, name, "-db", dsn, "-background-lease", "1s", "-background-delay", "50ms")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	status := func(r *replica, id string) string {
		return call(t, r, "GET", "/v1/responses/"+id, "sk-demo", "", 200)["status"].(string)
	}

	// A alone runs two background responses, one streamed (whose client
	// reads some of its events); A is killed while they run.
	a := start(t, "A")
	quiet := call(t, a, "POST", "/v1/responses", "sk-demo", `{"model":"demo-chat","input":"hello","background":true}`, 200)["id"].(string)
	seen := openStream(t, a.url+"/v1/responses", `{"model":"demo-chat","input":"hello","background":true,"stream":true}`)
	seqs, streamed := seen.until(t, 5)
	require.Equal(t, []int{0, 1, 2, 3, 4, 5}, seqs)
	seen.close()
	waitFor(t, func() bool { return status(a, quiet) == "in_progress" }, "A to start %s", quiet)
	require.NoError(t, a.cmd.Process.Kill()) // no clean shutdown: the leases are left behind
	<-a.done
	a.done <- nil

	// B takes them over once the leases have run out: the run nobody saw
	// runs again and completes; the one whose events were seen fails.
	b := start(t, "B")
	waitFor(t, func() bool { return status(b, quiet) == "completed" }, "B to finish %s", quiet)
	var attempts int
	require.NoError(t, conn.QueryRow(ctx, `SELECT (convert_from(data, 'UTF8')::json->>'attempts')::int FROM gk_runs WHERE id = $1`, quiet).Scan(&attempts))
	require.Equal(t, 2, attempts, "claimed by A, then by B after A's lease ran out")
	waitFor(t, func() bool { return status(b, streamed) == "failed" }, "B to fail %s", streamed)
	failed := call(t, b, "GET", "/v1/responses/"+streamed, "sk-demo", "", 200)
	require.Contains(t, failed["error"].(map[string]any)["message"], "stopped responding")

	// A run created on A2 is polled and cancelled on B.
	a = start(t, "A2")
	id := call(t, a, "POST", "/v1/responses", "sk-demo", `{"model":"demo-chat","input":"Tell me a story.","background":true}`, 200)["id"].(string)
	waitFor(t, func() bool { return status(b, id) == "in_progress" }, "a replica to start %s", id)
	require.Equal(t, "cancelled", call(t, b, "POST", "/v1/responses/"+id+"/cancel", "sk-demo", "", 200)["status"])
	waitFor(t, func() bool {
		var done bool
		require.NoError(t, conn.QueryRow(ctx, `SELECT done FROM gk_runs WHERE id = $1`, id).Scan(&done))
		return done
	}, "the worker of %s to stop", id)
	require.Equal(t, "cancelled", status(a, id))

	// A stream started on A2, dropped after event 10, is resumed on B:
	// every event once.
	s := openStream(t, a.url+"/v1/responses", `{"model":"demo-chat","input":"hello","background":true,"stream":true}`)
	first, sid := s.until(t, 10)
	s.close()
	r := openGet(t, b.url+"/v1/responses/"+sid+"?stream=true&starting_after=10")
	rest, _ := r.until(t, -1)
	r.close()
	all := append(first, rest...)
	for i, seq := range all {
		require.Equal(t, i, seq, "every event once, in order")
	}
	require.Equal(t, "completed", status(a, sid))
}

// sseClient reads the events of one SSE reply.
type sseClient struct {
	res  *http.Response
	next func() (sse.Event, error, bool)
	stop func()
}

func openStream(t *testing.T, url, body string) *sseClient {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	return openSSE(t, req)
}

func openGet(t *testing.T, url string) *sseClient {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	require.NoError(t, err)
	return openSSE(t, req)
}

func openSSE(t *testing.T, req *http.Request) *sseClient {
	t.Helper()
	req.Header.Set("Authorization", "Bearer sk-demo")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, 200, res.StatusCode)
	require.Contains(t, res.Header.Get("Content-Type"), "text/event-stream")
	next, stop := iter.Pull2(sse.Read(res.Body))
	return &sseClient{res: res, next: next, stop: stop}
}

// until reads events up to sequence number last (to the end for -1) and
// returns their sequence numbers and the response id.
func (c *sseClient) until(t *testing.T, last int) (seqs []int, id string) {
	t.Helper()
	for {
		ev, err, ok := c.next()
		require.NoError(t, err)
		if !ok || ev.IsDone() {
			require.Equal(t, -1, last, "the stream ended early")
			return seqs, id
		}
		var data struct {
			Seq      int `json:"sequence_number"`
			Response *struct {
				ID string `json:"id"`
			} `json:"response"`
		}
		require.NoError(t, json.Unmarshal([]byte(ev.Data), &data), ev.Data)
		if data.Response != nil {
			id = data.Response.ID
		}
		seqs = append(seqs, data.Seq)
		if data.Seq == last {
			return seqs, id
		}
	}
}

func (c *sseClient) close() {
	c.stop()
	c.res.Body.Close()
}
