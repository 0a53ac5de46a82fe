package main

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/gateway"
	_ "modernc.org/sqlite" // to read the key table as it is on disk
)

// TestRestartAfterKill runs the server as a process on a SQLite file,
// kills it with SIGKILL while a video task runs, starts it again on the
// same file and checks that nothing was lost: every task is there, the
// running one is resumed (or failed with an error, never left
// in_progress), a completed video still downloads, every stored response
// still continues with previous_response_id, and a limited key's usage
// is what it was.
func TestRestartAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server: not in -short")
	}
	dir := t.TempDir()
	bin := buildServer(t)

	dbPath := filepath.Join(dir, "state", "gatewaykit.db")
	require.NoError(t, os.Mkdir(filepath.Dir(dbPath), 0o700))
	config := filepath.Join(dir, "gateway.json")
	ms, err := json.Marshal(gateway.DemoFile().Models)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(config, fmt.Appendf(nil, `{
  "keys": [
    {"secret": "sk-limited", "id": "key-limited", "owner": "team", "quota": 1000000},
    {"secret": "sk-video", "id": "key-video", "owner": "team"}
  ],
  "models": %s
}`, ms), 0o600))
	args := []string{"-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0", "-db", "sqlite:" + dbPath, "-config", config}

	// The first life: conversations, a completed video, a running one.
	first := startServer(t, bin, args...)
	require.Contains(t, first.banner, "state: SQLite file "+dbPath)
	c := client{t: t, base: first.url}

	r1 := c.do("POST", "/v1/responses", "sk-limited", `{"model":"demo-chat","input":"first turn"}`, 200)
	r2 := c.do("POST", "/v1/responses", "sk-limited",
		fmt.Sprintf(`{"model":"demo-chat","input":"second turn","previous_response_id":%q}`, r1["id"]), 200)
	c.do("POST", "/v1/chat/completions", "sk-limited", `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`, 200)

	done := c.do("POST", "/v1/videos", "sk-video", `{"model":"demo-video","prompt":"a lighthouse","size":"1280x720","seconds":"4"}`, 200)
	c.waitTask(done["id"].(string), "completed")
	video := c.download(done["id"].(string))
	require.NotEmpty(t, video)
	running := c.do("POST", "/v1/videos", "sk-video", `{"model":"demo-video","prompt":"a storm","size":"1280x720","seconds":"4"}`, 200)
	c.waitTask(running["id"].(string), "in_progress")

	require.NoError(t, first.cmd.Process.Kill()) // SIGKILL: nothing is flushed or closed
	_ = first.cmd.Wait()
	before := keyUsage(t, dbPath, "key-limited")
	require.Positive(t, before.used, "the limited key was charged")

	// The second life, on the same file and configuration.
	second := startServer(t, bin, args...)
	c.base = second.url
	require.Equal(t, before, keyUsage(t, dbPath, "key-limited"), "the key's usage is as it was")

	list := c.do("GET", "/v1/videos?limit=100", "sk-video", "", 200)
	var ids []string
	for _, v := range list["data"].([]any) {
		ids = append(ids, v.(map[string]any)["id"].(string))
	}
	require.ElementsMatch(t, []string{done["id"].(string), running["id"].(string)}, ids, "every task is still there")
	require.Equal(t, "completed", c.do("GET", "/v1/videos/"+done["id"].(string), "sk-video", "", 200)["status"])
	require.Equal(t, video, c.download(done["id"].(string)), "a completed video still downloads")

	final := c.waitTask(running["id"].(string), "completed", "failed")
	t.Logf("the task that was running when the server was killed: %s", final["status"])
	if final["status"] == "failed" {
		require.NotEmpty(t, final["error"].(map[string]any)["message"], "a failed task says why")
	} else {
		require.NotEmpty(t, c.download(running["id"].(string)), "the resumed task's video downloads")
	}

	for _, r := range []map[string]any{r1, r2} {
		c.do("GET", "/v1/responses/"+r["id"].(string), "sk-limited", "", 200)
	}
	r3 := c.do("POST", "/v1/responses", "sk-limited",
		fmt.Sprintf(`{"model":"demo-chat","input":"third turn","previous_response_id":%q}`, r2["id"]), 200)
	require.Equal(t, r2["id"], r3["previous_response_id"], "the conversation continues")
	// The usage reaches the file within the store's commit delay.
	var after usage
	require.Eventually(t, func() bool {
		after = keyUsage(t, dbPath, "key-limited")
		return after.used > before.used
	}, 10*time.Second, 10*time.Millisecond, "and is charged on top of what was used before")
	require.Equal(t, int64(1000000), after.used+after.remaining, "the budget of the file, less all usage")
}

