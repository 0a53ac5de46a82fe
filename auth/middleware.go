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

// Middleware authenticates every request with keys and the options, in
// this order, and answers in the general error shape (or the one that
// [WithErrorShape] picks) when it refuses one:
//
//  1. Reads the credential with [ParseCredential] (401 missing_authorization
//     or 401 invalid_api_key; every 401 carries WWW-Authenticate: Bearer). With no credential at all, a
//     [SessionAuthenticator] set by [WithSessionAuthenticator] may accept
//     a session instead.
//  2. Looks the key up (401 invalid_api_key if unknown, expired or
//     disabled).
//  3. On a request that spends quota ([WithSpending]; by default every
//     method but GET, HEAD, OPTIONS and DELETE), checks the quota
//     snapshot (403 insufficient_quota if a limited key has nothing
//     left, or a key's cost reached its budget in money). Reading and
//     deleting what a key owns stays open to a key that has spent its
//     quota.
//  4. Applies the rate limit (429 rate_limit_exceeded with Retry-After,
//     Retry-After-Ms and the x-ratelimit-*-requests headers, which allowed
//     requests carry too).
//  5. Calls next with the [Principal] in the request context, and with
//     [Charge] able to record usage against the key.
//
// A KeyStore that fails is an outage: 503 service_unavailable with
// Retry-After (apierrors.Unavailable), whose cause is logged, with the
// secret redacted, and not sent. A Limiter that fails is [FailOpen] or
// [FailClosed] ([WithLimiterFailure]). If the request itself ends first,
// its client gone or its deadline passed, nothing is written or a 504 is.
// Middleware panics if keys is nil. The returned middleware is safe for
// concurrent use.
func Middleware(keys KeyStore, opts ...Option) func(http.Handler) http.Handler {
	if keys == nil {
		panic("auth: Middleware: nil KeyStore")
	}
	c := newConfig(opts)
	rd := apierrors.Renderer{Logger: c.logger}
	return func(next http.Handler) http.Handler {
		if next == nil {
			panic("auth: Middleware: nil next Handler")
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, err := c.authenticate(w, r, keys)
			if err != nil {
				rd := rd
				if c.errorShape != nil {
					rd.Shape = c.errorShape(r)
				}
				rd.Write(w, r, hintFor(rd.Shape, challenge(err)))
				return
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// authenticate returns the request context carrying the principal, and
// sets the rate-limit headers on w.
func (c *config) authenticate(w http.ResponseWriter, r *http.Request, keys KeyStore) (context.Context, error) {
	ctx := r.Context()
	cred, err := ParseCredential(r)
	if errors.Is(err, ErrMissingCredentials) && c.sessions != nil {
		return c.authenticateSession(w, r, err)
	}
	if err != nil {
		return nil, err
	}

	k, err := keys.Lookup(ctx, cred.Secret)
	switch {
	case errors.Is(err, ErrKeyNotFound):
		return nil, apierrors.InvalidAPIKey(msgUnknownKey).WithCause(ErrKeyNotFound)
	case err != nil:
		return nil, dependencyError(ctx, "auth: KeyStore.Lookup", redacted{err: err, secret: cred.Secret})
	case k == nil:
		return nil, apierrors.Internal(errors.New("auth: KeyStore.Lookup returned a nil key and no error"))
	}
	if c.observeKey != nil {
		c.observeKey(w, r, k.ID)
	}
	if info := telemetry.FromContext(ctx); info != nil {
		info.KeyID = k.ID
	}
	switch {
	case k.Disabled:
		return nil, apierrors.InvalidAPIKey(msgDisabled).WithCause(fmt.Errorf("key id %q: %w", k.ID, ErrKeyDisabled))
	case k.Expired(c.now()):
		return nil, apierrors.InvalidAPIKey(msgExpired).WithCause(fmt.Errorf("key id %q: %w", k.ID, ErrKeyExpired))
	case k.Quota.Exhausted() && c.spends(r):
		if k.Quota.OverBudget() {
			return nil, apierrors.InsufficientQuota(msgBudget).WithCause(fmt.Errorf("key id %q: cost %g USD of a budget of %g USD: %w", k.ID, k.Quota.CostUSD, k.Quota.BudgetUSD, ErrQuotaExceeded))
		}
		telemetry.SetRefusal(ctx, telemetry.RefusalQuota)
		return nil, apierrors.InsufficientQuota(msgQuota).WithCause(fmt.Errorf("key id %q: %w", k.ID, ErrQuotaExceeded))
	}

	limit := c.defaultLimit
	if k.RateLimit != nil {
		limit = *k.RateLimit
	}
	if err := c.rateLimit(w, r, k.ID, limit); err != nil {
		return nil, err
	}
	pc := withCharging(ctx, Principal{
		KeyID:         k.ID,
		Owner:         k.Owner,
		AllowedModels: k.AllowedModels,
		RateLimit:     limit,
		Credential:    cred.Kind,
		Quota:         k.Quota,
	}, keys)
	c.logAuthenticated(ctx, pc.p)
	return pc, nil
}

func (c *config) authenticateSession(w http.ResponseWriter, r *http.Request, missing error) (context.Context, error) {
	sp, err := c.sessions.AuthenticateSession(r)
	if err != nil {
		if apierrors.Has(err) {
			return nil, err // the authenticator's refusal
		}
		return nil, dependencyError(r.Context(), "auth: SessionAuthenticator", err)
	}
	if sp == nil {
		return nil, missing
	}
	p := *sp
	p.Credential = CredentialSession
	if c.observeKey != nil {
		c.observeKey(w, r, p.KeyID)
	}
	if info := telemetry.FromContext(r.Context()); info != nil {
		info.KeyID = p.KeyID
	}
	if p.RateLimit.Unlimited() {
		p.RateLimit = c.defaultLimit
	}
	if err := c.rateLimit(w, r, "session:"+p.KeyID, p.RateLimit); err != nil {
		return nil, err
	}
	ctx := r.Context()
	c.logAuthenticated(ctx, &p)
	return WithPrincipal(ctx, &p), nil
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
		return dependencyError(ctx, "auth: rate limiter", err)
	}
	if c.observeLimiter != nil {
		c.observeLimiter(ctx, err)
	}
	if c.limiterFailure == FailClosed {
		return dependencyError(ctx, "auth: rate limiter", err)
	}
	missed := c.limiterLog.missed.Add(1)
	now := c.now().UnixNano()
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

// dependencyError is the error to send for err, a failure of the KeyStore
// or the Limiter (what names it) on the request of ctx: the request's own
// end if ctx is done (nothing is written for a client gone, a 504 for a
// deadline), else a 503 (apierrors.Unavailable). It never passes on an
// *apierrors.Error of the dependency, whose text is not redacted.
func dependencyError(ctx context.Context, what string, err error) error {
	if end := ctx.Err(); end != nil {
		return fmt.Errorf("%s: %w (%v)", what, end, err)
	}
	return apierrors.Unavailable(fmt.Errorf("%s: %w", what, err))
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
