package pipeline

import (
	"context"
	"errors"
	"iter"
	"log/slog"
	"strings"
)

// A Call is what the interceptors of endpoint.WithInterceptors see of a
// request (endpoint.Call is made from it): its family, the model it
// names, whether it streams, and the decoded request.
type Call struct {
	Family  string
	Model   string
	Stream  bool
	Request any
}

// A Chain runs the interceptors of a handler for a call; it is set by
// endpoint.WithInterceptors, and nil without interceptors (the handlers
// then take none of the steps of this file). It returns the error to
// send in place of the reply, or the reply: the backend's (Own false),
// or the interceptors' own, with the hooks that the interceptors set on
// it.
type Chain func(ctx context.Context, c *Call) (*Reply, error)

// A Reply is the reply of a call as the chain returns it: whether an
// interceptor made it (Own, with its Text and Usage) or the backend is
// to make it, and the hooks that the interceptors set on its way out.
// The handlers call [Reply.Edit] on every piece of text of the reply, in
// order, and [Reply.Done] once, when it ends.
type Reply struct {
	Own   bool
	Text  string
	Usage Usage

	edits []func(choice int, text string) string
	dones []func(ctx context.Context, o *Outcome)
	texts []strings.Builder // the text of each choice, for dones
}

// An Outcome is what the done hooks see: the text of each choice, the
// usage (which they may change) and the error that ended the reply.
type Outcome struct {
	Texts []string
	Usage Usage
	Err   error
}

// OnEdit adds f to the hooks that rewrite the reply's text.
func (r *Reply) OnEdit(f func(choice int, text string) string) { r.edits = append(r.edits, f) }

// OnDone adds f to the hooks that see the reply once it ends.
func (r *Reply) OnDone(f func(ctx context.Context, o *Outcome)) { r.dones = append(r.dones, f) }

// Edit passes text, a piece of choice's text, through the edit hooks, in
// the order they were added, records the result for the done hooks, and
// returns it.
func (r *Reply) Edit(choice int, text string) string {
	if r == nil || text == "" {
		return text
	}
	for _, f := range r.edits {
		text = f(choice, text)
	}
	if len(r.dones) > 0 && choice >= 0 && choice < 1<<16 {
		for len(r.texts) <= choice {
			r.texts = append(r.texts, strings.Builder{})
		}
		r.texts[choice].WriteString(text)
	}
	return text
}

// Done calls the done hooks, in the order of their adding (an
// interceptor adds its hooks once next returns: the innermost first, the
// outermost last, which sees what the inner ones did), with the text recorded, *u and err; it
// sets *u to the usage that they leave. It reports whether they changed
// it.
func (r *Reply) Done(ctx context.Context, u *Usage, err error) bool {
	if r == nil || len(r.dones) == 0 {
		return false
	}
	o := &Outcome{Texts: make([]string, len(r.texts)), Usage: *u, Err: err}
	for i := range r.texts {
		o.Texts[i] = r.texts[i].String()
	}
	for _, f := range r.dones {
		f(ctx, o)
	}
	changed := o.Usage != *u
	*u = o.Usage
	return changed
}

// A Family is what [Intercepted] needs to know of the backend types of
// a family of text (chat, completions, responses): its params P, whole
// result R and stream delta D.
type Family[P, R, D any] struct {
	// Name names the family in the calls (pipeline.Call.Family).
	Name string
	// Call returns the model that p names and the request it carries.
	Call func(p P) (model string, request any)
	// Own returns the result of an interceptor's own reply r to p.
	Own func(p P, r *Reply) R
	// Deltas returns b's reply to p as the handler streams it (the
	// family's Deltas: b.Stream's, or b.Complete's result in pieces).
	Deltas func(ctx context.Context, b Completer[P, R], p P) iter.Seq2[D, error]
	// Texts calls f with each piece of text of res (nil: none), which
	// the edit hooks may change.
	Texts func(res R, f func(choice int, text *string))
	// Usage returns the usage of res (nil: none); SetUsage sets it.
	Usage    func(res R) Usage
	SetUsage func(res R, u Usage)
	// Delta returns the choice of d and its text, which the edit hooks
	// may change (nil if d carries none), and the usage that d reports,
	// if any.
	Delta func(d *D) (choice int, text *string, u Usage, reported bool)
	// UsageDelta returns a delta that reports only u.
	UsageDelta func(u Usage) D
}

// A Completer is a family's Backend: Complete returns the whole reply.
type Completer[P, R any] interface {
	Complete(ctx context.Context, p P) (R, error)
}

