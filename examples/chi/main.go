// Command chi is an existing chi service that embeds gatewaykit. The
// service keeps its own routes (GET /healthz, GET /api/profile), its own
// sessions (the X-Session header, or the session cookie) and its own user
// table, and mounts the kit's model list, chat completions, completions
// and responses under /v1, behind auth.Middleware, from the kit's route
// lists (package route). The demo backend answers the demo-* models; the
// models named by -relay are relayed to the upstream of -upstream. Unknown
// paths and wrong methods answer JSON in the API's error shape
// (route.Unrouted).
//
//	go run ./examples/chi          # http://127.0.0.1:8082, sessions sess-alice and sess-bob
//	go run ./examples/chi -upstream http://127.0.0.1:8080/v1 -upstream-key sk-demo -relay gpt-4o-mini
//
//	curl -H 'X-Session: sess-alice' -H 'Content-Type: application/json' http://127.0.0.1:8082/v1/chat/completions \
//		-d '{"model":"demo-chat","messages":[{"role":"user","content":"Hello!"}]}'
//
// Flags:
//
//	-addr          address to listen on (default 127.0.0.1:8082)
//	-upstream      the upstream's base URL, ending in /v1; empty for none
//	-upstream-key  the upstream's API key (default: $GATEWAY_UPSTREAM_KEY)
//	-relay         comma-separated ids of the upstream's models to relay
//
// The session's user is the caller of the API, charged like an API key:
// each user has a key in the service's key store (c.keys), stored without
// a secret, and auth.Identities names it from the session, so that the
// user's quota is reserved and settled, its usage recorded by model, and
// its stored responses its own (another user's are 404 to it). A
// guardrail interceptor (endpoint.WithInterceptors) refuses prompts that
// name a secret of the service's, in each family's error shape and
// charged nothing. The demo-* models and the relayed ones are routed by
// the kit's per-model router (package router), whose catalogue is the one
// that /v1/models lists.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/route"
	"github.com/gatewaykit/gatewaykit/router"
)

// config configures the service.
type config struct {
	users       users
	keys        *auth.MemoryKeyStore // the users' keys: their quotas and usage
	upstreamURL string               // the upstream's base URL, ending in /v1; empty for none
	upstreamKey string               // the upstream's API key
	relayed     []string             // the upstream's models to relay
}

// newService returns the service's router: its own routes, and the API.
func newService(c config) (http.Handler, error) {
	if err := c.users.keys(c.keys); err != nil {
		return nil, err
	}
	api, err := newAPI(c)
	if err != nil {
		return nil, err
	}
	own := slices.Concat(
		route.List(http.HandlerFunc(healthz), "GET /healthz"),
		route.List(http.HandlerFunc(c.users.profile), "GET /api/profile"),
	)

	r := chi.NewRouter()
	mount(r, own)
	r.Group(func(r chi.Router) {
		r.Use(auth.Middleware(c.keys, // no sk- keys: the service's sessions only, charged to their users' keys
			auth.WithAuthenticators(auth.Identities(c.keys, c.users.identify)),
			auth.WithErrorShape(apierrors.ShapeFor)))
		mount(r, api)
	})
	// chi tells its MethodNotAllowed handler no methods: Unrouted finds
	// them in the routes, the service's own among them.
	unrouted := route.Unrouted(slices.Concat(own, api))
	r.NotFound(unrouted.ServeHTTP)
	r.MethodNotAllowed(unrouted.ServeHTTP)
	return r, nil
}

// newAPI returns the routes of the kit's handlers: the model list, chat
// completions, completions and responses, over a router that sends the
// demo-* models to the demo backend and c.relayed to a relay, with the
// guardrail.
func newAPI(c config) ([]route.Route, error) {
	text := demo.NewTextBackend()
	routes := []router.Route{{Models: demo.TextModels(), // demo-chat, demo-reasoner, demo-instruct
		Chat: text.Chat(), Completions: text.Completions(), Responses: text.Responses()}}
	if c.upstreamURL != "" && len(c.relayed) > 0 {
		var relayed []relay.Route
		var list []models.Model
		for _, id := range c.relayed {
			relayed = append(relayed, relay.Route{Model: id, Upstreams: []relay.Upstream{{BaseURL: c.upstreamURL, Key: c.upstreamKey}}})
			list = append(list, models.Model{ID: id, OwnedBy: "upstream",
				EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse}})
		}
		rl, err := relay.New(relayed)
		if err != nil {
			return nil, err
		}
		routes = append(routes, router.Route{Models: list, Chat: rl.Chat(), Completions: rl.Completions(), Responses: rl.Responses()})
	}
	rt, err := router.New(routes...)
	if err != nil {
		return nil, err
	}
	catalog := rt.Catalog()
	guard := endpoint.WithInterceptors(guardrail)
	return slices.Concat(
		models.Routes(models.NewHandler(catalog)),
		chat.Routes(chat.NewHandler(catalog, rt.Chat(), guard)),
		completions.Routes(completions.NewHandler(catalog, rt.Completions(), guard)),
		responses.Routes(responses.NewHandler(catalog, rt.Responses(), guard)),
	), nil
}

