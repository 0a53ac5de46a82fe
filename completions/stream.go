package completions

import (
	"context"
	"fmt"
	"iter"
	"net/http"

	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/ids"
	"github.com/gatewaykit/gatewaykit/internal/jsonenc"
	"github.com/gatewaykit/gatewaykit/internal/passthrough"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/sse"
)

// Pace says how the backend's stream of p runs (see pipeline.PaceOf).
func (h *handler) Pace(p *Params) pipeline.Pace {
	return pipeline.PaceOf[StreamingBackend](h.backend, p)
}

// Deltas returns the backend's stream of p (see [Deltas]), with the
// upstream's chunks when the backend is a relay's.
func (h *handler) Deltas(ctx context.Context, p *Params) iter.Seq2[passthrough.Delta[Delta], error] {
	return passthrough.Stream(ctx, h.backend, p, p.body, Deltas)
}

// NewStream returns the chunk writer of the stream of p: one chunk per
// backend delta, then the final chunks, the usage chunk if asked for,
// and [DONE].
func (h *handler) NewStream(_ *http.Request, s *sse.Stream, p *Params) pipeline.DeltaWriter[passthrough.Delta[Delta]] {
	cw := &chunkWriter{s: s, cfg: &h.cfg, n: p.Request.Choices(), includeUsage: p.Request.IncludeUsage()}
	cw.init(ids.New(IDPrefix), h.cfg.Now().Unix())
	return cw
}

// chunkWriter turns deltas into chunks: it keeps the state of each choice
// and encodes every chunk into one reused buffer.
type chunkWriter struct {
	s            *sse.Stream
	cfg          *pipeline.Config
	n            int
	includeUsage bool
	pipeline.ChunkBuffer
	finished []bool
	one      [1]bool // backing of finished for one choice
	usage    endpoint.Usage
	written  pipeline.Written // output sent, for the usage of a backend that reports none
	ring     pipeline.DeltaRing[detached]
}

// detached is what Detach copies of a delta.
type detached struct {
	usage endpoint.Usage
	raw   []byte
}

// Detach copies what d points to, which the backend may reuse.
func (cw *chunkWriter) Detach(d *passthrough.Delta[Delta]) {
	if d.Delta.Usage == nil && d.Raw == nil {
		return
	}
	sl := cw.ring.Next()
	if d.Delta.Usage != nil {
		sl.usage = *d.Delta.Usage
		d.Delta.Usage = &sl.usage
	}
	if d.Raw != nil {
		d.Raw = pipeline.DetachRaw(&sl.raw, d.Raw)
	}
}

func (cw *chunkWriter) init(id string, created int64) {
	cw.Init(cw.s, appendChunkHead(make([]byte, 0, 256), id, created))
	if cw.n == 1 {
		cw.finished = cw.one[:]
	} else {
		cw.finished = make([]bool, cw.n)
	}
}

// End sends err, if any, as the stream's error event.
func (cw *chunkWriter) End(r *http.Request, err error) { cw.cfg.EndWithError(r, cw.s, err) }

// Used returns the total of the last usage reported, or, if the backend
// never reported one, the estimate of the prompt and of the output
// written.
func (cw *chunkWriter) Used(prompt int64) pipeline.Usage {
	cw.usage.TotalTokens = cw.usage.PromptTokens + cw.usage.CompletionTokens
	return cw.written.Usage(cw.usage.PromptTokens, cw.usage.CompletionTokens, prompt)
}

// Add writes the chunks of one delta, without flushing them.
func (cw *chunkWriter) Add(pd *passthrough.Delta[Delta]) error {
	d, raw := &pd.Delta, pd.Raw
	if d.Usage != nil {
		cw.usage = *d.Usage
		cw.written.Reported()
		if d.empty() && raw == nil {
			return nil
		}
	}
	if d.Choice < 0 || d.Choice >= cw.n {
		return backendError("delta for choice %d of %d", d.Choice, cw.n)
	}
	if cw.finished[d.Choice] {
		return backendError("delta for choice %d after its finish reason", d.Choice)
	}
	if d.empty() && raw == nil {
		return nil
	}
	cw.finished[d.Choice] = d.FinishReason != ""
	cw.written.Add(len(d.Text) + len(raw))
	if raw != nil {
		if !jsonenc.IsObject(raw) {
			return backendError("raw chunk that is not a JSON object: %.40q", raw)
		}
		return cw.SendRaw(raw)
	}
	return cw.Send(appendChunkChoice(cw.Prefix(), d.Choice, d.Text, d.FinishReason))
}

// Finish ends the choices that are still open, sends the usage chunk if
// asked, and [DONE].
func (cw *chunkWriter) Finish() error {
	cw.usage.TotalTokens = cw.usage.PromptTokens + cw.usage.CompletionTokens
	for i, done := range cw.finished {
		if done {
			continue
		}
		cw.finished[i] = true
		if err := cw.Send(appendChunkChoice(cw.Prefix(), i, "", endpoint.FinishStop)); err != nil {
			return err
		}
	}
	if cw.includeUsage {
		if err := cw.Send(appendUsageChunk(cw.Prefix(), &cw.usage)); err != nil {
			return err
		}
	}
	return cw.s.Done()
}

// backendError is the error for a backend that broke the streaming
// contract: a 500 whose text is only logged.
func backendError(format string, args ...any) error {
	return apierrors.Internal(fmt.Errorf("completions: backend sent a "+format, args...))
}

// Deltas returns b's reply to p as the handler streams it: b.Stream's
// deltas when b is a [StreamingBackend], and otherwise the [Result] of
// b.Complete in whole pieces. It serves backends that wrap others (one
// that routes by model, say) and must stream whatever they wrap.
func Deltas(ctx context.Context, b Backend, p *Params) iter.Seq2[Delta, error] {
	if sb, ok := b.(StreamingBackend); ok {
		return sb.Stream(ctx, p)
	}
	return resultDeltas(ctx, b, p)
}

// resultDeltas streams the Result of a backend that does not stream: one
// delta per choice with its whole text and finish reason, then the usage.
// All are at hand at once: the reply goes out in one flush.
func resultDeltas(ctx context.Context, b Backend, p *Params) iter.Seq2[Delta, error] {
	return func(yield func(Delta, error) bool) {
		res, err := b.Complete(ctx, p)
		if err == nil {
			err = checkResult(res, p.Request.Choices())
		}
		if err != nil {
			yield(Delta{}, err)
			return
		}
		for i := range res.Choices {
			o := &res.Choices[i]
			if !yield(Delta{Choice: i, Text: o.Text, FinishReason: finishReason(o)}, nil) {
				return
			}
		}
		yield(Delta{Usage: &res.Usage}, nil)
	}
}
