// Package chunks holds what the handlers of packages chat and completions
// share beyond the steps of internal/pipeline: their whole replies
// ([Reply]); the deltas of a backend's reply, streamed or
// whole ([Deltas]); the state of a chunk writer that does not depend on
// the endpoint, and the end of its stream, with the usage chunk and
// [DONE] ([Writer]); the usage object of their replies ([AppendUsage]);
// and the error of a backend that breaks its contract ([BackendError]).
// What is an endpoint's own (chat's roles, reasoning and tool calls, the
// text of a completion, the encoding of their choices) stays in its
// package.
package chunks

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"strconv"
	"sync"

	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/jsonenc"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/sse"
)

// A Completer is a backend that gives its whole reply R to params P: the
// Complete of a chat or completions Backend.
type Completer[P, R any] interface {
	Complete(ctx context.Context, p P) (R, error)
}

// A Streamer is a backend that streams its reply to params P as deltas
// D: the Stream of a chat or completions StreamingBackend.
type Streamer[P, D any] interface {
	Stream(ctx context.Context, p P) iter.Seq2[D, error]
}

// Whole says how the whole reply R of a backend that does not stream
// goes out as deltas D (see [Deltas]).
type Whole[R, D any] struct {
	// N is the number of choices asked for.
	N int
	// Flush is the Flush of the Params: the reply is all at hand.
	Flush func()
	// Check rejects a reply that cannot be sent (one without N choices,
	// among others).
	Check func(res R, n int) error
	// Choice appends to ds the deltas of choice i of res, in order, the
	// last with the choice's finish reason.
	Choice func(ds []D, res R, i int) []D
	// Usage returns the delta that reports the usage of res.
	Usage func(res R) D
}

// Deltas returns b's reply to p as a handler streams it: b.Stream's
// deltas when b is a [Streamer], and otherwise the reply of b.Complete
// in whole pieces: once w.Check accepts it, the deltas of each choice
// (w.Choice), then its usage. All are at hand at once: w.Flush is called
// first, so that they go out in one write at the end. A failure of
// Complete or of w.Check is yielded alone, with a zero delta.
func Deltas[P, R, D any](ctx context.Context, b Completer[P, R], p P, w Whole[R, D]) iter.Seq2[D, error] {
	if sb, ok := b.(Streamer[P, D]); ok {
		return sb.Stream(ctx, p)
	}
	return func(yield func(D, error) bool) {
		w.Flush()
		res, err := b.Complete(ctx, p)
		if err == nil {
			err = w.Check(res, w.N)
		}
		if err != nil {
			var zero D
			yield(zero, err)
			return
		}
		var ds []D
		for i := range w.N {
			ds = w.Choice(ds[:0], res, i)
			for _, d := range ds {
				if !yield(d, nil) {
					return
				}
			}
		}
		yield(w.Usage(res), nil)
	}
}

// BackendError is the error for a backend of package pkg that broke the
// streaming contract: a 500 whose text, "<pkg>: backend sent a " and
// the formatted rest, is only logged.
func BackendError(pkg, format string, args ...any) error {
	return apierrors.Internal(fmt.Errorf(pkg+": backend sent a "+format, args...))
}

// A Writer is the part of a chunk writer (a pipeline.DeltaWriter) of
// chat or completions that is the same in both: the stream, the buffer
// of its chunks, the number of choices, the usage reported and the
// output written. The writer of each package embeds it, and adds the
// state of its choices.
type Writer struct {
	pipeline.ChunkBuffer
	S            *sse.Stream
	Cfg          *pipeline.Config
	N            int  // choices asked for
	IncludeUsage bool // stream_options.include_usage
	Usage        endpoint.Usage
	Written      pipeline.Written // output sent, for the usage of a backend that reports none
}

// Init makes head, the open JSON object of the chunks' first members, the
// start of every chunk written to w.S.
func (w *Writer) Init(head []byte) { w.ChunkBuffer.Init(w.S, head) }

// Report keeps u, if not nil, as the usage of the reply (the last one
// reported counts), and reports whether it was set.
func (w *Writer) Report(u *endpoint.Usage) bool {
	if u == nil {
		return false
	}
	w.Usage = u.Normalized()
	w.Written.Reported()
	return true
}

