package completions

import (
	"context"
	"iter"
	"net/http"

	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/internal/chunks"
	"github.com/gatewaykit/gatewaykit/internal/ids"
	"github.com/gatewaykit/gatewaykit/internal/jsonenc"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/sse"
)

// Deltas returns the backend's stream of p (see [Deltas]), whose
// Params.Flush is flush.
func (h *handler) Deltas(ctx context.Context, p *Params, flush func()) iter.Seq2[Delta, error] {
	p.SetFlush(flush)
	return Deltas(ctx, h.backend, p)
}

// NewStream returns the chunk writer of the stream of p: one chunk per
// backend delta, then the final chunks, the usage chunk if asked for,
// and [DONE].
func (h *handler) NewStream(_ *http.Request, s *sse.Stream, p *Params) pipeline.DeltaWriter[Delta] {
	cw := &chunkWriter{Writer: chunks.Writer{S: s, Cfg: &h.cfg, N: p.Request.Choices(), IncludeUsage: p.Request.IncludeUsage()}}
	cw.init(ids.New(IDPrefix), h.cfg.Now().Unix())
	return cw
}

// chunkWriter turns deltas into chunks: it keeps the state of each choice
// and encodes every chunk into one reused buffer.
type chunkWriter struct {
	chunks.Writer
	finished []bool
	one      [1]bool // backing of finished for one choice
}

func (cw *chunkWriter) init(id string, created int64) {
	cw.Init(appendChunkHead(make([]byte, 0, 256), id, created))
	if cw.N == 1 {
		cw.finished = cw.one[:]
	} else {
		cw.finished = make([]bool, cw.N)
	}
}

// Add writes the chunk of one delta, without flushing it: the
// upstream's chunk when d carries one that still describes it
// (SetChunk), and otherwise the handler's encoding of d.
func (cw *chunkWriter) Add(d *Delta) error {
	raw := d.upstreamChunk()
	if cw.Report(d.Usage) && d.empty() && raw == nil {
		return nil
	}
	if d.Choice < 0 || d.Choice >= cw.N {
		return backendError("delta for choice %d of %d", d.Choice, cw.N)
	}
	if cw.finished[d.Choice] {
		return backendError("delta for choice %d after its finish reason", d.Choice)
	}
	if d.empty() && raw == nil {
		return nil
	}
	cw.finished[d.Choice] = d.FinishReason != ""
	cw.Written.Add(len(d.Text) + len(raw))
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
	for i, done := range cw.finished {
		if done {
			continue
		}
		cw.finished[i] = true
		if err := cw.Send(appendChunkChoice(cw.Prefix(), i, "", endpoint.FinishStop)); err != nil {
			return err
		}
	}
	return cw.Done()
}

// Deltas returns b's reply to p as the handler streams it: b.Stream's
// deltas when b is a [StreamingBackend], and otherwise the [Result] of
// b.Complete in whole pieces (one delta per choice with its whole text
// and finish reason, then the usage), all at hand at once: it calls
// p.Flush before b.Complete, so that the reply goes out in one write at
// its end. It serves backends that wrap others (one that routes by
// model, say) and must stream whatever they wrap.
func Deltas(ctx context.Context, b Backend, p *Params) iter.Seq2[Delta, error] {
	return chunks.Deltas(ctx, b, p, chunks.Whole[*Result, Delta]{
		N: p.Request.Choices(), Flush: p.Flush, Check: checkResult, Choice: choiceDelta, Usage: usageDelta})
}

// choiceDelta appends the delta of choice i of a whole Result: its text
// and finish reason.
func choiceDelta(ds []Delta, res *Result, i int) []Delta {
	o := &res.Choices[i]
	return append(ds, Delta{Choice: i, Text: o.Text, FinishReason: finishReason(o)})
}

// usageDelta is the delta of a whole Result's usage.
func usageDelta(res *Result) Delta { return Delta{Usage: &res.Usage} }

// backendError is the error for a backend that broke the streaming
// contract: a 500 whose text is only logged.
func backendError(format string, args ...any) error {
	return chunks.BackendError("completions", format, args...)
}
