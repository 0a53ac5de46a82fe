package demo

import (
	"context"
	"iter"
	"time"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
)

// CompletionsBackend is the legacy-completions side of a [TextBackend]: a
// completions.StreamingBackend. Get one with [TextBackend.Completions].
type CompletionsBackend struct {
	t *TextBackend
}

var _ completions.StreamingBackend = (*CompletionsBackend)(nil)

// Completions returns the legacy-completions backend of t.
func (t *TextBackend) Completions() *CompletionsBackend { return &CompletionsBackend{t: t} }

// Complete implements completions.Backend.
func (b *CompletionsBackend) Complete(ctx context.Context, p *completions.Params) (*completions.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := completionsReply(p.Request)
	if r.in.fail {
		return nil, errFail
	}
	res := &completions.Result{Choices: make([]completions.Output, len(r.plans)), Usage: r.usage()}
	for i := range r.plans {
		res.Choices[i] = completions.Output{Text: r.plans[i].content, FinishReason: r.plans[i].finish}
	}
	return res, nil
}

// Stream implements completions.StreamingBackend. The choices are
// streamed in turns, one chunk of each in order, then the usage.
// Without a chunk delay all of them are at hand, so the handler flushes
// the reply once instead of once per chunk.
func (b *CompletionsBackend) Stream(ctx context.Context, p *completions.Params) iter.Seq2[completions.Delta, error] {
	return func(yield func(completions.Delta, error) bool) {
		r := completionsReply(p.Request)
		var t *time.Timer
		k := b.t.cfg.tokensPerChunk
		var one [1]cursor
		cursors := one[:]
		if len(r.plans) > 1 {
			cursors = make([]cursor, len(r.plans))
		}
		for i := range r.plans {
			cursors[i].p = &r.plans[i]
		}
		for open := len(cursors); open > 0; {
			open = 0
			for i := range cursors {
				d, ok := cursors[i].next(i, k)
				if !ok {
					continue
				}
				open++
				if err := wait(ctx, &t, b.t.cfg.delay); err != nil {
					yield(completions.Delta{}, err)
					return
				}
				if !yield(completions.Delta{Choice: i, Text: d.Content, FinishReason: d.FinishReason}, nil) {
					return
				}
				if r.in.fail {
					yield(completions.Delta{}, errFail)
					return
				}
			}
		}
		u := r.usage()
		yield(completions.Delta{Usage: &u}, nil)
	}
}

// completionsReply works out the reply to a legacy completions request:
// n choices for each prompt, each echoing its prompt. r.in holds the
// directives found in any prompt.
func completionsReply(req *completions.Request) reply {
	n := req.PerPrompt()
	r := reply{plans: make([]plan, 0, req.Choices())}
	l := limits{maxTokens: 0, stop: req.Stop}
	if req.MaxTokens != nil {
		l.maxTokens = *req.MaxTokens
	}
	for _, prompt := range req.Prompt {
		r.prompt += CountTokens(prompt)
		in := newInput(prompt, nil, false)
		r.in.fail = r.in.fail || in.fail
		for i := range n {
			pl := plan{}
			if in.filter {
				pl.finish = chat.FinishContentFilter
			} else {
				pl.content = replyText(&in, i, n)
				pl.finishText(l)
			}
			r.plans = append(r.plans, pl)
		}
	}
	return r
}
