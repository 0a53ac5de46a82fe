package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/admin"
	"github.com/gatewaykit/gatewaykit/demo"
)

// startRunLines runs the server until the test ends and returns the
// lines of its banner, read once every port is bound.
func startRunLines(t *testing.T, o options) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, o, pw, slog.New(slog.DiscardHandler))
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		go io.Copy(io.Discard, pr)
		select {
		case err := <-done:
			require.NoError(t, err, "a graceful shutdown")
		case <-time.After(30 * time.Second):
			t.Error("run did not return after its context ended")
		}
	})
	var lines []string
	r := bufio.NewReader(pr)
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		lines = append(lines, strings.TrimSpace(line))
		if strings.HasPrefix(line, "  models:") { // the banner's last line without routes
			break
		}
	}
	// The admin listener's lines, if any, follow the rest of the banner:
	// the metrics, then the admin API.
	for _, more := range []bool{o.adminAddr != "", o.adminKey != ""} {
		if !more {
			continue
		}
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		lines = append(lines, strings.TrimSpace(line))
	}
	go io.Copy(io.Discard, pr)
	return lines
}

// TestAdminAPIOnTheAdminListener follows the README's admin walk-through:
// the admin API on its own listener, a key created there used on the
// gateway, its usage read back with the demo models' example prices.
func TestAdminAPIOnTheAdminListener(t *testing.T) {
	for _, db := range []string{"memory", "sqlite"} {
		t.Run(db, func(t *testing.T) {
			if db == "sqlite" {
				db = "sqlite:" + filepath.Join(t.TempDir(), "gateway.db")
			}
			testAdminAPI(t, db)
		})
	}
}

func testAdminAPI(t *testing.T, db string) {
	const adminKey = "test-admin-key-0123456789"
	lines := startRunLines(t, options{db: db, addr: "127.0.0.1:0", adminAddr: "127.0.0.1:0", adminKey: adminKey,
		maxConns: 8, textOptions: []demo.TextOption{}})
	apiURL, ok := strings.CutPrefix(lines[0], "gatewaykit example server on ")
	require.True(t, ok, lines[0])
	last := lines[len(lines)-1]
	adminURL, ok := strings.CutPrefix(last, "admin API: ")
	require.True(t, ok, "the banner names the admin API: %q", last)
	adminURL, _, _ = strings.Cut(adminURL, "/admin/v1/")
	require.NotEqual(t, apiURL, adminURL, "a listener of its own")

	call := func(method, url, bearer, body string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+bearer)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		data, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, data
	}

	status, body := call("POST", adminURL+"/admin/v1/keys", adminKey, `{"owner":"acme","budget_usd":5}`)
	require.Equal(t, http.StatusCreated, status, "%s", body)
	var key struct{ ID, Secret string }
	require.NoError(t, json.Unmarshal(body, &key))

	status, body = call("POST", apiURL+"/v1/chat/completions", key.Secret, `{"model":"demo-chat","messages":[{"role":"user","content":"Hello"}]}`)
	require.Equal(t, http.StatusOK, status, "%s", body)

	status, body = call("GET", adminURL+"/admin/v1/usage?group_by=model&key_id="+key.ID, adminKey, "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	var usage struct {
		Data []struct {
			Model    string
			Requests int
			CostUSD  float64 `json:"cost_usd"`
		}
	}
	require.NoError(t, json.Unmarshal(body, &usage))
	require.Len(t, usage.Data, 1, "%s", body)
	require.Equal(t, "demo-chat", usage.Data[0].Model)
	require.Equal(t, 1, usage.Data[0].Requests)
	require.Positive(t, usage.Data[0].CostUSD, "the demo model's example price")

	status, _ = call("GET", apiURL+"/admin/v1/keys", "sk-demo", "")
	require.Equal(t, http.StatusNotFound, status, "the admin API is not on the main listener")
	status, _ = call("GET", apiURL+"/admin/v1/keys", adminKey, "")
	require.Equal(t, http.StatusUnauthorized, status, "the admin key is not an API key")
	status, _ = call("GET", adminURL+"/admin/v1/keys", "sk-demo", "")
	require.Equal(t, http.StatusUnauthorized, status, "an API key is not the admin key")

	status, body = call("DELETE", adminURL+"/admin/v1/keys/"+key.ID, adminKey, "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	status, _ = call("POST", apiURL+"/v1/chat/completions", key.Secret, `{"model":"demo-chat","messages":[{"role":"user","content":"Hello"}]}`)
	require.Equal(t, http.StatusUnauthorized, status, "revoked")

	// The browser console on the main listener is told where the admin API
	// is, for its admin views.
	status, body = call("GET", apiURL+"/console/config.json", "", "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	require.JSONEq(t, `{"admin_url":"`+adminURL+`"}`, string(body))
}

// TestNoAdminAPIWithoutAnAdminKey: without an admin key, the admin
// listener serves the metrics only.
func TestNoAdminAPIWithoutAnAdminKey(t *testing.T) {
	lines := startRunLines(t, options{db: "memory", addr: "127.0.0.1:0", adminAddr: "127.0.0.1:0", maxConns: 8,
		textOptions: []demo.TextOption{}})
	var metricsURL string
	for _, l := range lines {
		require.NotContains(t, l, "admin API")
		if u, ok := strings.CutPrefix(strings.TrimSpace(l), "metrics: "); ok {
			metricsURL = u
		}
	}
	require.NotEmpty(t, metricsURL, "the banner names the metrics: %q", lines)
	res, err := http.Get(metricsURL)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	res, err = http.Get(strings.TrimSuffix(metricsURL, "/metrics") + "/admin/v1/keys")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusNotFound, res.StatusCode)
}

