package chat

import (
	"context"
	"iter"
	"net/http"

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
	cw.init(ids.New(IDPrefix), h.cfg.Now().Unix(), p.Request.Model)
	return cw
}

// chunkWriter turns deltas into chunks: it keeps the state of each choice
// and encodes every chunk into one reused buffer.
type chunkWriter struct {
	chunks.Writer
	calls   []ToolCallChunk // reused
	choices []choiceState
	one     [1]choiceState // backing of choices for n = 1
}

type choiceState struct {
	started  bool
	finished bool
	calls    int // tool calls begun
}

func (cw *chunkWriter) init(id string, created int64, model string) {
	cw.Init(appendChunkHead(make([]byte, 0, 512), id, created, model))
	if cw.N == 1 {
		cw.choices = cw.one[:]
	} else {
		cw.choices = make([]choiceState, cw.N)
	}
}

// Add writes the chunks of one delta, without flushing them: the
// upstream's chunk when d carries one that still describes it
// (SetChunk), and otherwise the handler's encoding of d.
func (cw *chunkWriter) Add(d *Delta) error {
	raw := d.upstreamChunk()
	if cw.Report(d.Usage) && d.empty() && raw == nil {
		return nil
	}
	if d.Choice < 0 || d.Choice >= cw.N {
		return backendError("delta for choice %d of a request with n=%d", d.Choice, cw.N)
	}
	st := &cw.choices[d.Choice]
	if st.finished {
		return backendError("delta for choice %d after its finish reason", d.Choice)
	}
	if d.empty() && raw == nil && st.started {
		return nil
	}
	calls := cw.calls[:0]
	for _, tc := range d.ToolCalls {
		switch {
		case tc.Index == st.calls:
			if tc.Name == "" {
				return backendError("tool call %d of choice %d begins without a name", tc.Index, d.Choice)
			}
			id := tc.ID
			if id == "" {
				id = ids.New("call_")
			}
			st.calls++
			calls = append(calls, ToolCallChunk{Index: tc.Index, ID: id, Type: "function",
				Function: FunctionCallChunk{Name: tc.Name, Arguments: tc.Arguments}})
		case tc.Index >= 0 && tc.Index < st.calls:
			calls = append(calls, ToolCallChunk{Index: tc.Index, Function: FunctionCallChunk{Arguments: tc.Arguments}})
		default:
			return backendError("tool call index %d of choice %d is not the next one (%d)", tc.Index, d.Choice, st.calls)
		}
	}
	cw.calls = calls
	cw.Written.Add(len(d.Content) + len(d.Reasoning) + len(raw))
	for _, tc := range d.ToolCalls {
		cw.Written.Add(len(tc.Name) + len(tc.Arguments))
	}
	role := !st.started
	st.started = true
	if raw != nil {
		if !jsonenc.IsObject(raw) {
			return backendError("raw chunk that is not a JSON object: %.40q", raw)
		}
		st.finished = d.FinishReason != ""
		return cw.SendRaw(raw)
	}
	if role || d.Content != "" || d.Reasoning != "" || len(calls) > 0 {
		if err := cw.Send(appendChunkChoice(cw.Prefix(), d.Choice, role, d.Content, d.Reasoning, calls, "")); err != nil {
			return err
		}
	}
	if d.FinishReason == "" {
		return nil
	}
	st.finished = true
	return cw.Send(appendChunkChoice(cw.Prefix(), d.Choice, false, "", "", nil, d.FinishReason))
}

// Finish ends the choices that are still open, sends the usage chunk if
// asked, and [DONE].
func (cw *chunkWriter) Finish() error {
	for i := range cw.choices {
		st := &cw.choices[i]
		if st.finished {
			continue
		}
		reason := FinishStop
		if st.calls > 0 {
			reason = FinishToolCalls
		}
		if !st.started {
			st.started = true
			if err := cw.Send(appendChunkChoice(cw.Prefix(), i, true, "", "", nil, "")); err != nil {
				return err
			}
		}
		st.finished = true
		if err := cw.Send(appendChunkChoice(cw.Prefix(), i, false, "", "", nil, reason)); err != nil {
			return err
		}
	}
	return cw.Done()
}

// Deltas returns b's reply to p as the handler streams it: b.Stream's
// deltas when b is a [StreamingBackend], and otherwise the [Result] of
// b.Complete in whole pieces (per choice, its reasoning, its content and
// its tool calls, each whole, the last with the finish reason; then the
// usage), all at hand at once: it calls p.Flush before b.Complete, so
// that the reply goes out in one write at its end. It serves backends
// that wrap others (one that routes by model, say) and must stream
// whatever they wrap.
func Deltas(ctx context.Context, b Backend, p *Params) iter.Seq2[Delta, error] {
	return chunks.Deltas(ctx, b, p, chunks.Whole[*Result, Delta]{
		N: p.Request.Choices(), Flush: p.Flush, Check: checkResult, Choice: choiceDeltas, Usage: usageDelta})
}

// choiceDeltas appends the deltas of choice i of a whole Result: its
// reasoning, its content and its tool calls, the last with the finish
// reason.
func choiceDeltas(ds []Delta, res *Result, i int) []Delta {
	o := &res.Choices[i]
	n := len(ds)
	if o.Reasoning != "" {
		ds = append(ds, Delta{Choice: i, Reasoning: o.Reasoning})
	}
	if o.Content != "" {
		ds = append(ds, Delta{Choice: i, Content: o.Content})
	}
	for j, tc := range o.ToolCalls {
		ds = append(ds, Delta{Choice: i, ToolCalls: []ToolCallDelta{{Index: j, ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}}})
	}
	if len(ds) == n {
		ds = append(ds, Delta{Choice: i})
	}
	ds[len(ds)-1].FinishReason = finishReason(o)
	return ds
}

// usageDelta is the delta of a whole Result's usage.
func usageDelta(res *Result) Delta { return Delta{Usage: &res.Usage} }

// finishReason is o's finish reason, or its default.
func finishReason(o *Output) FinishReason {
	switch {
	case o.FinishReason != "":
		return o.FinishReason
	case len(o.ToolCalls) > 0:
		return FinishToolCalls
	}
	return FinishStop
}

// backendError is the error for a backend that broke the streaming
// contract: a 500 whose text is only logged.
func backendError(format string, args ...any) error {
	return chunks.BackendError("chat", format, args...)
}
