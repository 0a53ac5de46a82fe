package route_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/admin"
	"github.com/gatewaykit/gatewaykit/audio"
	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/console"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/embeddings"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/gemini"
	"github.com/gatewaykit/gatewaykit/images"
	"github.com/gatewaykit/gatewaykit/messages"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/moderations"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/rerank"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/route"
	"github.com/gatewaykit/gatewaykit/videos"
)

// kitPackage is a package of the kit that serves HTTP: its route list and
// its Register (nil for none).
type kitPackage struct {
	name     string
	routes   func(h http.Handler) []route.Route
	register func(mux *http.ServeMux, h http.Handler)
	want     []string // the patterns of the routes, in order
}

func kitPackages() []kitPackage {
	return []kitPackage{
		{"chat", chat.Routes, chat.Register, []string{"POST /v1/chat/completions"}},
		{"completions", completions.Routes, completions.Register, []string{"POST /v1/completions"}},
		{"responses", responses.Routes, responses.Register, []string{
			"POST /v1/responses", "POST /v1/responses/compact",
			"GET /v1/responses/{response_id}", "HEAD /v1/responses/{response_id}",
			"DELETE /v1/responses/{response_id}",
			"GET /v1/responses/{response_id}/input_items", "HEAD /v1/responses/{response_id}/input_items",
			"POST /v1/responses/{response_id}/cancel",
		}},
		{"messages", messages.Routes, messages.Register, []string{"POST /v1/messages"}},
		{"gemini", gemini.Routes, gemini.Register, []string{"POST /v1beta/models/{action...}"}},
		{"models", models.Routes, models.Register, []string{
			"GET /v1/models", "HEAD /v1/models", "GET /v1/models/{id...}", "HEAD /v1/models/{id...}",
			"GET /v1beta/models", "HEAD /v1beta/models", "GET /v1beta/models/{id...}", "HEAD /v1beta/models/{id...}",
		}},
		{"embeddings", embeddings.Routes, embeddings.Register, []string{"POST /v1/embeddings"}},
		{"moderations", moderations.Routes, moderations.Register, []string{"POST /v1/moderations"}},
		{"rerank", rerank.Routes, rerank.Register, []string{"POST /v1/rerank"}},
		{"images", images.Routes, images.Register, []string{
			"POST /v1/images/generations", "GET /v1/images/files/{name}", "HEAD /v1/images/files/{name}",
		}},
		{"audio", audio.Routes, audio.Register, []string{
			"POST /v1/audio/speech", "POST /v1/audio/transcriptions", "POST /v1/audio/translations",
		}},
		{"videos", videos.Routes, videos.Register, []string{
			"POST /v1/videos", "GET /v1/videos", "HEAD /v1/videos",
			"GET /v1/videos/{task_id}", "HEAD /v1/videos/{task_id}", "DELETE /v1/videos/{task_id}",
			"POST /v1/vendorai/videos", "POST /v1/vendor/videos",
			"GET /v1/videos/{task_id}/content", "HEAD /v1/videos/{task_id}/content",
		}},
		{"admin", admin.Routes, admin.Register, []string{"/admin/v1/"}},
		{"console", console.Routes, console.Register, []string{"GET /{$}", "HEAD /{$}", "GET /console/", "HEAD /console/"}},
		{"relay", relay.AccessRoutes, relay.RegisterAccess, []string{
			"POST /v1/embeddings", "POST /v1/images/generations", "POST /v1/audio/transcriptions",
			"POST /v1/audio/translations", "POST /v1/audio/speech", "POST /v1/moderations",
			"POST /v1/rerank", "POST /v1/messages", "POST /v1beta/models/{action...}",
		}},
	}
}

// Every package gives its routes as a list, each served by the handler
// it is given, and its Register mounts exactly that list on a ServeMux.
func TestEveryPackageListsItsRoutes(t *testing.T) {
	t.Parallel()
	for _, pkg := range kitPackages() {
		t.Run(pkg.name, func(t *testing.T) {
			t.Parallel()
			h := named(pkg.name)
			routes := pkg.routes(h)
			var patterns []string
			for _, rt := range routes {
				patterns = append(patterns, rt.Pattern())
				require.Equal(t, http.Handler(h), rt.Handler, rt.Pattern())
			}
			require.Empty(t, cmp.Diff(pkg.want, patterns))

			mux := http.NewServeMux()
			pkg.register(mux, h)
			for _, rt := range routes {
				req := requestOf(rt)
				_, pattern := mux.Handler(req)
				want := rt.Pattern()
				if rt.Method == http.MethodHead {
					want = "GET " + rt.Path // ServeMux's GET routes serve HEAD
				}
				require.Equal(t, want, pattern, "%s %s", req.Method, req.URL.Path)
			}
		})
	}
}

