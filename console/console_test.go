package console_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/console"
)

func newMux(c console.Config) *http.ServeMux {
	mux := http.NewServeMux()
	console.Register(mux, console.NewHandler(c))
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTeapot) // stands for the gateway
		io.WriteString(w, `{"gateway":true}`)
	}))
	return mux
}

func serve(h http.Handler, method, target string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec
}

func TestHandlerRoutes(t *testing.T) {
	t.Parallel()
	mux := newMux(console.Config{AdminURL: "http://127.0.0.1:8090/"})
	tests := []struct {
		name, method, target string
		status               int
		contentType, body    string
	}{
		{"the page", "GET", "/", 200, "text/html; charset=utf-8", `<script type="module" src="console/app.js">`},
		{"the page, HEAD", "HEAD", "/", 200, "text/html; charset=utf-8", ""},
		{"a module", "GET", "/console/app.js", 200, "text/javascript; charset=utf-8", "import"},
		{"the style", "GET", "/console/style.css", 200, "text/css; charset=utf-8", ":focus-visible"},
		{"the configuration", "GET", "/console/config.json", 200, "application/json", `{"admin_url":"http://127.0.0.1:8090"}`},
		{"an unknown file", "GET", "/console/nope.js", 404, "text/plain; charset=utf-8", "404 page not found"},
		{"a directory", "GET", "/console/", 404, "text/plain; charset=utf-8", "404 page not found"},
		{"a nested path", "GET", "/console/a/app.js", 404, "text/plain; charset=utf-8", "404 page not found"},
		{"the API stays the gateway's", "GET", "/v1/models", 418, "application/json", `{"gateway":true}`},
		{"an unknown path stays the gateway's", "GET", "/v1/nope", 418, "application/json", `{"gateway":true}`},
		{"another method at / is the gateway's", "POST", "/", 418, "application/json", `{"gateway":true}`},
		{"a POST of a file is the gateway's", "POST", "/console/app.js", 418, "application/json", `{"gateway":true}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := serve(mux, tc.method, tc.target)
			require.Equal(t, tc.status, rec.Code)
			require.Equal(t, tc.contentType, rec.Header().Get("Content-Type"))
			require.Contains(t, rec.Body.String(), tc.body)
			if tc.method == "HEAD" {
				require.Empty(t, rec.Body.String())
				require.NotEmpty(t, rec.Header().Get("Content-Length"))
			}
		})
	}
}

func TestHandlerHeaders(t *testing.T) {
	t.Parallel()
	rec := serve(newMux(console.Config{AdminURL: "https://admin.example.com:8443/base"}), "GET", "/")
	require.Equal(t, "no-cache", rec.Header().Get("Cache-Control"))
	require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
	require.Equal(t, "no-referrer", rec.Header().Get("Referrer-Policy"))
	csp := rec.Header().Get("Content-Security-Policy")
	require.Contains(t, csp, "default-src 'none'")
	require.Contains(t, csp, "script-src 'self';")
	require.Contains(t, csp, "connect-src 'self' https://admin.example.com:8443;")
	require.Contains(t, csp, "media-src 'self' blob:")

	rec = serve(newMux(console.Config{}), "GET", "/console/config.json")
	require.Equal(t, `{"admin_url":""}`, rec.Body.String())
	require.Contains(t, rec.Header().Get("Content-Security-Policy"), "connect-src 'self';")
}

func TestHandlerRefusesOtherMethods(t *testing.T) {
	t.Parallel()
	rec := serve(console.NewHandler(console.Config{}), "POST", "/")
	require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	require.Equal(t, "GET, HEAD", rec.Header().Get("Allow"))
}

func TestHandlerUnderAPrefix(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.Handle("/ui/", http.StripPrefix("/ui", console.NewHandler(console.Config{})))
	require.Equal(t, http.StatusOK, serve(mux, "GET", "/ui/").Code)
	require.Equal(t, http.StatusOK, serve(mux, "GET", "/ui/console/chat.js").Code)
}

func TestNewHandlerPanicsOnABadAdminURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"127.0.0.1:8090", "/admin", "ftp://x", "http://"} {
		require.PanicsWithValue(t, `console: NewHandler: AdminURL "`+u+`" is not an absolute http(s) URL`, func() {
			console.NewHandler(console.Config{AdminURL: u})
		}, u)
	}
}

// TestEveryFileTheConsoleLoadsIsServed follows the page's references and
// every module's imports: each is served, as the type the browser needs,
// and nothing is fetched from another origin.
func TestEveryFileTheConsoleLoadsIsServed(t *testing.T) {
	t.Parallel()
	h := console.NewHandler(console.Config{})
	page := serve(h, "GET", "/").Body.String()
	refs := regexp.MustCompile(`(?:src|href)="([^"#]+)"`).FindAllStringSubmatch(page, -1)
	imports := regexp.MustCompile(`(?m)^import .* from '\./([^']+)';$`)
	seen := map[string]bool{}
	var queue []string
	require.NotRegexp(t, `(?:src|href)="(?:https?:)?//`, page)
	for _, r := range refs {
		if strings.HasPrefix(r[1], "data:") {
			continue
		}
		require.True(t, strings.HasPrefix(r[1], "console/"), "a relative reference: %s", r[1])
		queue = append(queue, "/"+r[1])
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		rec := serve(h, "GET", p)
		require.Equal(t, http.StatusOK, rec.Code, p)
		body := rec.Body.String()
		require.NotRegexp(t, `url\(|@import`, body, p)
		if strings.HasSuffix(p, ".js") {
			require.Equal(t, "text/javascript; charset=utf-8", rec.Header().Get("Content-Type"), p)
			ms := imports.FindAllStringSubmatch(body, -1)
			require.Len(t, ms, strings.Count(body, "\nimport ")+strings.Count(body[:min(len(body), 7)], "import "), "%s imports only its siblings", p)
			for _, m := range ms {
				queue = append(queue, "/console/"+m[1])
			}
		}
	}
	for _, f := range []string{"app.js", "api.js", "chat.js", "conv.js", "video.js", "admin.js", "chart.js", "style.css"} {
		require.True(t, seen["/console/"+f], "%s is loaded", f)
	}
}

func TestHandlerRevalidatesWithETags(t *testing.T) {
	t.Parallel()
	h := console.NewHandler(console.Config{})
	for _, p := range []string{"/", "/console/app.js", "/console/config.json"} {
		first := serve(h, "GET", p)
		etag := first.Header().Get("ETag")
		require.Regexp(t, `^"[0-9a-f]{24}"$`, etag, p)

		req := httptest.NewRequest("GET", p, nil)
		req.Header.Set("If-None-Match", etag)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusNotModified, rec.Code, p)
		require.Empty(t, rec.Body.String(), p)

		req.Header.Set("If-None-Match", `"stale"`)
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code, p)
		require.Equal(t, first.Body.String(), rec.Body.String(), p)
	}
	// The configuration's ETag follows the configuration.
	a := serve(console.NewHandler(console.Config{AdminURL: "http://127.0.0.1:8090"}), "GET", "/console/config.json").Header().Get("ETag")
	require.NotEqual(t, serve(h, "GET", "/console/config.json").Header().Get("ETag"), a)
}
