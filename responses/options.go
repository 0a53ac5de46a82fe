package responses

import (
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
	owner auth.OwnerFunc
}

func newConfig(opts []Option) config {
	c := config{Config: pipeline.New(opts), owner: auth.AccountOwner}
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

// WithOwner sets how the owner that scopes a request's stored responses
// is found (auth.OwnerFunc): a response is visible only to requests with
// the owner of the request that created it. The default is
// auth.AccountOwner (by account; auth.KeyOwner scopes by key); nil
// restores it.
func WithOwner(f auth.OwnerFunc) Option {
	return func(c *pipeline.Config) { c.Owner = f }
}
