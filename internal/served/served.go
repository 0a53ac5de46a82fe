// Package served holds what the handlers of the access points that the
// kit serves itself share (packages embeddings, moderations, rerank,
// images and audio): reading a JSON body within the limit, the model
// check, the reservation of the request's estimate against its API key
// and its settlement with the usage described (model, input and output
// tokens), and the one error renderer of their configuration; and, for
// the access points whose backend answers in one call (embeddings,
// moderations, rerank), the whole handler around the steps that are
// their own ([NewJSON]), and the reading of the input unions of
// embeddings and moderations ([InputItems]).
package served

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/gatewaykit/gatewaykit/auth"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/internal/validation"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// Endpoint is the part of a handler that every access point shares: its
// configuration (made by pipeline.New from the package's options), its
// catalogue and the endpoint type its models must list.
type Endpoint struct {
	Cfg     pipeline.Config
	Catalog models.Catalog
	Need    models.EndpointType

	pkg string // the package's name, in errors
}

// New returns the Endpoint of a handler of package pkg (for panics) with
// configuration c, finished (pipeline.New, pipeline.Apply). It panics if
// catalog is nil.
func New(pkg string, catalog models.Catalog, need models.EndpointType, c pipeline.Config) Endpoint {
	if catalog == nil {
		panic(pkg + ": NewHandler: nil Catalog")
	}
	return Endpoint{Cfg: c, Catalog: catalog, Need: need, pkg: pkg}
}

// DecodeJSON reads r's JSON body, at most the configured limit of it, into
// dst, and returns the body. Every failure is a 400 that says what is
// wrong.
func (e *Endpoint) DecodeJSON(w http.ResponseWriter, r *http.Request, dst any) ([]byte, error) {
	body, err := httpjson.ReadJSON(w, r, e.Cfg.MaxBytes)
	if err != nil {
		return nil, err
	}
	return body, httpjson.Unmarshal(body, dst)
}

// Validate runs the validator of endpoint.WithValidator on req, when one
// was set: the handlers check their requests themselves, and a custom
// validator may add rules of its own.
func (e *Endpoint) Validate(req any) error {
	return validation.Struct(e.Cfg.Validate, req)
}

// A Charge is the quota that an admitted request reserved against its
// API key, and the model it named; nil for a request without a key.
type Charge struct {
	rsv   *auth.Reservation
	model *models.Model
}

// msgQuota is the message of a request refused because all of its key's
// quota is reserved by requests in flight (as the text endpoints say).
const msgQuota = "You exceeded the quota of this API key: what is left is reserved by requests in flight. Please retry when they end, or check your plan and billing details."

// Admit checks model against the catalogue (models.Require with the
// endpoint type and the configured Allow) and reserves est tokens of the
// request's API key (auth.Reserve): all of the key's quota reserved by
// requests in flight is a 403 insufficient_quota (recorded as the
// request's telemetry refusal), and a key store that fails a 503
// (apierrors.FromDependency).
func (e *Endpoint) Admit(ctx context.Context, model string, est int64) (*models.Model, *Charge, error) {
	m, err := models.Require(ctx, e.Catalog, model, e.Need, e.Cfg.Allow)
	if err != nil {
		return nil, nil, err
	}
	rsv, err := auth.Reserve(ctx, max(est, 0))
	switch {
	case err == nil:
		return m, &Charge{rsv: rsv, model: m}, nil
	case errors.Is(err, auth.ErrNoPrincipal):
		return m, nil, nil
	case errors.Is(err, auth.ErrQuotaExceeded):
		telemetry.SetRefusal(ctx, telemetry.RefusalQuota)
		return nil, nil, apierrors.InsufficientQuota(msgQuota).WithCause(err)
	}
	return nil, nil, apierrors.FromDependency(ctx, fmt.Errorf("reserving quota: %w", err))
}

