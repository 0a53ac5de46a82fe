// Package passthrough is the path by which a relay hands the handlers of
// packages chat and completions an upstream's reply as the upstream
// encoded it, so that the members the gateway does not model
// (system_fingerprint, logprobs, …) still reach the client, and the
// request body as the client sent it, so that every member reaches the
// upstream. Only package relay (and the gateway's routers, which forward
// to it) implement its interfaces; a Backend, as embedders write it,
// describes content only.
//
// The handler finds the interfaces at run time with a type assertion, as
// net/http finds http.Flusher; a backend without them is asked through
// its Backend methods. A [Router] (the gateway's, which sends some models
// to a relay and others to another backend) is looked through: the
// backend it picks for the request is the one asked.
//
// # Pacing
//
// The stream of a [Reader] (every backend of package relay) runs in the
// handler's goroutine, and tells the handler when it is about to wait:
// before each read of its upstream's reply it calls the function of
// [WaitFunc], and the handler flushes what it has written. So the events
// of one upstream read leave in one write to the client, as a
// byte-copying relay's would, and none waits for the next read. A stream
// of any other backend runs a few deltas ahead in a goroutine of its own
// (see internal/pipeline.WriteDeltas).
package passthrough

import (
	"context"
	"iter"
)

// A Delta is a backend's delta D with, when Raw is set, the chunk that
// carries it as the upstream encoded it: a JSON object of the chunk's
// members other than id, object, created and model (which the handler
// writes first, with its own values) and usage. The relay vouches for
// Raw (valid JSON, one choice, the chunk rules of the endpoint's
// package documentation), and Delta must still describe it: the handler
// keeps its account of each choice from Delta, and encodes Raw's members
// as they are. Raw may be reused once the iterator's yield returns.
type Delta[D any] struct {
	Delta D
	Raw   []byte
}

// A Streamer streams a reply with the upstream's chunks. body is the
// request body as the client sent it; p was decoded from it.
type Streamer[P, D any] interface {
	StreamRaw(ctx context.Context, p P, body []byte) iter.Seq2[Delta[D], error]
}

// A Completer completes a request with the upstream's reply. body is the
// request body as the client sent it; p was decoded from it. raw, when
// not nil, is a JSON object of the reply's members other than id,
// object, created, model and usage, which the handler writes itself;
// the result must still describe it (its choices are counted, its usage
// charged).
type Completer[P, R any] interface {
	CompleteRaw(ctx context.Context, p P, body []byte) (res R, raw []byte, err error)
}

// A Router is a backend of type B that sends each request to one of
// several backends: the one that Pick returns for p.
type Router[P, B any] interface {
	Pick(p P) B
}

// Pick returns the backend that answers p: the one that b picks if b is
// a [Router], b otherwise.
func Pick[B, P any](b B, p P) B {
	if r, ok := any(b).(Router[P, B]); ok {
		return r.Pick(p)
	}
	return b
}

// A Reader is a backend whose streams read an upstream's reply, and call
// the function of [WaitFunc] in their context, if any, before each read:
// they may run in the handler's goroutine, which flushes then.
type Reader interface {
	ReadsUpstream()
}

// Stream returns the reply to p of the backend that answers it (see
// [Pick]): with the upstream's chunks when it is a [Streamer], and
// otherwise deltas(ctx, b, p) without them.
func Stream[B, P, D any](ctx context.Context, b B, p P, body []byte, deltas func(context.Context, B, P) iter.Seq2[D, error]) iter.Seq2[Delta[D], error] {
	b = Pick(b, p)
	if s, ok := any(b).(Streamer[P, D]); ok {
		return s.StreamRaw(ctx, p, body)
	}
	return func(yield func(Delta[D], error) bool) {
		for d, err := range deltas(ctx, b, p) {
			if !yield(Delta[D]{Delta: d}, err) {
				return
			}
		}
	}
}

// Complete returns the reply to p of the backend that answers it (see
// [Pick]), with the upstream's members when it is a [Completer], and
// otherwise its complete(ctx, p) without them.
func Complete[B, P, R any](ctx context.Context, b B, p P, body []byte, complete func(B, context.Context, P) (R, error)) (R, []byte, error) {
	b = Pick(b, p)
	if c, ok := any(b).(Completer[P, R]); ok {
		return c.CompleteRaw(ctx, p, body)
	}
	res, err := complete(b, ctx, p)
	return res, nil, err
}

// waitKey is the context key of the function of [WithWait].
type waitKey struct{}

// WithWait returns a copy of ctx that carries wait, the handler's flush,
// for a [Streamer]'s stream that runs in the handler's goroutine (see
// [WaitFunc]).
func WithWait(ctx context.Context, wait func()) context.Context {
	return context.WithValue(ctx, waitKey{}, wait)
}

// WaitFunc returns the function of [WithWait] in ctx, or nil if there is
// none. A [Streamer]'s stream calls it before each wait for its
// upstream's next bytes, so that the handler sends what it has written.
func WaitFunc(ctx context.Context) func() {
	f, _ := ctx.Value(waitKey{}).(func())
	return f
}

// Deltas returns the content of a stream with chunks: its deltas
// without them.
func Deltas[D any](seq iter.Seq2[Delta[D], error]) iter.Seq2[D, error] {
	return func(yield func(D, error) bool) {
		for d, err := range seq {
			if !yield(d.Delta, err) {
				return
			}
		}
	}
}