// TestAdminConsoleSessionDownloadsContent: with an admin key, the admin
// API mints a session of an account, which the video content route takes
// in place of an API key (spec §4.7, §5.3), and no other route does.
func TestAdminConsoleSessionDownloadsContent(t *testing.T) {
	const adminKey = "test-admin-key-0123456789"
	lines := startRunLines(t, options{db: "memory", addr: "127.0.0.1:0", adminAddr: "127.0.0.1:0", adminKey: adminKey,
		maxConns: 8, textOptions: []demo.TextOption{}})
	apiURL, _ := strings.CutPrefix(lines[0], "gatewaykit example server on ")
	adminURL, ok := strings.CutPrefix(lines[len(lines)-1], "admin API: ")
	require.True(t, ok, lines)
	adminURL, _, _ = strings.Cut(adminURL, "/admin/v1/")
	call := func(method, url, bearer, session, body string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		require.NoError(t, err)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		if session != "" {
			req.AddCookie(&http.Cookie{Name: admin.SessionCookie, Value: session})
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		data, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, data
	}

	// A video of sk-demo's (account "demo"), generated to the end.
	status, body := call("POST", apiURL+"/v1/videos", "sk-demo", "", `{"model":"demo-video","prompt":"kite","seconds":"4","size":"1280x720"}`)
	require.Equal(t, http.StatusOK, status, "%s", body)
	var task struct{ ID, Status string }
	require.NoError(t, json.Unmarshal(body, &task))
	for range 600 { // at most a minute: the demo's videos take seconds
		status, body = call("GET", apiURL+"/v1/videos/"+task.ID, "sk-demo", "", "")
		require.Equal(t, http.StatusOK, status, "%s", body)
		require.NoError(t, json.Unmarshal(body, &task))
		if task.Status == "completed" {
			break
		}
		require.NotEqual(t, "failed", task.Status, "%s", body)
		time.Sleep(100 * time.Millisecond)
	}
	require.Equal(t, "completed", task.Status)

	mint := func(owner string) string {
		t.Helper()
		status, body := call("POST", adminURL+"/admin/v1/sessions", adminKey, "", `{"owner":"`+owner+`"}`)
		require.Equal(t, http.StatusCreated, status, "%s", body)
		var s struct{ Token, Cookie string }
		require.NoError(t, json.Unmarshal(body, &s))
		require.Equal(t, admin.SessionCookie, s.Cookie)
		return s.Token
	}
	session := mint("demo")
	content := apiURL + "/v1/videos/" + task.ID + "/content"
	status, body = call("GET", content, "", session, "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	_, withKey := call("GET", content, "sk-demo", "", "")
	require.Equal(t, withKey, body, "the same video as the key downloads")

	status, _ = call("GET", content, "", mint("another"), "")
	require.Equal(t, http.StatusNotFound, status, "another account's session sees no such task")
	status, _ = call("GET", content, "", session+"x", "")
	require.Equal(t, http.StatusUnauthorized, status, "a forged session")
	for _, path := range []string{"/v1/videos/" + task.ID, "/v1/videos", "/v1/models"} {
		status, body = call("GET", apiURL+path, "", session, "")
		require.Equal(t, http.StatusUnauthorized, status, "%s takes no session: %s", path, body)
		require.Contains(t, string(body), `"missing_authorization"`, path)
	}
}
