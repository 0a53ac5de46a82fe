package anyrouter_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/go-chi/chi/v5"
	"github.com/gorilla/mux"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/route"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	os.Exit(m.Run())
}

// kitRoutes returns the routes of the model list and of responses.
func kitRoutes() []route.Route {
	catalog := models.NewMemoryCatalog(append(demo.TextModels(), models.Model{ID: "org/model", OwnedBy: "org",
		EndpointTypes: []models.EndpointType{models.Compat}})...)
	return slices.Concat(
		models.Routes(models.NewHandler(catalog)),
		responses.Routes(responses.NewHandler(catalog, demo.NewTextBackend().Responses())),
	)
}

// wildcard splits a path segment of ServeMux syntax into its name and
// whether it takes the rest of the path; ok is false for a literal.
func wildcard(seg string) (name string, rest, ok bool) {
	if !strings.HasPrefix(seg, "{") || seg == "{$}" {
		return "", false, false
	}
	name = strings.Trim(seg, "{}")
	name, rest = strings.CutSuffix(name, "...")
	return name, rest, true
}

// spell rewrites the wildcards of a path of ServeMux syntax with f.
func spell(path string, f func(name string, rest bool) string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if name, rest, ok := wildcard(s); ok {
			segs[i] = f(name, rest)
		}
	}
	return strings.Join(segs, "/")
}

// The five routers, each with the kit's routes and route.Unrouted.
func serveMux(routes []route.Route) http.Handler {
	m := http.NewServeMux()
	route.Register(m, routes)
	m.Handle("/", route.Unrouted(routes))
	return m
}

func chiRouter(routes []route.Route) http.Handler {
	r := chi.NewRouter()
	for _, rt := range routes {
		r.Method(rt.Method, spell(rt.Path, func(name string, rest bool) string {
			if rest {
				return "*"
			}
			return "{" + name + "}"
		}), rt.Handler)
	}
	unrouted := route.Unrouted(routes)
	r.NotFound(unrouted.ServeHTTP)
	r.MethodNotAllowed(unrouted.ServeHTTP)
	return r
}

func ginEngine(routes []route.Route) http.Handler {
	e := gin.New()
	e.HandleMethodNotAllowed = true
	for _, rt := range routes {
		e.Handle(rt.Method, spell(rt.Path, func(name string, rest bool) string {
			if rest {
				return "*" + name
			}
			return ":" + name
		}), gin.WrapH(rt.Handler))
	}
	unrouted := gin.WrapH(route.Unrouted(routes))
	e.NoRoute(unrouted)
	e.NoMethod(unrouted)
	return e
}

func gorillaRouter(routes []route.Route) http.Handler {
	r := mux.NewRouter()
	for _, rt := range routes {
		r.Handle(spell(rt.Path, func(name string, rest bool) string {
			if rest {
				return "{" + name + ":.*}"
			}
			return "{" + name + "}"
		}), rt.Handler).Methods(rt.Method)
	}
	unrouted := route.Unrouted(routes)
	r.NotFoundHandler = unrouted
	r.MethodNotAllowedHandler = unrouted
	return r
}

func echoServer(routes []route.Route) http.Handler {
	e := echo.New()
	for _, rt := range routes {
		e.Add(rt.Method, spell(rt.Path, func(name string, rest bool) string {
			if rest {
				return "*"
			}
			return ":" + name
		}), echo.WrapHandler(rt.Handler))
	}
	unrouted := route.Unrouted(routes)
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		if errors.Is(err, echo.ErrNotFound) || errors.Is(err, echo.ErrMethodNotAllowed) {
			unrouted.ServeHTTP(c.Response(), c.Request())
			return
		}
		e.DefaultHTTPErrorHandler(err, c)
	}
	return e
}

func TestTheKitOnFiveRouters(t *testing.T) {
	t.Parallel()
	idMethods := []string{"GET", "HEAD", "DELETE"}
	routers := []struct {
		name  string
		mount func([]route.Route) http.Handler
		allow []string // the Allow of a response id's path
	}{
		{"ServeMux", serveMux, idMethods},
		{"chi", chiRouter, idMethods},
		{"gin", ginEngine, idMethods},
		{"gorilla/mux", gorillaRouter, idMethods},
		// echo answers OPTIONS on every route itself, and says so.
		{"echo", echoServer, append(idMethods, "OPTIONS")},
	}
	for _, rr := range routers {
		t.Run(rr.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(rr.mount(kitRoutes()))
			t.Cleanup(srv.Close)
			do := func(method, path, body string) (*http.Response, string) {
				t.Helper()
				req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				res, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer res.Body.Close()
				b, err := io.ReadAll(res.Body)
				require.NoError(t, err)
				return res, string(b)
			}
			id := func(body string) string {
				var v struct {
					ID string `json:"id"`
				}
				require.NoError(t, json.Unmarshal([]byte(body), &v), body)
				return v.ID
			}

			// A path value: a stored response, by its id.
			res, body := do("POST", "/v1/responses", `{"model":"demo-chat","input":"Hello!"}`)
			require.Equal(t, http.StatusOK, res.StatusCode, body)
			created := id(body)
			res, body = do("GET", "/v1/responses/"+created, "")
			require.Equal(t, http.StatusOK, res.StatusCode, body)
			require.Equal(t, created, id(body))

			// The rest of the path: a model id with a slash.
			res, body = do("GET", "/v1/models/org/model", "")
			require.Equal(t, http.StatusOK, res.StatusCode, body)
			require.Equal(t, "org/model", id(body))

			res, body = do("HEAD", "/v1/models", "")
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.Empty(t, body)

			res, body = do("GET", "/v1/nope", "")
			require.Equal(t, http.StatusNotFound, res.StatusCode)
			require.Equal(t, "application/json", res.Header.Get("Content-Type"))
			require.JSONEq(t, `{"error":{"message":"Unknown request URL: GET /v1/nope. Please check the URL and the method.","type":"invalid_request_error","param":null,"code":"not_found"}}`, body)

			res, body = do("PUT", "/v1/responses/"+created, "")
			require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
			require.Equal(t, "application/json", res.Header.Get("Content-Type"))
			require.ElementsMatch(t, rr.allow, strings.Split(res.Header.Get("Allow"), ", "))
			var e struct {
				Error struct{ Code, Message string }
			}
			require.NoError(t, json.Unmarshal([]byte(body), &e), body)
			require.Equal(t, "method_not_allowed", e.Error.Code)
			require.True(t, strings.HasPrefix(e.Error.Message, "The method PUT is not allowed on /v1/responses/"+created+"; use "), e.Error.Message)
		})
	}
}
