package telemetry

import (
	"context"

	"github.com/gatewaykit/gatewaykit/internal/reqctx"
)

// Info is what the kit learns about one request, for the metrics and
// traces of a middleware that wraps it (see the package documentation
// for who fills each field). Keys and secrets are never recorded in it.
type Info struct {
	// Route is the pattern of the route that served the request, such as
	// "POST /v1/chat/completions": through package gateway, the ServeMux
	// pattern ("/" for a path that no route serves); otherwise the
	// pattern of the kit's handler that served it. Empty for a request
	// that no handler of the kit reached, outside package gateway.
	Route string
	// Model is the catalogue id of the model the request asked for, once
	// the handler found it; empty before, and for requests without one.
	Model string
	// InputTokens and OutputTokens are the tokens of the request's usage,
	// as its handler settled it against the request's key (or would
	// have, for a request without one); the sum of every AddTokens.
	InputTokens  int64
	OutputTokens int64
	// CachedTokens and CacheWriteTokens are the parts of InputTokens read
	// from and written to the provider's prompt cache, ReasoningTokens the
	// part of OutputTokens spent reasoning, as the backend reported them;
	// the sum of every AddTokenDetails.
	CachedTokens     int64
	CacheWriteTokens int64
	ReasoningTokens  int64
	// KeyID is the id of the API key that the request's credential named
	// (never its secret), once the auth middleware has looked it up,
	// refused requests of a known key included; empty otherwise.
	KeyID string
	// Refusal is the error code of a request that the gateway refused by
	// its own limits: RefusalRateLimit or RefusalQuota. It is empty for
	// every other request, including one that an upstream refused.
	Refusal string
}

// The values of Info.Refusal: the error codes of the refusals.
const (
	// RefusalRateLimit is a request over its key's rate limit (429).
	RefusalRateLimit = "rate_limit_exceeded"
	// RefusalQuota is a request whose key has no quota left, or whose
	// quota is all reserved by requests in flight (403).
	RefusalQuota = "insufficient_quota"
)

// NewContext returns a copy of ctx that carries info.
func NewContext(ctx context.Context, info *Info) context.Context {
	return context.WithValue(ctx, reqctx.InfoKey{}, info)
}

// FromContext returns the Info that ctx carries, or nil.
func FromContext(ctx context.Context) *Info {
	info, _ := ctx.Value(reqctx.InfoKey{}).(*Info)
	return info
}

// SetModel records model as the request's model, when ctx carries an
// Info.
func SetModel(ctx context.Context, model string) {
	if info := FromContext(ctx); info != nil {
		info.Model = model
	}
}

// SetRoute records route as the request's route, when ctx carries an
// Info whose Route is still empty: the router that served the request
// may have set it, and knows best. The kit's handlers call it with their
// own pattern.
func SetRoute(ctx context.Context, route string) {
	if info := FromContext(ctx); info != nil && info.Route == "" {
		info.Route = route
	}
}

// AddTokens adds input and output tokens to the request's InputTokens
// and OutputTokens, when ctx carries an Info; negative counts add
// nothing. The kit's handlers call it once per request, when they settle
// its usage; a handler of your own that charges tokens through package
// auth calls it too, so that its requests are counted.
func AddTokens(ctx context.Context, input, output int64) {
	if info := FromContext(ctx); info != nil {
		info.InputTokens += max(input, 0)
		info.OutputTokens += max(output, 0)
	}
}

// AddTokenDetails adds the parts of the tokens of [AddTokens] that
// providers price apart to the request's CachedTokens, CacheWriteTokens
// and ReasoningTokens, when ctx carries an Info; negative counts add
// nothing. The kit's handlers call it with AddTokens.
func AddTokenDetails(ctx context.Context, cached, cacheWrite, reasoning int64) {
	if info := FromContext(ctx); info != nil {
		info.CachedTokens += max(cached, 0)
		info.CacheWriteTokens += max(cacheWrite, 0)
		info.ReasoningTokens += max(reasoning, 0)
	}
}

// SetRefusal records code as the request's refusal, when ctx carries an
// Info.
func SetRefusal(ctx context.Context, code string) {
	if info := FromContext(ctx); info != nil {
		info.Refusal = code
	}
}

// A UsageWriter is a key store that records the usage it settles behind,
// in group commits (the SQLite and PostgreSQL stores of module
// github.com/gatewaykit/gatewaykit/store): a settlement is answered at
// once and written a moment later. Its methods report how far behind it
// is, for metrics (gatewaykit_usage_pending and
// gatewaykit_usage_write_failures_total in module
// github.com/gatewaykit/gatewaykit/observe). They must be safe for
// concurrent use and cheap: a metrics scrape calls them.
type UsageWriter interface {
	// PendingUsage returns the number of settlements accepted and not
	// yet written.
	PendingUsage() int
	// FailedUsageWrites returns the number of group commits that have
	// failed since the store was opened (each try counts).
	FailedUsageWrites() uint64
}
