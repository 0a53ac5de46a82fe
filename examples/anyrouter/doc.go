// Package anyrouter is a test: it mounts route lists of the kit (the
// model list and responses) on five routers, net/http.ServeMux, chi, gin,
// gorilla/mux and echo, each with the kit's handler of what no route
// serves (route.Unrouted), and checks that a path value route, a route of
// the rest of the path, HEAD, a JSON 404 and a JSON 405 work on each. The
// spelling of the paths for each router is in the test.
package anyrouter