// Settle ends ch: it releases the reservation and records input + output
// tokens against the key, with the model, the tokens and their price
// described (auth.SettleParams), in one step of the key store. Call it exactly once
// per admitted request, with zeros for a request that failed. A nil ch
// records nothing; a failure is logged. Either way, the tokens go to the
// request's telemetry.Info (telemetry.AddTokens).
func (e *Endpoint) Settle(ctx context.Context, ch *Charge, input, output int64) {
	telemetry.AddTokens(ctx, input, output)
	if ch == nil {
		return
	}
	input, output = max(input, 0), max(output, 0)
	p := auth.SettleParams{Used: input + output}
	if p.Used > 0 {
		p.Model, p.InputTokens, p.OutputTokens = ch.model.ID, input, output
		p.CostUSD = ch.model.Pricing.Cost(input, output)
	}
	_, err := ch.rsv.SettleUsage(ctx, p)
	switch {
	case err == nil:
	case errors.Is(err, auth.ErrQuotaExceeded):
		e.Cfg.Logger.LogAttrs(ctx, slog.LevelDebug, "usage exceeded the key's quota", slog.Int64("tokens", p.Used))
	default:
		e.Cfg.Logger.LogAttrs(ctx, slog.LevelError, "settling usage failed", slog.Int64("tokens", p.Used), slog.String("error", err.Error()))
	}
}

// Fail renders err (and reports it to the error hook), unless the client
// has gone.
func (e *Endpoint) Fail(w http.ResponseWriter, r *http.Request, err error) {
	e.Cfg.Fail(w, r, err)
}

// BackendError turns a backend's failure into the error to send: an
// *apierrors.Error or a context error passes as it is; anything else is
// a 500 whose cause is only logged.
func BackendError(pkg string, err error) error {
	if apierrors.Has(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return apierrors.Internal(fmt.Errorf("%s: backend: %w", pkg, err))
}

// Tokens estimates the tokens of n bytes of text, as the text endpoints
// do: n / 4, rounded up.
func Tokens(n int) int64 { return pipeline.PromptTokens(n) }

// ServeJSON serves a request of an access point whose body is a JSON
// object Req that names its model (model): it decodes it (DecodeJSON),
// checks it with the package's own rules (validate) and the validator of
// endpoint.WithValidator, admits it (Admit, the estimate from the body's
// size), and calls answer, which asks the backend, writes the reply and
// returns the input tokens used. The reservation is settled once,
// whatever happened: to those tokens, or to nothing when answer failed.
// A failure is answered through Fail.
func ServeJSON[Req any](e *Endpoint, w http.ResponseWriter, r *http.Request, validate func(*Req) error, model func(*Req) string,
	answer func(ctx context.Context, req *Req, m *models.Model) (input int64, err error)) {
	if err := serveJSON(e, w, r, validate, model, answer); err != nil {
		e.Fail(w, r, err)
	}
}

func serveJSON[Req any](e *Endpoint, w http.ResponseWriter, r *http.Request, validate func(*Req) error, model func(*Req) string,
	answer func(ctx context.Context, req *Req, m *models.Model) (input int64, err error)) error {
	req, body, err := DecodeRequest(e, w, r, validate)
	if err != nil {
		return err
	}
	return e.Call(r.Context(), req, model(req), Tokens(len(body)), func(m *models.Model) (int64, int64, error) {
		in, err := answer(r.Context(), req, m)
		return in, 0, err
	})
}

// DecodeRequest reads r's JSON body into a new Req (DecodeJSON), and
// checks it with the package's own rules (validate), then with the
// validator of endpoint.WithValidator; it returns the request and the
// body, or the first failure.
func DecodeRequest[Req any](e *Endpoint, w http.ResponseWriter, r *http.Request, validate func(*Req) error) (*Req, []byte, error) {
	req := new(Req)
	body, err := e.DecodeJSON(w, r, req)
	if err == nil {
		err = validate(req)
	}
	if err == nil {
		err = e.Validate(req)
	}
	return req, body, err
}

// Call takes the steps of a decoded and valid request req, which names
// model, from its admission to its settlement: it admits it (Admit, with
// the estimate est), runs the interceptors (Intercept) and calls answer,
// which asks the backend for the model found, writes the reply and
// returns the input and output tokens to charge. The reservation is
// settled once, whatever happened (SettleReply): to those tokens, or to
// nothing when answer failed. Call returns the error to send, if any.
func (e *Endpoint) Call(ctx context.Context, req any, model string, est int64,
	answer func(m *models.Model) (in, out int64, err error)) (err error) {
	m, charge, err := e.Admit(ctx, model, est)
	if err != nil {
		return err
	}
	var in, out int64
	rep, err := e.Intercept(ctx, req, m.ID)
	defer func() { e.SettleReply(ctx, charge, rep, in, out, err) }()
	if err != nil {
		return err
	}
	in, out, err = answer(m)
	if err != nil {
		in, out = 0, 0
	}
	return err
}

// JSON is what the handler of an access point adds to the steps of
// [ServeJSON] when its request Req is a JSON object that names its model
// and its backend answers with a result R in one call: packages
// embeddings, moderations and rerank.
type JSON[Req, R any] struct {
	// Pattern is the route of the handler, in ServeMux syntax: the
	// request's telemetry route, unless a router set one.
	Pattern string
	// Validate checks a decoded request with the package's own rules.
	Validate func(req *Req) error
	// Model returns the model that req names.
	Model func(req *Req) string
	// Ask asks the backend for the result of req, for model m.
	Ask func(ctx context.Context, req *Req, m *models.Model) (R, error)
	// Check rejects a result that cannot be sent.
	Check func(req *Req, res R) error
	// Reply writes the reply of res, and returns the input tokens to
	// charge.
	Reply func(w http.ResponseWriter, req *Req, res R) (input int64, err error)
}

// NewJSON returns the handler of access point a over e: it serves each
// request through [ServeJSON], asking the backend with a.Ask (a failure
// is the [BackendError] of e's package), checking its result with
// a.Check and replying with a.Reply. The handler is safe for concurrent
// use if the functions of a are.
func NewJSON[Req, R any](e Endpoint, a JSON[Req, R]) http.Handler {
	return &jsonHandler[Req, R]{e: e, a: a}
}

type jsonHandler[Req, R any] struct {
	e Endpoint
	a JSON[Req, R]
}

func (h *jsonHandler[Req, R]) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	telemetry.SetRoute(r.Context(), h.a.Pattern)
	ServeJSON(&h.e, w, r, h.a.Validate, h.a.Model, func(ctx context.Context, req *Req, m *models.Model) (int64, error) {
		res, err := h.a.Ask(ctx, req, m)
		if err != nil {
			return 0, BackendError(h.e.pkg, err)
		}
		if err := h.a.Check(req, res); err != nil {
			return 0, err
		}
		return h.a.Reply(w, req, res)
	})
}

