// Package reqctx is the one context value that the kit's own middlewares
// share per request: the metrics and tracing middlewares of module
// github.com/gatewaykit/gatewaykit/observe make it, for each request they
// serve, with the request's telemetry.Info, and the auth
// middleware, which runs inside them, records the request's principal in
// it instead of making a copy of the request with a context of its own.
// A request served by the kit's gateway behind its metrics middleware so
// costs one copy of the *http.Request, not two.
//
// It is internal plumbing: embedders see telemetry.FromContext and
// auth.PrincipalFrom, which read it as they read their own values. A
// context that telemetry.NewContext makes is not a State: it may be
// shared by many requests, and no principal is ever recorded in it.
package reqctx

import "context"

// InfoKey and PrincipalKey are the context keys of the request's
// *telemetry.Info and of its principal (package auth's holder of it).
type (
	InfoKey      struct{}
	PrincipalKey struct{}
)

type stateKey struct{}

// State is a context that carries a request's Info and, once the auth
// middleware has set it, its principal. It answers [InfoKey] and
// [PrincipalKey] only for the values it holds, and asks its parent
// otherwise, so that a State nested in another hides only what it holds.
type State struct {
	context.Context
	// Info is the request's *telemetry.Info.
	Info any
	// Principal is what package auth keeps a principal in; nil until
	// [Claim] hands the State to the auth middleware.
	Principal any
}

// New returns a copy of ctx, the context of one request that the caller
// serves, carrying info. The State must never be shared by two requests.
func New(ctx context.Context, info any) *State {
	return &State{Context: ctx, Info: info}
}

// Value answers InfoKey and PrincipalKey with the values s holds.
func (s *State) Value(key any) any {
	switch key {
	case stateKey{}:
		return s
	case InfoKey{}:
		if s.Info != nil {
			return s.Info
		}
	case PrincipalKey{}:
		if s.Principal != nil {
			return s.Principal
		}
	}
	return s.Context.Value(key)
}

func (s *State) String() string { return "gatewaykit request context" }

// Claim returns the State of ctx in which to record the request's
// principal, or nil when there is none to use: ctx carries no State, or
// already carries a principal (which a principal recorded in the State
// might not hide). The caller sets Principal before it hands ctx on to
// the request's handlers, in the request's goroutine.
func Claim(ctx context.Context) *State {
	s, _ := ctx.Value(stateKey{}).(*State)
	if s == nil || ctx.Value(PrincipalKey{}) != nil {
		return nil
	}
	return s
}
