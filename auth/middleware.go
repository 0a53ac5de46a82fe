package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/reqctx"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// The rate-limit response headers, in OpenAI's names.
const (
	HeaderLimitRequests     = "X-Ratelimit-Limit-Requests"
	HeaderRemainingRequests = "X-Ratelimit-Remaining-Requests"
	HeaderResetRequests     = "X-Ratelimit-Reset-Requests"
	// HeaderRetryAfterMs is sent with 429s beside Retry-After; the official
	// SDKs prefer it because it is precise to the millisecond.
	HeaderRetryAfterMs = "Retry-After-Ms"
)

// Client-facing messages of the middleware. None contains the secret.
const (
	msgUnknownKey = "Incorrect API key provided. You can find your API key on the key page of the user centre."
	msgExpired    = "The API key provided has expired."
	msgDisabled   = "The API key provided has been disabled."
	msgQuota      = "You exceeded the quota of this API key. Please check your plan and billing details."
	msgBudget     = "You exceeded the budget of this API key (its cost in US dollars reached its budget_usd). Please check your plan and billing details."
)

// Middleware authenticates every request with its authenticators (by
// default [APIKeys](keys); [WithAuthenticators] sets them) and the
// options, in this order, and answers in the general error shape (or the
// one that [WithErrorShape] picks) when it refuses one:
//
//  1. Asks each [Authenticator] in turn, until one authenticates or
//     refuses the request (401 missing_authorization when none does; every
//     401 carries WWW-Authenticate: Bearer). [APIKeys] reads the
//     credential with [ParseCredential] (401 invalid_api_key if it is
//     malformed), looks the key up (401 invalid_api_key if unknown,
//     expired or disabled). With no credential at all, a
//     [SessionAuthenticator] set by [WithSessionAuthenticator] may accept
//     a session instead.
//  2. On a request that spends quota ([WithSpending]; by default every
//     method but GET, HEAD, OPTIONS and DELETE), checks the quota
//     snapshot of a principal charged to a store (403 insufficient_quota
//     if a limited key has nothing left, or a key's cost reached its
//     budget in money). Reading and deleting what a key owns stays open
//     to a key that has spent its quota.
//  3. Applies the rate limit (429 rate_limit_exceeded with Retry-After,
//     Retry-After-Ms and the x-ratelimit-*-requests headers, which allowed
//     requests carry too).
//  4. Calls next with the [Principal] in the request context, and with
//     [Reserve], [Charge] and [Settle] able to charge its store
//     ([Principal].Keys).
//
// A KeyStore that fails is an outage: 503 service_unavailable with
// Retry-After (apierrors.Unavailable), whose cause is logged, with the
// secret redacted, and not sent. A Limiter that fails is [FailOpen] or
// [FailClosed] ([WithLimiterFailure]). If the request itself ends first,
// its client gone or its deadline passed, nothing is written or a 504 is.
// Middleware panics if keys is nil (keys is the store of the default
// authenticator, needed even when WithAuthenticators replaces it). The
// returned middleware is safe for concurrent use.
func Middleware(keys KeyStore, opts ...Option) func(http.Handler) http.Handler {
	if keys == nil {
		panic("auth: Middleware: nil KeyStore")
	}
	c := newConfig(keys, opts)
	rd := apierrors.Renderer{Logger: c.logger}
	return func(next http.Handler) http.Handler {
		if next == nil {
			panic("auth: Middleware: nil next Handler")
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			pc, err := c.authenticate(w, r)
			if err != nil {
				rd := rd
				if c.errorShape != nil {
					rd.Shape = c.errorShape(r)
				}
				rd.Write(w, r, hintFor(rd.Shape, challenge(err)))
				return
			}
			if st := reqctx.Claim(r.Context()); st != nil {
				// The request's context value of the kit's metrics or
				// tracing middleware: no copy of the request.
				st.Principal = pc
				next.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r.WithContext(pc))
		})
	}
}

// authenticate returns the principal of r, in a context derived from r's
// that carries it, and sets the rate-limit headers on w.
func (c *config) authenticate(w http.ResponseWriter, r *http.Request) (*principalCtx, error) {
	for _, a := range c.authenticators {
		var (
			p   Principal
			ok  bool
			err error
		)
		if ka, isKey := a.(*keyAuthenticator); isKey {
			ok, err = c.authenticateKey(w, r, ka, &p)
		} else {
			ok, err = c.authenticateWith(w, r, a, &p)
		}
		switch {
		case err != nil:
			return nil, err
		case !ok:
			continue
		}
		if err := c.admit(w, r, &p); err != nil {
			return nil, err
		}
		c.logAuthenticated(r.Context(), &p)
		return withOwnPrincipal(r.Context(), &p), nil
	}
	return nil, apierrors.MissingAuthorization(msgMissing).WithCause(ErrMissingCredentials)
}

