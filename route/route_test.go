package route_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/route"
)

// named is a handler that writes its name, so that tests see which one
// served.
type named string

func (n named) ServeHTTP(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(n)) }

// routeNames are the routes as comparable values: pattern and handler name.
func routeNames(routes []route.Route) [][2]string {
	var out [][2]string
	for _, rt := range routes {
		out = append(out, [2]string{rt.Pattern(), string(rt.Handler.(named))})
	}
	return out
}

func TestListGivesEveryGETRouteAHEADRoute(t *testing.T) {
	t.Parallel()
	got := route.List(named("h"), "POST /v1/responses", "GET /v1/responses/{response_id}", "DELETE /v1/responses/{response_id}", "/admin/v1/")
	want := [][2]string{
		{"POST /v1/responses", "h"},
		{"GET /v1/responses/{response_id}", "h"},
		{"HEAD /v1/responses/{response_id}", "h"},
		{"DELETE /v1/responses/{response_id}", "h"},
		{"/admin/v1/", "h"},
	}
	require.Empty(t, cmp.Diff(want, routeNames(got)))
	require.Equal(t, "", got[4].Method)
	require.Equal(t, "/admin/v1/", got[4].Path)
}

func TestListPanicsOnAPatternThatIsNotAMethodAndAPath(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"", "GET", "GET v1/models", "example.com/v1/models", "GET example.com/v1"} {
		require.PanicsWithValue(t, `route: List: "`+p+`" is not a method and a path`, func() { route.List(named("h"), p) }, p)
	}
}

// Register leaves a HEAD route with a GET twin to the GET route, as the
// kit's Register functions have always mounted (r.Pattern of a HEAD
// request stays the GET pattern); a HEAD route alone is mounted.
func TestRegisterLeavesHEADToTheGETRoute(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	route.Register(mux, []route.Route{
		{Method: "GET", Path: "/a", Handler: named("get a")},
		{Method: "HEAD", Path: "/a", Handler: named("head a")},
		{Method: "HEAD", Path: "/b", Handler: named("head b")},
		{Method: "POST", Path: "/c/{id}", Handler: named("post c")},
		{Path: "/d/", Handler: named("any d")},
	})
	tests := []struct{ method, path, pattern, body string }{
		{"GET", "/a", "GET /a", "get a"},
		{"HEAD", "/a", "GET /a", "get a"},
		{"HEAD", "/b", "HEAD /b", "head b"},
		{"POST", "/c/1", "POST /c/{id}", "post c"},
		{"PATCH", "/d/x", "/d/", "any d"},
	}
	for _, tc := range tests {
		req := httptest.NewRequest(tc.method, tc.path, nil)
		_, pattern := mux.Handler(req)
		require.Equal(t, tc.pattern, pattern, tc.method+" "+tc.path)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code)
		require.Equal(t, tc.body, rec.Body.String())
	}
}

