package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/videos"
)

func TestNewRefusesARelativePublicBaseURL(t *testing.T) {
	t.Parallel()
	f := gateway.DemoFile()
	keys, err := gateway.NewKeyStore(context.Background(), f.Keys)
	require.NoError(t, err)
	_, err = gateway.New(gateway.Config{Keys: keys, Catalog: demoCatalog(), PublicBaseURL: "api.example.com"})
	require.ErrorContains(t, err, "PublicBaseURL")
}

// completedVideo creates a video task on g, waits until it completes and
// returns its status as fetched with the given Host header. Call it in a
// synctest bubble: it polls every 10 ms of the bubble's clock, which
// moves only when the runner waits.
func completedVideo(t *testing.T, g *gateway.Gateway, host string) videos.Video {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = g.Run(ctx) }()
	status, body := do(t, g, "POST", "/v1/videos", "sk-demo", `{"model":"demo-video","prompt":"a kite","size":"1280x720","seconds":"4"}`)
	require.Equal(t, http.StatusOK, status, body)
	var created videos.Created
	require.NoError(t, json.Unmarshal([]byte(body), &created))
	deadline := time.Now().Add(10 * time.Second) // of the bubble's clock
	for {
		req := httptest.NewRequest("GET", "/v1/videos/"+created.ID, nil)
		req.Host = host
		req.Header.Set("Authorization", "Bearer sk-demo")
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var v videos.Video
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v))
		if v.Status == videos.StatusCompleted {
			return v
		}
		require.NotEqual(t, videos.StatusFailed, v.Status, rec.Body.String())
		require.True(t, time.Now().Before(deadline), "the task did not complete: %s", rec.Body.String())
		time.Sleep(10 * time.Millisecond)
	}
}

func TestVideoURLsIgnoreTheHostHeader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, base, want string }{
		{"relative without a base URL", "", "/v1/videos/"},
		{"under the public base URL", "https://api.example.com", "https://api.example.com/v1/videos/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				g := newDemo(t, func(c *gateway.Config) {
					c.Videos = demo.NewVideoGenerator(demo.WithVideoDuration(0))
					c.PublicBaseURL = tc.base
				})
				v := completedVideo(t, g, "evil.example")
				require.True(t, strings.HasPrefix(v.Metadata.URL, tc.want), v.Metadata.URL)
				require.True(t, strings.HasPrefix(v.Metadata.ThumbnailURL, tc.want), v.Metadata.ThumbnailURL)
				require.NotContains(t, v.Metadata.URL, "evil.example")
			})
		})
	}
}

func demoCatalog() *models.MemoryCatalog {
	return models.NewMemoryCatalog(gateway.DemoFile().Models...)
}

// rawRequest opens a connection to srv and writes head (the request line
// and headers, without the blank line) and the first bytes of a body.
func rawRequest(t *testing.T, srv *httptest.Server, head, body string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	// Every wait of these tests is bounded by this deadline.
	require.NoError(t, conn.SetDeadline(time.Now().Add(20*time.Second)))
	_, err = io.WriteString(conn, strings.ReplaceAll(head, "\n", "\r\n")+"\r\n\r\n"+body)
	require.NoError(t, err)
	return conn, bufio.NewReader(conn)
}

// readError reads a reply and decodes its error object.
func readReply(t *testing.T, br *bufio.Reader) (*http.Response, map[string]any) {
	t.Helper()
	res, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	defer res.Body.Close()
	var m map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&m))
	return res, m
}

func TestASlowBodyIsCutAtTheReadDeadline(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, contentType, body string
		status                        int
	}{
		{"chat", "/v1/chat/completions", "application/json", `{"model":"demo-chat","messages":[`, http.StatusRequestTimeout},
		{"responses", "/v1/responses", "application/json", `{"model":"demo-chat",`, http.StatusRequestTimeout},
		// The video create paths answer every failure with a 400.
		{"videos", "/v1/videos", "application/json", `{"model":"demo-video",`, http.StatusBadRequest},
		{"videos multipart", "/v1/videos", "multipart/form-data; boundary=XX",
			"--XX\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\ndemo-video\r\n--XX\r\nContent-Disposition: form-data; name=\"prompt\"\r\n\r\na ki",
			http.StatusBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newDemo(t, func(c *gateway.Config) { c.BodyReadTimeout = 100 * time.Millisecond })
			srv := httptest.NewServer(g)
			t.Cleanup(srv.Close)
			conn, br := rawRequest(t, srv, "POST "+tc.path+" HTTP/1.1\nHost: gw\nAuthorization: Bearer sk-demo\nContent-Type: "+tc.contentType+"\nContent-Length: 1000", tc.body)

			res, m := readReply(t, br)
			require.Equal(t, tc.status, res.StatusCode)
			e := m["error"].(map[string]any)
			require.Equal(t, "request_timeout", e["code"], "body: %v", m)
			require.Contains(t, e["message"], "not received within 100ms")

			// The connection is not held: the server closes it.
			_, err := br.ReadByte()
			require.ErrorIs(t, err, io.EOF)
			_ = conn
		})
	}
}

