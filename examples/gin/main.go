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
//	curl -H 'X-Session: sess-alice' http://127.0.0.1:8083/v1/chat/completions \
//		-d '{"model":"demo-chat","messages":[{"role":"user","content":"Hello!"}]}'
//
// Flags:
//
//	-addr          address to listen on (default 127.0.0.1:8083)
//	-upstream      the upstream's base URL, ending in /v1; empty for none
//	-upstream-key  the upstream's API key (default: $GATEWAY_UPSTREAM_KEY)
//	-relay         comma-separated ids of the upstream's models to relay
//
// The session's user is the caller of the API: its stored responses are
// its own (another user's are 404 to it). The identity is given to the
// kit in one function, principal, as a session authenticator
// (auth.WithSessionAuthenticator): such a principal's usage is not
// charged to a quota.
package main

import (
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
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/examples/internal/bymodel"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/route"
)

// config configures the service.
type config struct {
	users       users
	upstreamURL string   // the upstream's base URL, ending in /v1; empty for none
	upstreamKey string   // the upstream's API key
	relayed     []string // the upstream's models to relay
}

// newService returns the service's engine: its own routes, and the API.
func newService(c config) (*gin.Engine, error) {
	api, err := newAPI(c)
	if err != nil {
		return nil, err
	}
	e := gin.New()
	e.Use(gin.Recovery())
	e.HandleMethodNotAllowed = true // 405 (and Allow) for a path served with other methods

	e.GET("/healthz", func(ctx *gin.Context) { ctx.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	e.GET("/api/profile", c.users.profile)

	authenticate := auth.Middleware(auth.NewMemoryKeyStore(), // no sk- keys: the service's sessions only
		auth.WithSessionAuthenticator(auth.SessionAuthenticatorFunc(c.users.principal)),
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
// completions, completions and responses, over the demo backend for the
// demo-* models and a relay for c.relayed.
func newAPI(c config) ([]route.Route, error) {
	text := demo.NewTextBackend()
	list := demo.TextModels() // demo-chat, demo-reasoner, demo-instruct
	chatBackend := bymodel.Chat{Demo: text.Chat()}
	completionsBackend := bymodel.Completions{Demo: text.Completions()}
	responsesBackend := bymodel.Responses{Demo: text.Responses()}
	if c.upstreamURL != "" && len(c.relayed) > 0 {
		var routes []relay.Route
		for _, id := range c.relayed {
			routes = append(routes, relay.Route{Model: id, Upstreams: []relay.Upstream{{BaseURL: c.upstreamURL, Key: c.upstreamKey}}})
			list = append(list, models.Model{ID: id, OwnedBy: "upstream",
				EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse}})
		}
		rl, err := relay.New(routes)
		if err != nil {
			return nil, err
		}
		chatBackend.Other, completionsBackend.Other, responsesBackend.Other = rl.Chat(), rl.Completions(), rl.Responses()
	}
	catalog := models.NewMemoryCatalog(list...)
	return slices.Concat(
		models.Routes(models.NewHandler(catalog)),
		chat.Routes(chat.NewHandler(catalog, chatBackend)),
		completions.Routes(completions.NewHandler(catalog, completionsBackend)),
		responses.Routes(responses.NewHandler(catalog, responsesBackend)),
	), nil
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
}

// users is the service's user table, by session token. A real service
// keeps both in its database.
type users map[string]user

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

// principal is the service's identity as the kit sees it: the user of
// the request's session, whose id scopes its stored responses. It is the
// one place where the service's sessions meet the kit. A request without
// a session gets the kit's 401 missing_authorization; an unknown session,
// 401 invalid_api_key.
func (u users) principal(r *http.Request) (*auth.Principal, error) {
	token := session(r)
	if token == "" {
		return nil, nil
	}
	usr, ok := u[token]
	if !ok {
		return nil, apierrors.InvalidAPIKey("The session is not valid; sign in again.")
	}
	return &auth.Principal{KeyID: "user-" + usr.ID, Owner: usr.ID}, nil
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
			"sess-bob":   {ID: "u2", Name: "Bob", Team: "sales"},
		},
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
