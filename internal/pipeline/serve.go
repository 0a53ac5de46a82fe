package pipeline

import (
	"context"
	"iter"
	"net/http"

	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/sse"
)

// An Admission is what a handler adds to the steps that [Admit] takes
// for a request: R is the request type, P the backend's params (made by
// Prepare). Every method is called in the request's goroutine.
type Admission[R, P any] interface {
	// Decode reads the request body and decodes it into req; it returns
	// the body.
	Decode(w http.ResponseWriter, r *http.Request, req *R) ([]byte, error)
	// Validate checks the decoded request.
	Validate(req *R) error
	// Model returns the model that req names.
	Model(req *R) string
	// Prepare makes the backend's params of a valid request for model m,
	// and returns them with the prompt's estimated tokens and the tokens
	// to reserve.
	Prepare(ctx context.Context, req *R, m *models.Model, body []byte) (p P, prompt, reserve int64, err error)
}

// An Endpoint is what a handler of chat, completions or responses adds
// to the steps that [Serve] takes for each of them: its [Admission], and
// the reply. D is the backend's stream delta.
type Endpoint[R, P, D any] interface {
	Admission[R, P]
	// Streams reports whether the reply is a stream.
	Streams(p P) bool
	// Reply asks the backend for the whole reply and, if it can be sent,
	// writes it; it returns the usage to charge, and the error to send
	// instead (nothing written). The usage is charged with an error too:
	// a reply that was generated, and whose last step failed (the
	// responses store could not keep it), is charged.
	Reply(w http.ResponseWriter, r *http.Request, p P) (used Usage, err error)
	// Deltas returns the backend's stream of p, whose Params call flush
	// in their Flush (see [WriteDeltas]).
	Deltas(ctx context.Context, p P, flush func()) iter.Seq2[D, error]
	// NewStream returns the writer of the stream of p on s.
	NewStream(r *http.Request, s *sse.Stream, p P) DeltaWriter[D]
}

// A DeltaWriter turns a backend's deltas into the events of a stream.
type DeltaWriter[D any] interface {
	// Add writes the events of one delta, without flushing them. It must
	// not keep d, nor what d points to, once it returns: the backend may
	// reuse them.
	Add(d *D) error
	// Finish writes the end of a stream whose deltas were all written.
	Finish() error
	// End ends the stream after err, the first error of the backend, of
	// Add, of a flush or of Finish; nil if there was none.
	End(r *http.Request, err error)
	// Used returns the usage to charge: the usage reported, or an
	// estimate from prompt and the output written.
	Used(prompt int64) Usage
}

// Serve answers a request of endpoint e: it decodes and validates it,
// checks its model against catalog (with compat and the configured
// Allow), reserves its estimate from the API key (auth.Reserve), answers
// with the backend's reply, as JSON or as a stream, and settles the
// reservation to the tokens used; on every path, a failed or abandoned
// reply included, the reservation is settled once.
func Serve[R, P, D any](c *Config, catalog models.Catalog, compat models.EndpointType, e Endpoint[R, P, D], w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p, prompt, rsv, err := Admit(c, catalog, compat, e, w, r)
	if err != nil {
		c.Fail(w, r, err)
		return
	}
	if d, ok := e.(Deferrer[P]); ok && d.Defer(w, r, p, prompt, rsv) {
		return
	}
	if !e.Streams(p) {
		var used Usage // what Reply says to charge; nothing if it fails before the backend answers
		defer func() { c.SettleCall(ctx, rsv, used, err) }()
		used, err = e.Reply(w, r, p)
		if err != nil {
			c.Fail(w, r, err)
		}
		return
	}
	s, ok := c.StartStream(w, r)
	if !ok {
		c.Settle(ctx, rsv, Usage{})
		return
	}
	defer s.Close()
	dw := e.NewStream(r, s, p)
	// The events are written without a flush, and flushed as the
	// backend's stream says (see WriteDeltas).
	err = WriteDeltas(ctx, s, func(ctx context.Context, flush func()) iter.Seq2[D, error] { return e.Deltas(ctx, p, flush) }, dw)
	if err == nil {
		err = dw.Finish()
	}
	dw.End(r, err)
	// On every path, a failed or abandoned stream included, the charge
	// is the total of the last usage reported, or, if the backend never
	// reported one, the estimate of the prompt and of the output written.
	c.SettleCall(ctx, rsv, dw.Used(prompt), err)
}

// A Deferrer is an [Endpoint] that may answer a request at once and do
// its work later (a background response): Defer reports whether it took
// the request over, the charge ch included, which it then settles when
// the work ends (or at once, if it fails to take it over).
type Deferrer[P any] interface {
	Defer(w http.ResponseWriter, r *http.Request, p P, prompt int64, ch *Charge) bool
}

// Admit takes the steps of Serve up to the reservation: it decodes and
// validates the request, checks its model against catalog (with compat
// and the configured Allow), prepares the backend's params and reserves
// their estimate from the API key, for the model found. It returns the error to send, if any
// (nothing is reserved then).
func Admit[R, P any](c *Config, catalog models.Catalog, compat models.EndpointType, e Admission[R, P], w http.ResponseWriter, r *http.Request) (p P, prompt int64, rsv *Charge, err error) {
	ctx := r.Context()
	req := new(R)
	body, err := e.Decode(w, r, req)
	if err != nil {
		return p, 0, nil, err
	}
	if err := e.Validate(req); err != nil {
		return p, 0, nil, err
	}
	m, err := models.Require(ctx, catalog, e.Model(req), compat, c.Allow)
	if err != nil {
		return p, 0, nil, err
	}
	p, prompt, est, err := e.Prepare(ctx, req, m, body)
	if err != nil {
		return p, 0, nil, err
	}
	rsv, err = c.Reserve(ctx, m, est)
	return p, prompt, rsv, err
}

// EndWithError ends a chat or completions stream after err: an error
// event, reported to the error hook, unless err is nil.
func (c *Config) EndWithError(r *http.Request, s *sse.Stream, err error) {
	if err != nil {
		c.Hook(r, err)
		_ = s.Error(err)
	}
}