// Done ends a stream whose choices are all finished: the usage chunk if
// the client asked for it, then [DONE].
func (w *Writer) Done() error {
	w.Usage = w.Usage.Normalized()
	if w.IncludeUsage {
		if err := w.Send(AppendUsageChunk(w.Prefix(), &w.Usage)); err != nil {
			return err
		}
	}
	return w.S.Done()
}

// End sends err, if any, as the stream's error event.
func (w *Writer) End(r *http.Request, err error) { w.Cfg.EndWithError(r, w.S, err) }

// Used returns the total of the last usage reported, or, if the backend
// never reported one, the estimate of the prompt and of the output
// written.
func (w *Writer) Used(prompt int64) pipeline.Usage {
	w.Usage = w.Usage.Normalized()
	return w.Written.Usage(Charged(&w.Usage), prompt)
}

// Charged returns the usage that u charges (u as it is: normalize it
// first), the cached, cache-write and reasoning tokens apart.
func Charged(u *endpoint.Usage) pipeline.Usage {
	return pipeline.Usage{Input: int64(u.PromptTokens), Output: int64(u.CompletionTokens),
		Cached: int64(u.Cached()), CacheWrite: int64(u.CacheWrite()), Reasoning: int64(u.Reasoning())}
}

// AppendUsage appends the usage object u.
func AppendUsage(b []byte, u *endpoint.Usage) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(u.PromptTokens), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(u.CompletionTokens), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(u.TotalTokens), 10)
	if d := u.PromptTokensDetails; d != nil {
		b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(d.CachedTokens), 10)
		b = appendCount(b, `,"audio_tokens":`, d.AudioTokens)
		b = appendCount(b, `,"cache_write_tokens":`, d.CacheWriteTokens)
		b = append(b, '}')
	}
	if d := u.CompletionTokensDetails; d != nil {
		b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
		b = strconv.AppendInt(b, int64(d.ReasoningTokens), 10)
		b = appendCount(b, `,"audio_tokens":`, d.AudioTokens)
		b = appendCount(b, `,"accepted_prediction_tokens":`, d.AcceptedPredictionTokens)
		b = appendCount(b, `,"rejected_prediction_tokens":`, d.RejectedPredictionTokens)
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendCount appends key and n, unless n is 0 (the omitempty details).
func appendCount(b []byte, key string, n int) []byte {
	if n == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), int64(n), 10)
}

// AppendUsageChunk appends the final usage chunk after a chunk's prefix
// (pipeline.ChunkBuffer's Prefix): empty choices and the usage.
func AppendUsageChunk(b []byte, u *endpoint.Usage) []byte {
	b = append(b, `],"usage":`...)
	b = AppendUsage(b, u)
	return append(b, '}')
}

// Reply writes the JSON reply of a whole result of package pkg's
// backend, whose usage is u (the handler sets its TotalTokens) and whose
// raw members, if any, must be a JSON object (an upstream's reply, set
// with the Result's SetReply): appendReply appends it to a buffer. It returns
// the usage to charge.
func Reply(w http.ResponseWriter, pkg string, raw []byte, u endpoint.Usage, appendReply func(b []byte, u *endpoint.Usage) []byte) (pipeline.Usage, error) {
	u = u.Normalized()
	if raw != nil && !jsonenc.IsObject(raw) {
		return pipeline.Usage{}, BackendError(pkg, "raw reply that is not a JSON object: %.40q", raw)
	}
	buf := replyBuffers.Get().(*[]byte)
	reply := appendReply((*buf)[:0], &u)
	httpjson.WriteRaw(w, http.StatusOK, reply)
	if cap(reply) <= maxPooledReply {
		*buf = reply
		replyBuffers.Put(buf)
	}
	return Charged(&u), nil
}

// replyBuffers holds the buffers that non-streaming replies are encoded
// into; a ResponseWriter does not keep the bytes given to Write. Buffers
// that grew over maxPooledReply are left to the garbage collector, so
// that one long reply does not pin its memory.
var replyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

const maxPooledReply = 64 << 10