func TestGatewayListsItsHealthRoutes(t *testing.T) {
	t.Parallel()
	g, err := gateway.New(gateway.Config{Keys: auth.NewMemoryKeyStore(), Catalog: models.NewMemoryCatalog()})
	require.NoError(t, err)
	var patterns []string
	for _, rt := range g.HealthRoutes() {
		patterns = append(patterns, rt.Pattern())
		rec := httptest.NewRecorder()
		rt.Handler.ServeHTTP(rec, requestOf(rt))
		require.Equal(t, http.StatusOK, rec.Code, rt.Pattern())
	}
	require.Equal(t, []string{"GET /healthz", "HEAD /healthz", "GET /readyz", "HEAD /readyz"}, patterns)
}

// requestOf returns a request that rt matches: its wildcards filled with
// "x", any method for a route of every method.
func requestOf(rt route.Route) *http.Request {
	segs := strings.Split(rt.Path, "/")
	for i, s := range segs {
		switch {
		case s == "{$}":
			segs[i] = ""
		case strings.HasPrefix(s, "{"):
			segs[i] = "x"
		}
	}
	path := strings.Join(segs, "/")
	if strings.HasSuffix(rt.Path, "/") {
		path += "x"
	}
	method := rt.Method
	if method == "" {
		method = http.MethodPatch
	}
	return httptest.NewRequest(method, path, nil)
}

// The kit's handlers find their path's wildcards themselves: called
// with no path value set, as a router other than ServeMux calls them,
// each serves the resource that its path names.
func TestHandlersNeedNoPathValues(t *testing.T) {
	t.Parallel()
	catalog := models.NewMemoryCatalog(append(demo.TextModels(), append(demo.VideoModels(), demo.AccessModels()...)...)...)
	text := demo.NewTextBackend()

	// do sends a request with no path value to h and returns the status
	// and the body's id (or the whole body when it has none).
	do := func(t *testing.T, h http.Handler, method, path, body string) (int, string) {
		t.Helper()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		require.Empty(t, req.Pattern)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var v struct {
			ID   string `json:"id"`
			Data []struct {
				URL string `json:"url"`
			} `json:"data"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &v) == nil && v.ID != "" {
			return rec.Code, v.ID
		}
		if len(v.Data) == 1 && v.Data[0].URL != "" {
			return rec.Code, v.Data[0].URL
		}
		return rec.Code, rec.Body.String()
	}

	t.Run("responses", func(t *testing.T) {
		t.Parallel()
		h := responses.NewHandler(catalog, text.Responses())
		status, id := do(t, h, "POST", "/v1/responses", `{"model":"demo-chat","input":"hello"}`)
		require.Equal(t, http.StatusOK, status, id)
		status, got := do(t, h, "GET", "/v1/responses/"+id, "")
		require.Equal(t, http.StatusOK, status, got)
		require.Equal(t, id, got)
	})
	t.Run("videos", func(t *testing.T) {
		t.Parallel()
		h := videos.NewHandler(videos.NewMemoryStore(nil), catalog, videos.NewMemoryContentStore(nil))
		status, id := do(t, h, "POST", "/v1/videos", `{"model":"demo-video","prompt":"a red kite","seconds":"4","size":"1280x720"}`)
		require.Equal(t, http.StatusOK, status, id)
		status, got := do(t, h, "GET", "/v1/videos/"+id, "")
		require.Equal(t, http.StatusOK, status, got)
		require.Equal(t, id, got)
	})
	t.Run("models", func(t *testing.T) {
		t.Parallel()
		h := models.NewHandler(models.NewMemoryCatalog(models.Model{ID: "org/model", OwnedBy: "org"}))
		status, got := do(t, h, "GET", "/v1/models/org/model", "")
		require.Equal(t, http.StatusOK, status, got)
		require.Equal(t, "org/model", got)
	})
	t.Run("gemini", func(t *testing.T) {
		t.Parallel()
		h := gemini.NewHandler(catalog, text.Chat())
		status, body := do(t, h, "POST", "/v1beta/models/demo-chat:generateContent", `{"contents":[{"parts":[{"text":"hello"}]}]}`)
		require.Equal(t, http.StatusOK, status, body)
		require.Contains(t, body, `"candidates"`)
	})
	t.Run("images", func(t *testing.T) {
		t.Parallel()
		h := images.NewHandler(catalog, demo.NewImageBackend())
		status, url := do(t, h, "POST", "/v1/images/generations", `{"model":"demo-image","prompt":"a red kite","response_format":"url"}`)
		require.Equal(t, http.StatusOK, status, url)
		_, path, ok := strings.Cut(url, "/v1/images/files/")
		require.True(t, ok, url)
		req := httptest.NewRequest("GET", "/v1/images/files/"+path, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.True(t, strings.HasPrefix(rec.Header().Get("Content-Type"), "image/"), rec.Header().Get("Content-Type"))
	})
}