// authenticateKey sets *p to the principal of the key that ka finds for
// r, and reports whether there is one: what ka.Authenticate does, without
// allocating the principal.
func (c *config) authenticateKey(w http.ResponseWriter, r *http.Request, ka *keyAuthenticator, p *Principal) (bool, error) {
	k, kind, err := ka.find(r)
	if err != nil {
		return false, refusal(r.Context(), err)
	}
	if k == nil {
		return false, nil
	}
	c.observe(w, r, k.ID)
	if err := ka.check(k); err != nil {
		return false, err
	}
	*p = ka.principal(k, kind)
	return true, nil
}

// authenticateWith sets *p to the principal of a for r, and reports
// whether there is one.
func (c *config) authenticateWith(w http.ResponseWriter, r *http.Request, a Authenticator, p *Principal) (bool, error) {
	ap, err := a.Authenticate(r)
	if ap != nil {
		c.observe(w, r, ap.KeyID)
	}
	switch {
	case err != nil:
		if _, ok := a.(sessions); !ok && !apierrors.Has(err) {
			err = fmt.Errorf("auth: Authenticator: %w", err)
		}
		return false, refusal(r.Context(), err)
	case ap == nil:
		return false, nil
	}
	*p = *ap
	return true, nil
}

// observe reports the key id of the request's principal to the key
// observer and the telemetry.
func (c *config) observe(w http.ResponseWriter, r *http.Request, keyID string) {
	if c.observeKey != nil {
		c.observeKey(w, r, keyID)
	}
	if info := telemetry.FromContext(r.Context()); info != nil {
		info.KeyID = keyID
	}
}

// admit checks the quota of p on a request that spends and applies its
// rate limit, which it resolves in p.RateLimit.
func (c *config) admit(w http.ResponseWriter, r *http.Request, p *Principal) error {
	if p.Keys != nil && p.Quota.Exhausted() && c.spends(r) {
		if p.Quota.OverBudget() {
			return apierrors.InsufficientQuota(msgBudget).WithCause(fmt.Errorf("key id %q: cost %g USD of a budget of %g USD: %w", p.KeyID, p.Quota.CostUSD, p.Quota.BudgetUSD, ErrQuotaExceeded))
		}
		telemetry.SetRefusal(r.Context(), telemetry.RefusalQuota)
		return apierrors.InsufficientQuota(msgQuota).WithCause(fmt.Errorf("key id %q: %w", p.KeyID, ErrQuotaExceeded))
	}
	limit := p.RateLimit
	switch {
	case limit.Requests == 0:
		limit = c.defaultLimit
	case limit.Requests < 0:
		limit = Limit{}
	}
	bucket := p.KeyID
	if p.Credential == CredentialSession {
		bucket = "session:" + p.KeyID
	}
	if err := c.rateLimit(w, r, bucket, limit); err != nil {
		return err
	}
	p.RateLimit = limit
	return nil
}

// rateLimit asks the limiter and sets the x-ratelimit headers; it returns
// the 429 for a refused request.
func (c *config) rateLimit(w http.ResponseWriter, r *http.Request, bucket string, limit Limit) error {
	if limit.Unlimited() {
		return nil
	}
	ctx := r.Context()
	d, err := c.limiter.Allow(ctx, bucket, limit)
	if err != nil {
		return c.limiterFailed(ctx, err)
	}
	if d.Allowed {
		setRateLimitHeader(w.Header(), d)
		return nil
	}
	telemetry.SetRefusal(r.Context(), telemetry.RefusalRateLimit)
	h := make(http.Header, 4)
	setRateLimitHeader(h, d)
	retry := max(d.RetryAfter, time.Millisecond)
	h.Set(HeaderRetryAfterMs, strconv.FormatInt(int64((retry+time.Millisecond-1)/time.Millisecond), 10))
	e := apierrors.RateLimitExceeded(fmt.Sprintf(
		"Rate limit reached for requests: limit %d per %s. Please try again in %s.",
		limit.Requests, limit.Window(), FormatReset(retry)), retry)
	e.Header = h
	return e
}

