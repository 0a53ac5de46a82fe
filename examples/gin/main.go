// Command gin is an existing gin service that embeds gatewaykit. The
// service keeps its own routes (GET /healthz, GET /api/profile), its own
// sessions (the X-Session header, or the session cookie) and its own user
// table, and mounts the kit's model list, chat completions, completions
// and responses under /v1, behind auth.Middleware, from the kit's route
// lists (package route). The demo backend answers the demo-* models; the
// models named by -relay are relayed to the upstream of -upstream. Unknown
// paths and wrong methods answer JSON in the API's error shape
// (route.Unrouted, given to gin's NoRoute and NoMethod).
//
//	go run ./examples/gin          # http://127.0.0.1:8083, sessions sess-alice and sess-bob
//	go run ./examples/gin -upstream http://127.0.0.1:8080/v1 -upstream-key sk-demo -relay gpt-4o-mini
//
//	curl -H 'X-Session: sess-alice' -H 'Content-Type: application/json' http://127.0.0.1:8083/v1/chat/completions \
//		-d '{"model":"demo-chat","messages":[{"role":"user","content":"Hello!"}]}'
//
// Flags:
//
//	-addr          address to listen on (default 127.0.0.1:8083)
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
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

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

// newService returns the service's engine: its own routes, and the API.
func newService(c config) (*gin.Engine, error) {
	if err := c.users.keys(c.keys); err != nil {
		return nil, err
	}
	api, err := newAPI(c)
	if err != nil {
		return nil, err
	}
	e := gin.New()
	e.Use(gin.Recovery())
	e.HandleMethodNotAllowed = true // 405 (and Allow) for a path served with other methods

	e.GET("/healthz", func(ctx *gin.Context) { ctx.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	e.GET("/api/profile", c.users.profile)

	authenticate := auth.Middleware(c.keys, // no sk- keys: the service's sessions only, charged to their users' keys
		auth.WithAuthenticators(auth.Identities(c.keys, c.users.identify)),
		auth.WithErrorShape(apierrors.ShapeFor))
	for _, rt := range api {
		h := gin.WrapH(authenticate(rt.Handler))
		if rt.Method == "" {
			e.Any(ginPath(rt.Path), h)
			continue
		}
		e.Handle(rt.Method, ginPath(rt.Path), h)
	}
	// gin sets Allow before its NoMethod handlers, the service's own
	// routes' methods included; Unrouted answers in the API's JSON.
	unrouted := gin.WrapH(route.Unrouted(api))
	e.NoRoute(unrouted)
	e.NoMethod(unrouted)
	return e, nil
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

// ginPath spells a path of ServeMux syntax in gin's: {name} is :name,
// {name...} is *name, a final "/" is followed by *rest, and {$} is left
// out (gin matches paths exactly).
func ginPath(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		switch {
		case s == "{$}":
			segs[i] = ""
		case strings.HasSuffix(s, "...}"):
			segs[i] = "*" + strings.TrimSuffix(strings.TrimPrefix(s, "{"), "...}")
		case strings.HasPrefix(s, "{"):
			segs[i] = ":" + strings.Trim(s, "{}")
		}
	}
	path = strings.Join(segs, "/")
	if strings.HasSuffix(path, "/") && path != "/" {
		path += "*rest"
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

// profile answers the user of the request's session, or 401 in the
// service's own format.
func (u users) profile(ctx *gin.Context) {
	usr, ok := u[session(ctx.Request)]
	if !ok {
		ctx.JSON(http.StatusUnauthorized, gin.H{"error": "sign in first"})
		return
	}
	ctx.JSON(http.StatusOK, usr)
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

func main() {
	addr := flag.String("addr", "127.0.0.1:8083", "address to listen on")
	upstream := flag.String("upstream", "", "the upstream's base URL, ending in /v1; empty for none")
	upstreamKey := flag.String("upstream-key", os.Getenv("GATEWAY_UPSTREAM_KEY"), "the upstream's API key")
	relayed := flag.String("relay", "", "comma-separated ids of the upstream's models to relay")
	flag.Parse()
	gin.SetMode(gin.ReleaseMode)
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