// Intercepted is the backend of a handler with interceptors: b, whose
// replies go through chain. It answers a call with the chain's error, or
// with its own reply, or with b's, each piece of whose text goes through
// the edit hooks (a piece that a hook changes is encoded by the handler,
// the others as the upstream sent them) and whose usage goes through the
// done hooks. The family's Backend type embeds it (Complete), and
// streams with [Intercepted.Stream].
type Intercepted[P, R, D any] struct {
	B     Completer[P, R]
	Chain Chain
	F     *Family[P, R, D]
}

// call runs the chain for p.
func (ib *Intercepted[P, R, D]) call(ctx context.Context, p P, stream bool) (*Reply, error) {
	model, req := ib.F.Call(p)
	return ib.Chain(ctx, &Call{Family: ib.F.Name, Model: model, Stream: stream, Request: req})
}

// Complete answers p (see [Intercepted]).
func (ib *Intercepted[P, R, D]) Complete(ctx context.Context, p P) (R, error) {
	var res R
	r, err := ib.call(ctx, p, false)
	if err != nil {
		return res, err
	}
	if r.Own {
		res = ib.F.Own(p, r)
	} else if res, err = ib.B.Complete(ctx, p); err != nil {
		r.Done(ctx, &Usage{}, err)
		return res, err
	}
	ib.F.Texts(res, func(i int, text *string) { *text = r.Edit(i, *text) })
	u := ib.F.Usage(res)
	u = Usage{Input: int64(Tokens(u.Input)), Output: int64(Tokens(u.Output))}
	if r.Done(ctx, &u, nil) {
		ib.F.SetUsage(res, u)
	}
	return res, nil
}

// Stream streams the reply to p, as Complete answers it: each delta's
// text through the edit hooks, then the done hooks, whose usage ends the
// stream if they change it.
func (ib *Intercepted[P, R, D]) Stream(ctx context.Context, p P) iter.Seq2[D, error] {
	return func(yield func(D, error) bool) {
		var d D
		r, err := ib.call(ctx, p, true)
		if err != nil {
			yield(d, err)
			return
		}
		var src iter.Seq2[D, error]
		if r.Own {
			src = ib.F.Deltas(ctx, fixed[P, R]{ib.F.Own(p, r)}, p)
		} else {
			src = ib.F.Deltas(ctx, ib.B, p)
		}
		var used Usage // the last usage reported
		// One variable for every delta: &d escapes into F.Delta, and a
		// variable of the loop would be allocated for each delta.
		for delta, err := range src {
			d = delta
			if err != nil {
				r.Done(ctx, &used, err)
				yield(d, err)
				return
			}
			i, text, u, reported := ib.F.Delta(&d)
			if text != nil {
				*text = r.Edit(i, *text)
			}
			if reported {
				used = Usage{Input: int64(Tokens(u.Input)), Output: int64(Tokens(u.Output))}
			}
			if !yield(d, nil) {
				r.Done(ctx, &used, context.Cause(ctx))
				return
			}
		}
		if r.Done(ctx, &used, nil) {
			yield(ib.F.UsageDelta(used), nil)
		}
	}
}

// fixed is a backend that answers with one result.
type fixed[P, R any] struct{ res R }

func (f fixed[P, R]) Complete(context.Context, P) (R, error) { return f.res, nil }

// Tokens returns n as a token count of a reply: n between 0 and
// [MaxTokens].
func Tokens(n int64) int { return int(min(max(n, 0), MaxTokens)) }

// refusal is the error of a call that an interceptor refused: the chain
// returns it (endpoint.WithInterceptors), so that the handler releases
// the call's reservation rather than record a request.
type refusal struct{ error }

func (r refusal) Unwrap() error { return r.error }

// Refusal returns err, an interceptor's refusal of a call, marked as
// one; nil for nil.
func Refusal(err error) error {
	if err == nil {
		return nil
	}
	return refusal{err}
}

// Refused reports whether err is, or wraps, an interceptor's refusal.
func Refused(err error) bool {
	if err == nil {
		return false // without the allocation of errors.As's target
	}
	var r refusal
	return errors.As(err, &r)
}

// SettleCall ends the charge ch of a call that ended with err: a call
// that an interceptor refused has its reservation released, and no
// usage recorded (no request in the key's usage); any other is settled
// to u ([Config.Settle]).
func (c *Config) SettleCall(ctx context.Context, ch *Charge, u Usage, err error) {
	if !Refused(err) {
		c.Settle(ctx, ch, u)
		return
	}
	if ch == nil {
		return
	}
	if _, err := ch.rsv.Settle(ctx, 0); err != nil {
		c.Logger.LogAttrs(ctx, slog.LevelError, "releasing a reservation failed", slog.String("error", err.Error()))
	}
}
