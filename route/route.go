package route

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/noroute"
)

// A Route is one route of a handler: requests of Method to a path that
// Path matches go to Handler.
type Route struct {
	// Method is the request method, such as "GET" or "POST"; empty
	// means every method (the handler answers the others itself).
	Method string
	// Path is the path in ServeMux syntax: literal segments, {name} for
	// one segment, {name...} for the rest of the path, a final "/" for
	// every path under it, and {$} for the path ending in "/" alone.
	Path string
	// Handler serves the route. It reads the path as the client sent
	// it, and needs no path values from the router.
	Handler http.Handler
}

// Pattern returns the route's ServeMux pattern: "GET /v1/models", or the
// path alone for a route of every method.
func (rt Route) Pattern() string {
	if rt.Method == "" {
		return rt.Path
	}
	return rt.Method + " " + rt.Path
}

// List returns the routes of patterns, all served by h. Each pattern is
// a ServeMux pattern without a host: a method and a path ("GET
// /v1/models/{id...}"), or a path alone for every method. A GET pattern
// gives a HEAD route too, right after it: ServeMux serves HEAD with GET
// routes, and the routes of the list are served the same way on every
// router. List panics if a pattern is not of that form.
func List(h http.Handler, patterns ...string) []Route {
	routes := make([]Route, 0, 2*len(patterns))
	for _, p := range patterns {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			method, path = "", p
		}
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(method, "/ ") {
			panic(fmt.Sprintf("route: List: %q is not a method and a path", p))
		}
		routes = append(routes, Route{Method: method, Path: path, Handler: h})
		if method == http.MethodGet {
			routes = append(routes, Route{Method: http.MethodHead, Path: path, Handler: h})
		}
	}
	return routes
}

// Register registers routes on mux, each under its [Route.Pattern],
// except a HEAD route whose path a GET route of routes has: ServeMux
// sends HEAD requests to GET routes, so that it is served already, by
// the GET route's handler (the kit's routes list HEAD with the same
// handler as GET, for routers that do not). Like mux.Handle, it panics
// if a pattern conflicts with one already registered.
func Register(mux *http.ServeMux, routes []Route) {
	for _, rt := range routes {
		if rt.Method == http.MethodHead && hasGet(routes, rt.Path) {
			continue
		}
		mux.Handle(rt.Pattern(), rt.Handler)
	}
}

// hasGet reports whether routes has a GET route of path.
func hasGet(routes []Route, path string) bool {
	return slices.ContainsFunc(routes, func(rt Route) bool { return rt.Method == http.MethodGet && rt.Path == path })
}

// probeMethods are the methods that Unrouted tries first, in the order
// in which it lists them: the order of package gateway's Allow headers.
var probeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// Unrouted returns the handler of the requests that no route serves, for
// a router's hooks (chi's NotFound and MethodNotAllowed, gin's NoRoute
// and NoMethod, gorilla/mux's NotFoundHandler and
// MethodNotAllowedHandler, echo's error handler for its 404 and 405). It
// answers in JSON, in the error shape of the path's family
// (apierrors.ShapeFor: Google's error object under /v1beta/, the messages
// format's on /v1/messages, the general shape elsewhere), the same
// answers as package gateway's:
//
//   - 405 method_not_allowed, with an Allow header, for a path that
//     routes serve with other methods. The methods are those of the Allow
//     header already set on the response, if the router set one (gin
//     does, before its NoMethod handlers), and otherwise those of the
//     routes whose path matches, as ServeMux matches them (a GET route
//     allows HEAD too);
//   - 404 not_found ("Unknown request URL: GET /v1/nope. Please check
//     the URL and the method.") for any other request.
//
// Give it every route that the router serves, the application's own
// included, so that a wrong method on any of them is a 405. A route that
// matches the request's own method was not mounted: its request is a
// 404. Unrouted panics if two routes conflict as they would on a
// ServeMux (a route given twice counts once). The handler logs nothing
// and is safe for concurrent use.
func Unrouted(routes []Route) http.Handler {
	mux := http.NewServeMux()
	seen := make(map[string]bool, len(routes))
	methods := slices.Clone(probeMethods)
	for _, rt := range routes {
		p := rt.Pattern()
		if seen[p] {
			continue
		}
		seen[p] = true
		mux.Handle(p, marker{})
		if rt.Method != "" && !slices.Contains(methods, rt.Method) {
			methods = append(methods, rt.Method)
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		allow := headerMethods(w.Header())
		if len(allow) == 0 {
			allow = allowed(mux, methods, r)
		}
		if slices.Contains(allow, r.Method) {
			// A route of this method exists, but the router does not
			// serve it.
			allow = nil
			w.Header().Del("Allow")
		}
		noroute.Write(w, r, apierrors.Renderer{}, allow)
	})
}

// headerMethods returns the methods of the Allow header of h, if any.
func headerMethods(h http.Header) []string {
	var methods []string
	for _, v := range h.Values("Allow") {
		for m := range strings.SplitSeq(v, ",") {
			if m = strings.TrimSpace(m); m != "" {
				methods = append(methods, m)
			}
		}
	}
	return methods
}

// marker is the handler of the patterns of Unrouted's ServeMux, which
// only matches paths.
type marker struct{}

func (marker) ServeHTTP(http.ResponseWriter, *http.Request) {}

func isMarker(h http.Handler) bool {
	_, ok := h.(marker)
	return ok
}

// allowed returns the methods, among methods, of the patterns of mux
// that match r's path.
func allowed(mux *http.ServeMux, methods []string, r *http.Request) []string {
	var allow []string
	for _, m := range methods {
		probe := &http.Request{Method: m, URL: r.URL, Host: r.Host, Header: http.Header{}}
		if h, _ := mux.Handler(probe); isMarker(h) {
			allow = append(allow, m)
		}
	}
	return allow
}
