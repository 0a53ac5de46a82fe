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