// setRateLimitHeader sets the x-ratelimit-*-requests headers of d on h.
// The three values share one array (a header's value slice is replaced,
// never appended to in place, as its capacity is its length).
func setRateLimitHeader(h http.Header, d Decision) {
	v := &[3]string{strconv.Itoa(d.Limit), strconv.Itoa(max(d.Remaining, 0)), FormatReset(d.Reset)}
	h[HeaderLimitRequests] = v[0:1:1]
	h[HeaderRemainingRequests] = v[1:2:2]
	h[HeaderResetRequests] = v[2:3:3]
}

// challenge adds the WWW-Authenticate header that RFC 6750 asks of a 401:
// "Bearer" when credentials are missing, with error="invalid_token" when
// they are wrong.
func challenge(err error) error {
	var e *apierrors.Error
	if !errors.As(err, &e) || e.Status != http.StatusUnauthorized {
		return err
	}
	c := *e
	c.Header = e.Header.Clone()
	if c.Header == nil {
		c.Header = make(http.Header)
	}
	v := `Bearer error="invalid_token"`
	if c.Code == apierrors.CodeMissingAuthorization {
		v = "Bearer"
	}
	c.Header.Set("WWW-Authenticate", v)
	return &c
}

// hintFor tells a client of the messages or Gemini formats where its own
// SDKs send the key, instead of the general message's Authorization
// header.
func hintFor(shape apierrors.Shape, err error) error {
	var e *apierrors.Error
	if shape == apierrors.General || !errors.As(err, &e) || e.Code != apierrors.CodeMissingAuthorization {
		return err
	}
	c := *e
	switch shape {
	case apierrors.Messages:
		c.Message = msgMissingMessages
	case apierrors.Google:
		c.Message = msgMissingGoogle
	}
	return &c
}

// FormatReset formats d as OpenAI's x-ratelimit-reset-* headers do, the
// form time.ParseDuration reads: "0s", "12ms", "1s", "8.64s", "6m0s".
// It rounds up to the millisecond.
func FormatReset(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	return ((d + time.Millisecond - 1) / time.Millisecond * time.Millisecond).String()
}

func (c *config) logAuthenticated(ctx context.Context, p *Principal) {
	c.logger.LogAttrs(ctx, slog.LevelDebug, "authenticated",
		slog.String("key_id", p.KeyID),
		slog.String("credential", p.Credential.String()),
	)
}

// limiterLogInterval is the least time between two log lines about a
// Limiter that fails open.
const limiterLogInterval = 10 * time.Second

// limiterFailed handles err, an error of the Limiter on the request of
// ctx: nil to serve the request without a rate limit ([FailOpen]), or
// the error to send.
func (c *config) limiterFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return dependencyError(ctx, fmt.Errorf("auth: rate limiter: %w", err))
	}
	if c.observeLimiter != nil {
		c.observeLimiter(ctx, err)
	}
	if c.limiterFailure == FailClosed {
		return dependencyError(ctx, fmt.Errorf("auth: rate limiter: %w", err))
	}
	missed := c.limiterLog.missed.Add(1)
	now := time.Now().UnixNano()
	next := c.limiterLog.next.Load()
	if now < next || !c.limiterLog.next.CompareAndSwap(next, now+int64(limiterLogInterval)) {
		return nil
	}
	c.limiterLog.missed.Add(-missed)
	c.logger.LogAttrs(ctx, slog.LevelError, "auth: the rate limiter failed; serving requests without rate limits",
		slog.Int64("failures", missed),
		slog.String("error", err.Error()),
	)
	return nil
}

// dependencyError is the error to send for err, a failure of a
// dependency (a KeyStore, the Limiter, an authenticator's) that err's
// text names, on the request of ctx: the request's own end if ctx is
// done (nothing is written for a client gone, a 504 for a deadline), else
// a 503 (apierrors.Unavailable). It never passes on an *apierrors.Error
// of the dependency, whose text is not redacted.
func dependencyError(ctx context.Context, err error) error {
	if end := ctx.Err(); end != nil {
		return fmt.Errorf("%w (%v)", end, err)
	}
	return apierrors.Unavailable(err)
}

// redacted hides a secret in the text of an error it wraps.
type redacted struct {
	err    error
	secret string
}

func (e redacted) Error() string {
	return strings.ReplaceAll(e.err.Error(), e.secret, "[REDACTED]")
}

func (e redacted) Unwrap() error { return e.err }
