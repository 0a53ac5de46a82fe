// Package pipeline holds the way of a request through the handlers of
// packages chat, completions and responses, written once ([Serve]):
// decode, validate, model check, quota reservation, backend, encoding
// (JSON or a stream of the backend's deltas) and settlement; and the
// configuration common to the handlers of every endpoint package
// ([Config]), which the options of package endpoint set through a
// [Target].
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"time"

	"github.com/go-playground/validator/v10"

	"github.com/gatewaykit/gatewaykit/auth"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/sse"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// Config is the configuration common to the handlers. Make it with
// Defaults, apply the options, then call Finish.
type Config struct {
	Logger   *slog.Logger
	MaxBytes int64
	// Validate is the validator of endpoint.WithValidator, with rules of
	// its own that requests go through once the handler's checks pass;
	// nil without one.
	Validate  *validator.Validate
	Allow     models.AllowFunc
	KeepAlive time.Duration
	ErrorHook func(*http.Request, *apierrors.Error)
	Now       func() time.Time
	// Chain runs the interceptors of endpoint.WithInterceptors; nil
	// without any.
	Chain Chain
	// Interceptors holds the []endpoint.Interceptor that Chain runs, for
	// the options that add more.
	Interceptors any
	// Renderer writes the handler's errors; Finish sets it.
	Renderer apierrors.Renderer
}

// A Target is what the options of an endpoint package apply to: the
// configuration of a handler being made. The options of package endpoint
// set its common part, Common. A package with options of its own
// (responses, images) has a configuration type of its own, which embeds
// Config (and so is a Target), and its own options reach their settings
// by asserting that type: only its NewHandler applies them.
//
// Each endpoint package's Option is an interface whose one method takes a
// Target and is named for the package (ApplyToChat, ApplyToResponses, …):
// a type of another module cannot implement it, since it cannot name
// Target, and an option has the method of a package only if it means
// something to that package's handler.
type Target interface {
	// Common returns the configuration common to every endpoint package.
	Common() *Config
}

// Common returns c: a Config is the Target of a package without options
// of its own.
func (c *Config) Common() *Config { return c }

// New returns the configuration of a handler of a package without
// options of its own: the defaults, with opts applied by apply (the
// method of the package's Option, such as chat.Option.ApplyToChat).
func New[O any](opts []O, apply func(O, Target)) Config {
	c := Defaults()
	Apply(&c, opts, apply)
	return c
}

// Apply applies opts to t, in order, by apply (the method of the
// package's Option), then finishes t's common configuration.
func Apply[O any](t Target, opts []O, apply func(O, Target)) {
	for _, o := range opts {
		apply(o, t)
	}
	t.Common().Finish()
}

// Defaults returns the configuration of a handler without options: no
// logging, the default body limit and keep-alive interval, the API key's
// models allowed, time.Now.
func Defaults() Config {
	return Config{
		Logger:    slog.New(slog.DiscardHandler),
		MaxBytes:  httpjson.DefaultTextMaxBytes,
		Allow:     AllowPrincipalModels,
		KeepAlive: sse.DefaultKeepAlive,
		Now:       time.Now,
	}
}

// Finish completes c once the options are applied: the renderer.
func (c *Config) Finish() {
	c.Renderer = apierrors.Renderer{Logger: c.Logger}
}

// SetLogger sets the logger; nil logs nothing.
func (c *Config) SetLogger(l *slog.Logger) {
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	c.Logger = l
}

// SetMaxBytes sets the body limit; n ≤ 0 restores the default,
// httpjson.DefaultTextMaxBytes.
func (c *Config) SetMaxBytes(n int64) {
	if n <= 0 {
		n = httpjson.DefaultTextMaxBytes
	}
	c.MaxBytes = n
}

// SetValidator sets the validator; nil means none.
func (c *Config) SetValidator(v *validator.Validate) {
	c.Validate = v
}

// SetClock sets the clock; nil restores time.Now.
func (c *Config) SetClock(now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	c.Now = now
}

// AllowPrincipalModels is the default model check: the models of the
// request's API key, and every model for a request without one.
func AllowPrincipalModels(ctx context.Context, id string) bool {
	p, ok := auth.PrincipalFrom(ctx)
	return !ok || p.AllowsModel(id)
}

// Fail reports err to the error hook and renders it, unless the client
// has gone.
func (c *Config) Fail(w http.ResponseWriter, r *http.Request, err error) {
	c.Hook(r, err)
	c.Renderer.Write(w, r, err)
}

// Hook calls the error hook with err as the client sees it, unless there
// is no hook or the client has gone.
func (c *Config) Hook(r *http.Request, err error) {
	if c.ErrorHook == nil || r.Context().Err() != nil ||
		(errors.Is(err, context.Canceled) && !apierrors.Has(err)) {
		return
	}
	c.ErrorHook(r, apierrors.From(err))
}