// guardrail refuses the calls whose prompt names the service's secret
// project: a 400 in the family's error shape, charged nothing.
func guardrail(next endpoint.Func) endpoint.Func {
	return func(ctx context.Context, c *endpoint.Call) (*endpoint.Reply, error) {
		if strings.Contains(strings.ToLower(c.Prompt()), "project nightingale") {
			return nil, apierrors.InvalidRequest("", "This request names a confidential project; it was not sent to the model.")
		}
		return next(ctx, c)
	}
}

// mount mounts routes on r, their paths in chi's syntax.
func mount(r chi.Router, routes []route.Route) {
	for _, rt := range routes {
		if rt.Method == "" {
			r.Handle(chiPath(rt.Path), rt.Handler)
			continue
		}
		r.Method(rt.Method, chiPath(rt.Path), rt.Handler)
	}
}

// chiPath spells a path of ServeMux syntax in chi's: {name} is the same,
// and the rest of the path, {name...} or a final "/", is "*".
func chiPath(path string) string {
	if i := strings.LastIndex(path, "/{"); i >= 0 && strings.HasSuffix(path, "...}") {
		return path[:i+1] + "*"
	}
	if strings.HasSuffix(path, "/") {
		return path + "*"
	}
	return path
}

// user is a row of the service's user table.
type user struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Team string `json:"team"`
	// Quota is the tokens that the user may spend; 0 means no bound.
	Quota int64 `json:"-"`
}

// users is the service's user table, by session token. A real service
// keeps both in its database.
type users map[string]user

// keys puts the key of each user in keys: its id keyID(user), no secret
// (only the user's session names it), the user as its owner, and the
// user's quota.
func (u users) keys(keys *auth.MemoryKeyStore) error {
	for _, usr := range u {
		q := auth.UnlimitedQuota()
		if usr.Quota > 0 {
			q = auth.LimitedQuota(usr.Quota)
		}
		if err := keys.PutKey(context.Background(), "", auth.Key{ID: keyID(usr), Owner: usr.ID, Quota: q}); err != nil {
			return err
		}
	}
	return nil
}

// keyID is the id of the key of usr.
func keyID(usr user) string { return "user-" + usr.ID }

// session returns the session token of r: its X-Session header, or its
// session cookie.
func session(r *http.Request) string {
	if token := r.Header.Get("X-Session"); token != "" {
		return token
	}
	if c, err := r.Cookie("session"); err == nil {
		return c.Value
	}
	return ""
}

// identify is the service's identity as the kit sees it: the key of the
// user of the request's session (auth.Identities). It is the one place
// where the service's sessions meet the kit. A request without a session
// gets the kit's 401 missing_authorization; an unknown session, 401
// invalid_api_key.
func (u users) identify(r *http.Request) (string, error) {
	token := session(r)
	if token == "" {
		return "", nil
	}
	usr, ok := u[token]
	if !ok {
		return "", apierrors.InvalidAPIKey("The session is not valid; sign in again.")
	}
	return keyID(usr), nil
}

func healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// profile answers the user of the request's session, or 401 in the
// service's own format.
func (u users) profile(w http.ResponseWriter, r *http.Request) {
	usr, ok := u[session(r)]
	if !ok {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "sign in first"})
		return
	}
	writeJSON(w, http.StatusOK, usr)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8082", "address to listen on")
	upstream := flag.String("upstream", "", "the upstream's base URL, ending in /v1; empty for none")
	upstreamKey := flag.String("upstream-key", os.Getenv("GATEWAY_UPSTREAM_KEY"), "the upstream's API key")
	relayed := flag.String("relay", "", "comma-separated ids of the upstream's models to relay")
	flag.Parse()
	c := config{
		users: users{
			"sess-alice": {ID: "u1", Name: "Alice", Team: "research"},
			"sess-bob":   {ID: "u2", Name: "Bob", Team: "sales", Quota: 5000},
		},
		keys:        auth.NewMemoryKeyStore(),
		upstreamURL: *upstream,
		upstreamKey: *upstreamKey,
	}
	if *relayed != "" {
		c.relayed = strings.Split(*relayed, ",")
	}
	h, err := newService(c)
	if err != nil {
		log.Fatal(err)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("serving on http://%s", l.Addr())
	srv := gateway.NewServer(l.Addr().String(), h)
	log.Fatal(srv.Serve(gateway.LimitListener(l, gateway.DefaultMaxConns)))
}
