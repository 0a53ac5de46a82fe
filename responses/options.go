package responses

import (
	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
)

// An Option configures [NewHandler]: any option of package [endpoint]
// (see the table of its Options), and this package's own, [WithStore],
// [WithConversations], [WithOwner] and [WithBackground]. An option of
// another package, such as images.WithURLKey, does not compile here.
type Option interface {
	// ApplyToResponses applies the option to the handler being made;
	// NewHandler calls it. Only this module's packages implement it.
	ApplyToResponses(pipeline.Target)
}

// The option types of package endpoint that are Options.
var _ = []Option{endpoint.Option{}, endpoint.ValidatorOption{}, endpoint.StreamOption{}, endpoint.ClockOption{}}

// config is the configuration of a handler: the one common to the
// endpoint packages, and the settings of this package's own options.
type config struct {
	pipeline.Config
	store         Store
	conversations ConversationStore // nil: none
	owner         auth.OwnerFunc
	background    *Background // nil: none
}

func newConfig(opts []Option) config {
	c := config{Config: pipeline.Defaults()}
	pipeline.Apply(&c, opts, Option.ApplyToResponses)
	if c.store == nil {
		c.store = NewMemoryStore(nil)
	}
	if c.owner == nil {
		c.owner = auth.AccountOwner
	}
	return c
}

// option is an option of this package's own: it sets the handler's
// config, which NewHandler gives as the Target.
type option func(*config)

func (o option) ApplyToResponses(t pipeline.Target) { o(t.(*config)) }

// WithStore sets the store that keeps responses for GET and DELETE
// /v1/responses/{id} and for previous_response_id. By default each
// handler has its own [MemoryStore] with the default bounds
// (NewMemoryStore(nil)): responses live as long as the process, and two
// handlers do not share them. Use a shared, persistent Store to run
// several gateway instances. nil restores the default. Only this
// package takes it.
func WithStore(s Store) Option {
	return option(func(c *config) { c.store = s })
}

// WithConversations sets the store of the conversations that the
// "conversation" member of a request names: the conversation's items
// (the newest [MaxConversationItems]) come before the input in [Params]
// History, and once the reply has ended its input and output items are
// added to it, unless the request says "store": false (see the package
// documentation). The store of package conversations is one; mount that
// package's handler over the same store to serve /v1/conversations. By
// default, and with nil, there is none: every conversation is unknown,
// a 404. Only this package takes it.
func WithConversations(s ConversationStore) Option {
	return option(func(c *config) { c.conversations = s })
}

// WithOwner sets how the owner that scopes a request's stored responses
// is found (auth.OwnerFunc): a response is visible only to requests with
// the owner of the request that created it. The default is
// auth.AccountOwner (by account; auth.KeyOwner scopes by key); nil
// restores it. Only this package takes it.
func WithOwner(f auth.OwnerFunc) Option {
	return option(func(c *config) { c.owner = f })
}
