package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/examples/internal/conversationflow"
	"github.com/gatewaykit/gatewaykit/examples/internal/readme"
	"github.com/gatewaykit/gatewaykit/store/postgres/pgtest"
	"github.com/gatewaykit/gatewaykit/store/redis/redistest"
)

// replica is one example server process of TestTwoReplicas.
type replica struct {
	name string
	url  string
	cmd  *exec.Cmd
	done chan error
}

var bannerAddr = regexp.MustCompile(`example server on (http://\S+)`)

// buildServer builds the example server into a temporary folder and
// returns the binary's path.
func buildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "server")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build ./examples/server:\n%s", out)
	return bin
}

// startReplica starts the example server bin on loopback ports with the
// extra flags args, waits for its banner, and stops it (SIGTERM) at the
// end of the test, whose log it prints if the test failed.
func startReplica(t *testing.T, bin, name string, args ...string) *replica {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	logs, err := os.Create(filepath.Join(t.TempDir(), name+".log"))
	require.NoError(t, err)
	cmd.Stderr = logs
	require.NoError(t, cmd.Start())
	r := &replica{name: name, cmd: cmd, done: make(chan error, 1)}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := bannerAddr.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		close(urls)
		r.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-r.done
		if t.Failed() {
			b, _ := os.ReadFile(logs.Name())
			t.Logf("replica %s logged:\n%s", name, b)
		}
		logs.Close()
	})
	u, ok := <-urls
	require.True(t, ok, "replica %s exited before its banner", name)
	r.url = u
	return r
}

// TestTwoReplicasShareOnePostgresAndOneRedis runs two example server
// processes on one PostgreSQL database and one Redis server, and shows
// that either serves what the other started, that the rate limit and the
// usage of a key count the requests of both, and that a task whose
// process was killed is finished by the other after its lease.
// Conversations, of previous_response_id and of /v1/conversations, are
// continued on the replica that did not start them.
func TestTwoReplicasShareOnePostgresAndOneRedis(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	rc, prefix := redistest.NewClient(t)
	redisURL := "redis://" + rc.Options().Addr + "/" + strconv.Itoa(rc.Options().DB)
	bin := buildServer(t)
	start := func(t *testing.T, name string) *replica {
		t.Helper()
		return startReplica(t, bin, name, "-db", dsn, "-redis", redisURL, "-redis-prefix", prefix, "-video-lease", "1s")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })

	// A creates a task and starts it; it is killed while it runs.
	a := start(t, "A")
	id := call(t, a, "POST", "/v1/videos", "sk-demo", `{"model":"demo-video","prompt":"a kite","seconds":"4","size":"1280x720"}`, 200)["id"].(string)
	waitFor(t, func() bool {
		return call(t, a, "GET", "/v1/videos/"+id, "sk-demo", "", 200)["status"] == "in_progress"
	}, "A to start task %s", id)
	require.NoError(t, a.cmd.Process.Kill()) // SIGKILL: no clean shutdown, the lease is left behind
	<-a.done
	a.done <- nil // for the cleanup

	// B takes it over once the lease has run out, finishes it, and
	// serves its status and content.
	b := start(t, "B")
	waitFor(t, func() bool {
		st := call(t, b, "GET", "/v1/videos/"+id, "sk-demo", "", 200)["status"]
		require.NotEqual(t, "failed", st)
		return st == "completed"
	}, "B to finish task %s", id)
	var attempts int
	require.NoError(t, conn.QueryRow(ctx, `SELECT (convert_from(data, 'UTF8')::json->>'attempts')::int FROM gk_tasks WHERE id = $1`, id).Scan(&attempts))
	require.Equal(t, 2, attempts, "claimed by A, then by B after A's lease ran out")
	res, body := do(t, b, "GET", "/v1/videos/"+id+"/content", "sk-demo", "")
	require.Equal(t, 200, res.StatusCode, "%s", body)
	require.Equal(t, "video/mp4", res.Header.Get("Content-Type"))
	require.Equal(t, "ftyp", string(body[4:8]), "an MP4 file")

	// A conversation started on a new A continues on B.
	a = start(t, "A2")
	first := call(t, a, "POST", "/v1/responses", "sk-demo", `{"model":"demo-chat","input":"my name is Ada"}`, 200)["id"].(string)
	next := call(t, b, "POST", "/v1/responses", "sk-demo", `{"model":"demo-chat","input":"what is my name?","previous_response_id":"`+first+`"}`, 200)
	require.Equal(t, first, next["previous_response_id"])
	require.Equal(t, first, call(t, b, "GET", "/v1/responses/"+first, "sk-demo", "", 200)["id"])

	// A conversation created on A is read, continued and deleted on B, and
	// listed and updated on A, with the official Go SDK.
	conversationflow.Run(t, a.sdk(), b.sdk())

	// A key's usage is the sum of what both charged. sk-demo-limited
	// has been charged nothing so far; a chat is settled just after its
	// reply is written, so wait for both settlements (usage only grows).
	used := func() int64 {
		var u int64
		require.NoError(t, conn.QueryRow(ctx, `SELECT used FROM gk_keys WHERE id = 'key-demo-limited'`).Scan(&u))
		return u
	}
	require.Zero(t, used())
	chat := `{"model":"demo-chat","messages":[{"role":"user","content":"count"}]}`
	var charged int64
	for _, r := range []*replica{a, b} {
		usage := call(t, r, "POST", "/v1/chat/completions", "sk-demo-limited", chat, 200)["usage"].(map[string]any)
		charged += int64(usage["total_tokens"].(float64))
	}
	require.Positive(t, charged)
	waitFor(t, func() bool { return used() >= charged }, "the usage of both chats")
	require.Equal(t, charged, used(), "usage recorded by A and B")

	// sk-demo-limited has 5 requests a minute across both replicas: the
	// two chats above took two.
	var statuses []int
	for i := range 5 {
		r := []*replica{a, b}[i%2]
		res, body := do(t, r, "GET", "/v1/models", "sk-demo-limited", "")
		statuses = append(statuses, res.StatusCode)
		if res.StatusCode == 429 {
			require.Contains(t, string(body), "rate_limit_exceeded")
		}
	}
	require.Equal(t, []int{200, 200, 200, 429, 429}, statuses)
}