func TestAStreamOutlivesTheBodyReadDeadline(t *testing.T) {
	t.Parallel()
	g := newDemo(t, func(c *gateway.Config) {
		c.BodyReadTimeout = 20 * time.Millisecond
		// Paced chunks: the stream lasts many times the deadline, which
		// would cut it (the server's background read would fail and
		// cancel the request) if it stood once the body is read.
		c.Chat = demo.NewTextBackend(demo.WithChunkDelay(10 * time.Millisecond)).Chat()
	})
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	body := `{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"tell me a long story please"}]}`
	req, err := http.NewRequest("POST", srv.URL+"/v1/chat/completions", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-demo")
	req.Header.Set("Content-Type", "application/json")
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	all, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Contains(t, string(all), "data: [DONE]")
	require.Greater(t, strings.Count(string(all), "data: "), 5)
}

func TestBodyBytesInFlightAreBounded(t *testing.T) {
	t.Parallel()
	// A route behind the same middleware that says when its handler has
	// started, then reads its body.
	started := make(chan struct{}, 1)
	g := newDemo(t, func(c *gateway.Config) {
		c.MaxBodyBytesInFlight = 1000
		c.Routes = func(mux *http.ServeMux) {
			mux.HandleFunc("POST /test/hold", func(w http.ResponseWriter, r *http.Request) {
				started <- struct{}{}
				_, err := io.Copy(io.Discard, r.Body)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
				}
			})
		}
	})
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	head := func(path string) string {
		return "POST " + path + " HTTP/1.1\nHost: gw\nAuthorization: Bearer sk-demo\nContent-Type: application/json\n"
	}

	// A client holds 800 bytes of room, sending its body slowly.
	held, heldReader := rawRequest(t, srv, head("/test/hold")+"Content-Length: 800", strings.Repeat(" ", 100))
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the holding request did not start")
	}

	// Others whose bodies do not fit are refused at once, in their
	// family's shape, with Retry-After.
	for _, tc := range []struct {
		path string
		flat bool
	}{{"/v1/chat/completions", false}, {"/v1/responses", false}, {"/v1/videos", true}} {
		_, br := rawRequest(t, srv, head(tc.path)+"Content-Length: 500", "")
		res, m := readReply(t, br)
		require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, tc.path)
		require.Equal(t, "1", res.Header.Get("Retry-After"))
		require.Equal(t, "service_unavailable", m["error"].(map[string]any)["code"], tc.path)
		if tc.flat {
			require.Equal(t, "service_unavailable", m["code"], "the flat shape of the video create path")
		}
	}

	// A body without a Content-Length fails once it outgrows the room.
	_, br := rawRequest(t, srv, head("/v1/chat/completions")+"Transfer-Encoding: chunked",
		fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", 600, strings.Repeat(" ", 600)))
	res, m := readReply(t, br)
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, "body: %v", m)
	require.Equal(t, "service_unavailable", m["error"].(map[string]any)["code"])

	// A body that fits is served.
	small := `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`
	status, body := do(t, g, "POST", "/v1/chat/completions", "sk-demo", small)
	require.Equal(t, http.StatusOK, status, body)

	// When the first finishes, its room is free again.
	_, err := io.WriteString(held, strings.Repeat(" ", 700))
	require.NoError(t, err)
	res, err = http.ReadResponse(heldReader, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	_, br = rawRequest(t, srv, head("/v1/chat/completions")+"Content-Length: 900", strings.Repeat(" ", 900-len(small))+small)
	res, m = readReply(t, br)
	require.Equal(t, http.StatusOK, res.StatusCode, "body: %v", m)
}

// waitFor polls cond until it holds, for at most 10 seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "condition not met in time")
		time.Sleep(5 * time.Millisecond)
	}
}

func TestTheTextEndpointsHaveTheirOwnBodyLimit(t *testing.T) {
	t.Parallel()
	g := newDemo(t, func(c *gateway.Config) {
		c.MaxRequestBytes = 1 << 10
		c.MaxVideoRequestBytes = 4 << 10
	})
	pad := strings.Repeat(" ", 2<<10)
	for _, path := range []string{"/v1/chat/completions", "/v1/completions", "/v1/responses"} {
		status, body := do(t, g, "POST", path, "sk-demo", `{"model":"demo-chat"}`+pad)
		require.Equal(t, http.StatusBadRequest, status, path)
		require.Contains(t, body, "larger than the 1 KiB limit", path)
	}
	status, body := do(t, g, "POST", "/v1/videos", "sk-demo", `{"model":"demo-video","prompt":"a kite","size":"1280x720"}`+pad)
	require.Equal(t, http.StatusOK, status, body)
	status, body = do(t, g, "POST", "/v1/videos", "sk-demo", `{"model":"demo-video","prompt":"a kite","size":"1280x720"}`+pad+pad)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, "larger than the 4 KiB limit")
}