// Intercept runs the interceptors of the handler (endpoint.WithInterceptors)
// for a call of the endpoint's family on req, which names model, once
// the call is admitted (its estimate reserved). It returns the error to
// send in place of the reply: an interceptor's refusal, or, for an
// interceptor that answers the call itself, a 500 (an access point of
// this kind has no text reply to send); otherwise the reply, whose done
// hooks [Endpoint.SettleReply] calls. Without interceptors it returns
// nil, nil.
func (e *Endpoint) Intercept(ctx context.Context, req any, model string) (*pipeline.Reply, error) {
	if e.Cfg.Chain == nil {
		return nil, nil
	}
	rep, err := e.Cfg.Chain(ctx, &pipeline.Call{Family: e.pkg, Model: model, Request: req})
	if err != nil {
		return nil, err
	}
	if rep.Own {
		return nil, apierrors.Internal(fmt.Errorf("%s: an interceptor answered a call with a reply of its own, which %s cannot send", e.pkg, e.pkg))
	}
	return rep, nil
}

// SettleReply calls the done hooks of rep (nil: none) with the usage in,
// out and the error that ended the call, then settles the charge ch to
// the usage that they leave.
func (e *Endpoint) SettleReply(ctx context.Context, ch *Charge, rep *pipeline.Reply, in, out int64, err error) {
	u := pipeline.Usage{Input: in, Output: out}
	rep.Done(ctx, &u, err)
	e.Settle(ctx, ch, u.Input, u.Output)
}
