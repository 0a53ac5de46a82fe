// Package route is the form in which every package of the kit gives its
// routes to a router: a list of [Route] values (method, path in ServeMux
// syntax, handler), from the package's Routes function, which any router
// can consume. Each package's Register(mux, h) is [Register] over that
// list, for a net/http.ServeMux.
//
//	h := responses.NewHandler(catalog, backend)
//	responses.Register(mux, h)              // a ServeMux
//	for _, rt := range responses.Routes(h) { // any other router
//		r.Method(rt.Method, chiPath(rt.Path), rt.Handler)
//	}
//
// # Path values
//
// A handler of the kit finds the wildcards of its path itself, from the
// request's path: those of several routes route the request again with a
// ServeMux of their own. A router therefore needs to fill no path value
// (r.SetPathValue: chi does since v5.0.12; gin, echo and gorilla/mux do
// not), and may name its wildcards as it likes; it must pass
// the request with the path that the route list names (chi's Route and
// Mount, gin's groups, echo's groups and gorilla/mux's subrouters all
// do). To serve the routes under a prefix, strip it with
// http.StripPrefix.
//
// # HEAD
//
// A route that serves GET also serves HEAD, and the lists name it twice
// (GET and HEAD, one handler), for the routers that do not send HEAD to
// GET routes (chi, gin, echo, gorilla/mux). [Register] leaves the HEAD
// routes to ServeMux, which does.
//
// # Unknown paths and wrong methods
//
// [Unrouted] answers what no route serves in JSON, in the error shape of
// the path's family: 404 not_found, or 405 method_not_allowed with an
// Allow header for a path served with other methods. Give it to the
// router's hooks, with every route the router serves.
//
// # Routers
//
// The paths of the lists use ServeMux syntax; each router spells their
// wildcards its own way. The programs examples/chi and examples/gin of
// the repository mount the kit this way, and a test of its examples
// module mounts it on all five routers.
//
//   - net/http.ServeMux: Register (or the package's Register), and
//     mux.Handle("/", Unrouted(all)) for what no route serves.
//   - chi (v5): r.Method(rt.Method, path, rt.Handler) (r.Handle for a
//     route of every method, Method ""), with {name} kept,
//     {name...} as *, and a path that ends in "/" followed by *;
//     r.NotFound and r.MethodNotAllowed with Unrouted(all).ServeHTTP. chi
//     does not set Allow for its MethodNotAllowed handler: Unrouted finds
//     the methods in the list.
//   - gin: engine.Handle(rt.Method, path, gin.WrapH(rt.Handler)), with
//     {name} as :name and {name...} as *name; set
//     engine.HandleMethodNotAllowed, and give gin.WrapH(Unrouted(all)) to
//     NoRoute and NoMethod (gin sets Allow before NoMethod).
//   - gorilla/mux: r.Handle(path, rt.Handler).Methods(rt.Method), with
//     {name...} as {name:.*}; r.NotFoundHandler and
//     r.MethodNotAllowedHandler set to Unrouted(all).
//   - echo (v4): e.Add(rt.Method, path, echo.WrapHandler(rt.Handler)),
//     with {name} as :name and {name...} as *; an HTTPErrorHandler that
//     hands echo.ErrNotFound and echo.ErrMethodNotAllowed to
//     Unrouted(all) (echo sets Allow, OPTIONS among the methods, since it
//     answers OPTIONS itself).
package route