func TestUnroutedAnswersInJSONInTheFamilysShape(t *testing.T) {
	t.Parallel()
	h := named("h")
	routes := append(route.List(h,
		"POST /v1/chat/completions",
		"GET /v1/models",
		"GET /v1/models/{id...}",
		"POST /v1/responses",
		"GET /v1/responses/{response_id}",
		"DELETE /v1/responses/{response_id}",
		"POST /v1/messages",
		"POST /v1beta/models/{action...}",
		"OPTIONS /api/profile",
		"GET /api/profile",
		"/admin/v1/",
	), route.List(h, "POST /v1/chat/completions")...) // given twice: counts once
	const (
		notFound = `{"error":{"message":"Unknown request URL: %s. Please check the URL and the method.","type":"invalid_request_error","param":null,"code":"not_found"}}`
		general  = `{"error":{"message":"The method %s.","type":"invalid_request_error","param":null,"code":"method_not_allowed"}}`
	)
	tests := []struct {
		name, method, path string
		allowSet           string // an Allow header that the router set before (gin)
		status             int
		allow              []string // nil: no Allow header
		body               string
	}{
		{name: "UnknownPath", method: "GET", path: "/v1/nope", status: 404,
			body: `{"error":{"message":"Unknown request URL: GET /v1/nope. Please check the URL and the method.","type":"invalid_request_error","param":null,"code":"not_found"}}`},
		{name: "WrongMethod", method: "GET", path: "/v1/chat/completions", status: 405, allow: []string{"POST"},
			body: `{"error":{"message":"The method GET is not allowed on /v1/chat/completions; use POST.","type":"invalid_request_error","param":null,"code":"method_not_allowed"}}`},
		{name: "GETAndHEAD", method: "DELETE", path: "/v1/models", status: 405, allow: []string{"GET, HEAD"},
			body: `{"error":{"message":"The method DELETE is not allowed on /v1/models; use GET or HEAD.","type":"invalid_request_error","param":null,"code":"method_not_allowed"}}`},
		{name: "Wildcard", method: "PUT", path: "/v1/responses/resp_1", status: 405, allow: []string{"GET, HEAD, DELETE"},
			body: `{"error":{"message":"The method PUT is not allowed on /v1/responses/resp_1; use GET or HEAD or DELETE.","type":"invalid_request_error","param":null,"code":"method_not_allowed"}}`},
		{name: "RestOfThePath", method: "POST", path: "/v1/models/org/model", status: 405, allow: []string{"GET, HEAD"},
			body: `{"error":{"message":"The method POST is not allowed on /v1/models/org/model; use GET or HEAD.","type":"invalid_request_error","param":null,"code":"method_not_allowed"}}`},
		{name: "MethodsBeyondTheUsualOnes", method: "PUT", path: "/api/profile", status: 405, allow: []string{"GET, HEAD, OPTIONS"},
			body: `{"error":{"message":"The method PUT is not allowed on /api/profile; use GET or HEAD or OPTIONS.","type":"invalid_request_error","param":null,"code":"method_not_allowed"}}`},
		{name: "TheRoutersAllowHeader", method: "PUT", path: "/v1/chat/completions", allowSet: "POST, OPTIONS", status: 405, allow: []string{"POST, OPTIONS"},
			body: `{"error":{"message":"The method PUT is not allowed on /v1/chat/completions; use POST or OPTIONS.","type":"invalid_request_error","param":null,"code":"method_not_allowed"}}`},
		{name: "MessagesFormat", method: "GET", path: "/v1/messages", status: 405, allow: []string{"POST"},
			body: `{"type":"error","error":{"type":"invalid_request_error","message":"The method GET is not allowed on /v1/messages; use POST."}}`},
		{name: "GoogleUnknownPath", method: "POST", path: "/v1beta/nope", status: 404,
			body: `{"error":{"code":404,"message":"Unknown request URL: POST /v1beta/nope. Please check the URL and the method.","status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"NOT_FOUND","domain":"gatewaykit"}]}}`},
		// A route of the request's own method exists but was not mounted.
		{name: "RouteNotMounted", method: "POST", path: "/v1/chat/completions", status: 404,
			body: `{"error":{"message":"Unknown request URL: POST /v1/chat/completions. Please check the URL and the method.","type":"invalid_request_error","param":null,"code":"not_found"}}`},
		{name: "RouteNotMountedThoughTheRouterSaysSo", method: "POST", path: "/v1/chat/completions", allowSet: "POST", status: 404,
			body: `{"error":{"message":"Unknown request URL: POST /v1/chat/completions. Please check the URL and the method.","type":"invalid_request_error","param":null,"code":"not_found"}}`},
		{name: "EveryMethodRouteNotMounted", method: "PATCH", path: "/admin/v1/keys/k1", status: 404,
			body: `{"error":{"message":"Unknown request URL: PATCH /admin/v1/keys/k1. Please check the URL and the method.","type":"invalid_request_error","param":null,"code":"not_found"}}`},
	}
	unrouted := route.Unrouted(routes)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			if tc.allowSet != "" {
				rec.Header().Set("Allow", tc.allowSet)
			}
			unrouted.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			require.Equal(t, tc.status, rec.Code)
			require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			require.Equal(t, tc.allow, rec.Header().Values("Allow"))
			require.JSONEq(t, tc.body, rec.Body.String())
		})
	}
}

func TestUnroutedOfNoRouteAnswers404(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	route.Unrouted(nil).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.JSONEq(t, `{"error":{"message":"Unknown request URL: GET /. Please check the URL and the method.","type":"invalid_request_error","param":null,"code":"not_found"}}`, rec.Body.String())
}

func TestUnroutedPanicsOnConflictingRoutes(t *testing.T) {
	t.Parallel()
	require.Panics(t, func() {
		route.Unrouted([]route.Route{{Method: "GET", Path: "/a/{x}"}, {Method: "GET", Path: "/a/{y}"}})
	})
}