// sdk returns an official Go SDK client of r, with the key sk-demo.
func (r *replica) sdk() openai.Client {
	return openai.NewClient(option.WithBaseURL(r.url+"/v1/"), option.WithAPIKey("sk-demo"), option.WithMaxRetries(0))
}

// do makes one request to r and returns the response and its body.
func do(t *testing.T, r *replica, method, path, key, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, r.url+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "replica %s", r.name)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, b
}

// call makes one JSON request to r, requires status and returns the
// decoded reply.
func call(t *testing.T, r *replica, method, path, key, body string, status int) map[string]any {
	t.Helper()
	res, b := do(t, r, method, path, key, body)
	require.Equal(t, status, res.StatusCode, "%s %s on replica %s: %s", method, path, r.name, b)
	var v map[string]any
	require.NoError(t, json.NewDecoder(bytes.NewReader(b)).Decode(&v))
	return v
}

// waitFor polls cond until it holds; the test's own timeout bounds it.
func waitFor(t *testing.T, cond func() bool, what string, args ...any) {
	t.Helper()
	for !cond() {
		if t.Context().Err() != nil {
			t.Fatalf("waiting for "+what, args...)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestREADMEReplicasStartOnOneMachine starts the two replicas of the
// README's "Many replicas" section with the README's own arguments, side
// by side: both start, and both serve their API and their admin
// listener. Only the database, the Redis server (with a prefix of its
// own) and the ports differ: each port the README names, or that a
// command leaves at its default, becomes a free port, the same one for
// the same number, so that commands that would collide on a reader's
// machine collide here too.
func TestREADMEReplicasStartOnOneMachine(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	rc, prefix := redistest.NewClient(t)
	redisURL := "redis://" + rc.Options().Addr + "/" + strconv.Itoa(rc.Options().DB)
	cmds := readme.Commands(t, "../../README.md", "### Many replicas: PostgreSQL and Redis")
	require.Len(t, cmds, 2, "two replicas")
	bin := readme.Build(t, ".")
	defaults := readme.Defaults(t, bin)
	ports := readme.Ports{}
	dir := t.TempDir()
	var procs []*readme.Process
	for _, c := range cmds {
		require.Equal(t, "server", c.Example)
		_, ok := c.Flag("-db")
		require.True(t, ok, "a replica names its database")
		for _, f := range []string{"-addr", "-admin-addr"} {
			v, ok := c.Flag(f)
			if !ok {
				v = defaults[f]
			}
			c = c.With(f, ports.Addr(t, v))
		}
		c = c.With("-db", dsn).With("-redis", redisURL).With("-redis-prefix", prefix)
		procs = append(procs, readme.Start(t, dir, bin, c.Args...))
	}
	for i, p := range procs {
		api := bannerAddr.FindStringSubmatch(p.WaitFor(t, "example server on"))[1]
		metrics := strings.Fields(p.WaitFor(t, "metrics: "))[1]
		for _, u := range []string{api + "/healthz", metrics} {
			res, err := http.Get(u)
			require.NoError(t, err, "replica %d: %s", i+1, u)
			res.Body.Close()
			require.Equal(t, http.StatusOK, res.StatusCode, "replica %d: %s", i+1, u)
		}
	}
}
