package responses

import (
	"context"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
)

// An Option configures [NewHandler]: the options of package endpoint
// ([endpoint.WithLogger], [endpoint.WithMaxRequestBytes],
// [endpoint.WithValidator], [endpoint.WithAllowed],
// [endpoint.WithKeepAlive], [endpoint.WithErrorHook],
// [endpoint.WithClock]) mean the same for every endpoint package;
// [WithStore] and [WithOwner] are this package's own (the other endpoint
// packages ignore them).
type Option = endpoint.Option

type config struct {
	pipeline.Config
	store Store
	owner OwnerFunc
}

func newConfig(opts []Option) config {
	c := config{Config: pipeline.New(opts), owner: PrincipalOwner}
	c.store, _ = c.Config.Store.(Store)
	if c.store == nil {
		c.store = NewMemoryStore(nil)
	}
	if c.Config.Owner != nil {
		c.owner = c.Config.Owner
	}
	return c
}

// WithStore sets the store that keeps responses for GET and DELETE
// /v1/responses/{id} and for previous_response_id. By default each
// handler has its own [MemoryStore] with the default bounds
// (NewMemoryStore(nil)): responses live as long as the process, and two
// handlers do not share them. Use a shared, persistent Store to run
// several gateway instances. nil restores the default.
func WithStore(s Store) Option {
	return func(c *pipeline.Config) { c.Store = s }
}

// An OwnerFunc returns the owner that scopes the stored responses of a
// request: a response is visible only to requests with the owner of the
// request that created it.
type OwnerFunc func(ctx context.Context) string

// WithOwner sets how the owner of a request's responses is found. The
// default is [PrincipalOwner]; nil restores it.
func WithOwner(f OwnerFunc) Option {
	return func(c *pipeline.Config) { c.Owner = f }
}

// PrincipalOwner is the default [OwnerFunc]: the account of the request's
// API key ("owner:" + [auth.Principal] Owner), or the key itself ("key:" +
// KeyID) when the key names no account. A request without a principal
// (a handler not behind auth.Middleware) has the empty owner: its
// responses are visible to every such request, and to none that has a
// principal.
func PrincipalOwner(ctx context.Context) string {
	p, ok := auth.PrincipalFrom(ctx)
	switch {
	case !ok:
		return ""
	case p.Owner != "":
		return "owner:" + p.Owner
	}
	return "key:" + p.KeyID
}