// DefaultOutputReserve is the output cap, in tokens per choice, that a
// request's reservation assumes when neither the request nor the model
// sets one.
const DefaultOutputReserve = 4096

// MaxTokens is the largest output cap that a request may set, and the
// largest token count taken from a backend's usage (endpoint.MaxOutputTokens):
// 2³¹−1. Counts are bounded so that the sums of a few of them (a total,
// an estimate of up to endpoint.MaxChoices choices) never overflow.
const MaxTokens = math.MaxInt32

// Count returns the token count n that a backend reported, as the
// handlers take it: n between 0 and [MaxTokens], a negative count as 0
// and a larger one as MaxTokens.
func Count(n int) int { return min(max(n, 0), MaxTokens) }

// Sum returns the sum of the token counts ns, each taken as [Count]
// takes it; it never overflows (a sum of counts saturates at
// math.MaxInt).
func Sum(ns ...int) int {
	s := 0
	for _, n := range ns {
		n = Count(n)
		if s > math.MaxInt-n {
			return math.MaxInt
		}
		s += n
	}
	return s
}

// AddTokens returns a + b, saturating at math.MaxInt64; negative
// arguments count as 0.
func AddTokens(a, b int64) int64 {
	a, b = max(a, 0), max(b, 0)
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// MulTokens returns a × b, saturating at math.MaxInt64; negative
// arguments count as 0.
func MulTokens(a, b int64) int64 {
	a, b = max(a, 0), max(b, 0)
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// PromptTokens estimates the tokens of a prompt of n bytes: n / 4,
// rounded up. It is cheap and, for the JSON bodies of requests, which
// carry names, quotes and braces besides the text, errs on the high side
// for most languages.
func PromptTokens(n int) int64 { return (int64(max(n, 0)) + 3) / 4 }

// Estimate returns the tokens that a request reserves: promptTokens plus
// choices times the output cap, which is limit (the request's max_tokens,
// max_completion_tokens or max_output_tokens) if positive, else the
// model's OutputTokenLimit if set, else [DefaultOutputReserve]. It
// saturates at math.MaxInt64 rather than overflow, whatever the
// arguments (the handlers refuse caps above [MaxTokens] first, so theirs
// stay far below).
func Estimate(promptTokens int64, choices, limit int, m *models.Model) int64 {
	if limit <= 0 && m != nil {
		limit = m.OutputTokenLimit
	}
	if limit <= 0 {
		limit = DefaultOutputReserve
	}
	return AddTokens(promptTokens, MulTokens(int64(max(choices, 1)), int64(limit)))
}

// msgQuota is the message of a request refused because all of its key's
// quota is reserved by requests in flight.
const msgQuota = "You exceeded the quota of this API key: what is left is reserved by requests in flight. Please retry when they end, or check your plan and billing details."

// Usage is the tokens that a request read and wrote, as its backend
// reported them or as they were estimated. Cached and CacheWrite are the
// input tokens read from and written to the provider's prompt cache, and
// Reasoning the output tokens spent reasoning: parts of Input and Output,
// which a model's pricing may price apart (models.Pricing.UsageCost).
type Usage struct{ Input, Output, Cached, CacheWrite, Reasoning int64 }

// Total returns Input + Output, negative counts as 0, saturating at
// math.MaxInt64.
func (u Usage) Total() int64 { return AddTokens(u.Input, u.Output) }

// A Charge is what an admitted request is charged on: the reservation of
// its API key and the model it named, whose pricing gives the cost
// recorded. A request without a key has a nil Charge.
type Charge struct {
	rsv   *auth.Reservation
	model *models.Model
}

// KeyID returns the id of the key charged; "" for a nil Charge.
func (ch *Charge) KeyID() string {
	if ch == nil {
		return ""
	}
	return ch.rsv.KeyID()
}

// Amount returns the amount reserved; 0 for a nil Charge.
func (ch *Charge) Amount() int64 {
	if ch == nil {
		return 0
	}
	return ch.rsv.Amount()
}

// Reserve reserves est tokens of the request's API key (auth.Reserve)
// for a request to model m. All of the key's quota promised to requests
// in flight, or its budget in money spent, is a 403 insufficient_quota;
// a key store that fails is a 503 (apierrors.FromDependency).
// A request that is not behind auth.Middleware has no key: it gets a nil
// Charge, which [Config.Settle] accepts.
func (c *Config) Reserve(ctx context.Context, m *models.Model, est int64) (*Charge, error) {
	res, err := auth.Reserve(ctx, est)
	switch {
	case err == nil:
		return &Charge{rsv: res, model: m}, nil
	case errors.Is(err, auth.ErrNoPrincipal):
		return nil, nil
	case errors.Is(err, auth.ErrQuotaExceeded):
		telemetry.SetRefusal(ctx, telemetry.RefusalQuota)
		return nil, apierrors.InsufficientQuota(msgQuota).WithCause(err)
	}
	return nil, apierrors.FromDependency(ctx, fmt.Errorf("reserving quota: %w", err))
}

// Settle ends the charge ch of a request that used u: it releases the
// reservation and records u's total against the key in one step, with
// the model, the tokens (the cached, cache-write and reasoning tokens
// apart) and their cost at the model's pricing (models.Pricing.TokensCost),
// so that
// the request is recorded once in the key's usage. A nil ch (no key)
// records nothing; a settlement that fails is logged. Either way, u's
// tokens go to the request's telemetry.Info (telemetry.AddTokens): call
// Settle once per request.
func (c *Config) Settle(ctx context.Context, ch *Charge, u Usage) {
	parts := u.Clamped()
	telemetry.AddTokens(ctx, u.Input, u.Output)
	telemetry.AddTokenDetails(ctx, parts.Cached, parts.CacheWrite, parts.Reasoning)
	if ch == nil {
		return
	}
	tokens := u.Total()
	p := auth.SettleParams{Used: tokens, InputTokens: max(u.Input, 0), OutputTokens: max(u.Output, 0),
		CachedTokens: parts.Cached, CacheWriteTokens: parts.CacheWrite, ReasoningTokens: parts.Reasoning}
	if ch.model != nil {
		p.Model = ch.model.ID
		p.CostUSD = ch.model.Pricing.TokensCost(models.Tokens{Input: p.InputTokens, Output: p.OutputTokens,
			Cached: p.CachedTokens, CacheWrite: p.CacheWriteTokens, Reasoning: p.ReasoningTokens})
	}
	_, err := ch.rsv.SettleUsage(ctx, p)
	switch {
	case err == nil:
	case errors.Is(err, auth.ErrQuotaExceeded):
		c.Logger.LogAttrs(ctx, slog.LevelDebug, "usage exceeded the key's quota", slog.Int64("tokens", tokens))
	default:
		c.Logger.LogAttrs(ctx, slog.LevelError, "settling usage failed", slog.Int64("tokens", tokens), slog.String("error", err.Error()))
	}
}

// Written counts the bytes of output a stream has written, to estimate
// the usage of a stream whose backend never reported any: the client
// went away first, or the backend does not count. See [Written.Usage].
type Written struct {
	bytes    int64
	reported bool
}

// Add counts n bytes of output text (content, reasoning, tool call names
// and arguments, or a raw chunk).
func (w *Written) Add(n int) { w.bytes = AddTokens(w.bytes, int64(n)) }

// Reported records that the backend reported the usage.
func (w *Written) Reported() { w.reported = true }

// Usage returns the usage that the backend reported if it reported one
// (each count taken from 0 to [MaxTokens], the details at most their
// counts); otherwise the estimate promptTokens in and [PromptTokens] of
// the output bytes written out, or nothing if no output was written (the
// stream failed, or its client left, before the backend sent anything).
func (w *Written) Usage(reported Usage, promptTokens int64) Usage {
	switch {
	case w.reported:
		return reported.Clamped()
	case w.bytes == 0:
		return Usage{}
	}
	return Usage{Input: promptTokens, Output: (min(w.bytes, math.MaxInt64-3) + 3) / 4}
}

// Clamped returns u with each count from 0 to [MaxTokens], the cached
// and cache-write tokens together at most the input tokens, and the
// reasoning tokens at most the output tokens.
func (u Usage) Clamped() Usage {
	c := func(n int64) int64 { return min(max(n, 0), MaxTokens) }
	u.Input, u.Output = c(u.Input), c(u.Output)
	u.Cached = min(c(u.Cached), u.Input)
	u.CacheWrite = min(c(u.CacheWrite), u.Input-u.Cached)
	u.Reasoning = min(c(u.Reasoning), u.Output)
	return u
}

// StartStream starts the SSE reply of a streaming request, with the
// handler's renderer and keep-alive interval. If it cannot, it answers
// with a 500 and reports false.
func (c *Config) StartStream(w http.ResponseWriter, r *http.Request) (*sse.Stream, bool) {
	s, err := sse.Start(w, r, sse.WithRenderer(c.Renderer), sse.WithKeepAlive(c.KeepAlive))
	if err != nil {
		c.Fail(w, r, apierrors.Internal(err))
		return nil, false
	}
	return s, true
}