// server is a running example server.
type server struct {
	cmd    *exec.Cmd
	url    string
	banner string
}

var bannerURL = regexp.MustCompile(`on (http://[0-9.:]+)`)

// startServer starts the server binary and waits for its banner; the
// process is ended when the test ends.
func startServer(t *testing.T, bin string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	logs, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	require.NoError(t, err)
	cmd.Stderr = logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logs.Name())
			t.Logf("the server logged:\n%s", b)
		}
		logs.Close()
	})
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	s := &server{cmd: cmd}
	var banner []string
	for line := range lines {
		banner = append(banner, line)
		if m := bannerURL.FindStringSubmatch(line); m != nil {
			s.url = m[1]
		}
		if strings.HasPrefix(strings.TrimSpace(line), "models:") {
			break // the banner's last line without routes
		}
	}
	go func() {
		for range lines { // keep draining, so that the server never blocks
		}
	}()
	require.NotEmpty(t, s.url, "no banner: %q", banner)
	s.banner = strings.Join(banner, "\n")
	return s
}

// client makes the test's requests.
type client struct {
	t    *testing.T
	base string
}

// do sends a request and decodes the JSON reply, which must have the
// status want.
func (c *client) do(method, path, key, body string, want int) map[string]any {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	require.NoError(c.t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(c.t, err)
	require.Equal(c.t, want, res.StatusCode, "%s %s: %s", method, path, b)
	var v map[string]any
	require.NoError(c.t, json.Unmarshal(b, &v), "%s %s: %s", method, path, b)
	return v
}

// waitTask polls a video task until its status is one of statuses, and
// fails if it reaches another final status.
func (c *client) waitTask(id string, statuses ...string) map[string]any {
	c.t.Helper()
	for range 600 { // at most a minute: the demo's videos take seconds
		task := c.do("GET", "/v1/videos/"+id, "sk-video", "", 200)
		status := task["status"].(string)
		for _, s := range statuses {
			if status == s {
				return task
			}
		}
		require.NotContains(c.t, []string{"completed", "failed"}, status, "task %s: %v", id, task)
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("task %s never became %v", id, statuses)
	return nil
}

// download returns the video of a completed task.
func (c *client) download(id string) []byte {
	c.t.Helper()
	req, err := http.NewRequest("GET", c.base+"/v1/videos/"+id+"/content", nil)
	require.NoError(c.t, err)
	req.Header.Set("Authorization", "Bearer sk-video")
	res, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(c.t, err)
	require.Equal(c.t, http.StatusOK, res.StatusCode, "%s", b)
	return b
}

// usage is a key's quota as the database file holds it.
type usage struct{ used, remaining int64 }

// keyUsage reads a key's usage from the database file, read-only, as
// another process does.
func keyUsage(t *testing.T, path, id string) usage {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?mode=ro&_pragma=busy_timeout(5000)")
	require.NoError(t, err)
	defer db.Close()
	var u usage
	require.NoError(t, db.QueryRow(`SELECT used, remaining FROM keys WHERE id = ?`, id).Scan(&u.used, &u.remaining))
	return u
}
