package demo

import (
	"context"
	"iter"

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
	r, err := b.t.whole(ctx, completionsReply(p.Request))
	if err != nil {
		return nil, err
	}
	res := &completions.Result{Choices: make([]completions.Output, len(r.plans)), Usage: r.usage()}
	for i := range r.plans {
		res.Choices[i] = completions.Output{Text: r.plans[i].content, FinishReason: r.plans[i].finish}
	}
	return res, nil
}

// Stream implements completions.StreamingBackend. The choices are
// streamed in turns, one chunk of each in order, then the usage. It
// calls p.Flush as the chat backend's Stream does: before each pause of
// [WithChunkDelay], or once, first, without a chunk delay.
func (b *CompletionsBackend) Stream(ctx context.Context, p *completions.Params) iter.Seq2[completions.Delta, error] {
	return streamPlans(ctx, b.t, completionsReply(p.Request), p.Flush, func(d chat.Delta) completions.Delta {
		return completions.Delta{Choice: d.Choice, Text: d.Content, FinishReason: d.FinishReason, Usage: d.Usage}
	})
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
