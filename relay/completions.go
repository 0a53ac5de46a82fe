package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
)

// Completions returns the relay's backend for the completions handler: it
// forwards each request to POST {base}/completions of the model's
// upstreams, as [Relay.Chat] does for chat completions (the same
// forwarding, streaming, usage and error rules).
func (r *Relay) Completions() completions.StreamingBackend { return completionsBackend{r} }

type completionsBackend struct{ r *Relay }

// completionsReply is the part of an upstream's completion that the relay
// reads.
type completionsReply struct {
	Choices []completionsChoice `json:"choices"`
	Usage   *chat.Usage         `json:"usage"`
	Error   json.RawMessage     `json:"error"`
}

// completionsChoice is one choice of a [completionsReply].
type completionsChoice struct {
	Index        int               `json:"index"`
	Text         string            `json:"text"`
	FinishReason chat.FinishReason `json:"finish_reason"`
}

// decode decodes data into r, which must be zero apart from the
// capacity of its Choices: by hand for the usual shape
// (decodeCompletionsReply), with encoding/json otherwise. For the usual
// shape, it also sets kept to the spans of the members that a
// pass-through keeps, and reports fast.
func (r *completionsReply) decode(data []byte, kept *[]span) (fast bool, err error) {
	choices := r.Choices[:0]
	*kept = (*kept)[:0]
	if decodeCompletionsReply(data, r, kept) {
		return true, nil
	}
	fallbacks.completionsReply.Add()
	clear(choices[:cap(choices)])
	*r = completionsReply{Choices: choices}
	return false, json.Unmarshal(data, r)
}

// Complete sends p's Body (p.Request encoded when it has none) upstream,
// and returns the reply, with the upstream's members
// (completions.Result.SetReply) when it is of the usual shape.
func (b completionsBackend) Complete(ctx context.Context, p *completions.Params) (*completions.Result, error) {
	var reply completionsReply
	raw, u, err := b.r.complete(ctx, p.Request.Model, "/completions", p.Body(), p.Request, reply.decode)
	if err != nil {
		return nil, err
	}
	n := p.Request.Choices()
	out := &completions.Result{Choices: make([]completions.Output, n)}
	completion := 0
	err = byIndex(u, n, reply.Choices, func(c *completionsChoice) int { return c.Index }, func(k int, c *completionsChoice) {
		out.Choices[k] = completions.Output{Text: c.Text, FinishReason: c.FinishReason}
		completion += estimateTokens(c.Text)
	})
	if err != nil {
		return nil, err
	}
	if reply.Usage != nil {
		out.Usage = *reply.Usage
	} else {
		out.Usage = chat.Usage{PromptTokens: completionsPromptTokens(p.Request), CompletionTokens: completion}
	}
	b.r.chatUsage(ctx, u, &out.Usage)
	out.SetReply(raw)
	return out, nil
}

// Stream sends p's Body (p.Request encoded when it has none) upstream,
// and yields the deltas of its stream, each chunk of the usual shape
// attached (completions.Delta.SetChunk); it calls p.Flush before each
// read of the upstream's reply.
func (b completionsBackend) Stream(ctx context.Context, p *completions.Params) iter.Seq2[completions.Delta, error] {
	return func(yield func(completions.Delta, error) bool) {
		body, err := parseRequestBody(p.Body(), p.Request)
		if err == nil {
			err = body.forStream()
		}
		if err != nil {
			yield(completions.Delta{}, err)
			return
		}
		res, u, err := b.r.openStream(ctx, p.Request.Model, postJSON("/completions", body, true), p.Flush)
		if err != nil {
			yield(completions.Delta{}, err)
			return
		}
		defer res.Body.Close()
		cs := &completionsStream{
			u:        u,
			finished: make([]bool, p.Request.Choices()),
			estimate: chat.Usage{PromptTokens: completionsPromptTokens(p.Request)},
		}
		yieldEvents(res.Body, u, cs.event(yield, func(cu *chat.Usage) { b.r.chatUsage(ctx, u, cu) }), yield)
	}
}

// completionsStream turns upstream chunks into Deltas.
type completionsStream struct {
	u        *Upstream
	finished []bool
	estimate chat.Usage
	reported bool
	chunk    completionsReply
	kept     []span // the members of the chunk that a pass-through keeps
	raw      []byte // the pass-through chunk, reused
}

// event returns the function that handles the data of one upstream
// event, as chatStream's does.
func (cs *completionsStream) event(yield func(completions.Delta, error) bool, claim func(*chat.Usage)) func(data []byte) (bool, error) {
	return func(data []byte) (bool, error) {
		choices := cs.chunk.Choices
		clear(choices[:cap(choices)])
		cs.chunk = completionsReply{Choices: choices[:0]}
		fast, err := cs.chunk.decode(data, &cs.kept)
		if err != nil {
			return false, malformed(cs.u, "stream event", err, data)
		}
		if isError(cs.chunk.Error) {
			return false, streamError(cs.u, cs.chunk.Error)
		}
		for _, c := range cs.chunk.Choices {
			if c.Index < 0 || c.Index >= len(cs.finished) {
				return false, malformed(cs.u, "stream event", fmt.Errorf("choice index %d of %d", c.Index, len(cs.finished)), nil)
			}
			if c.Text == "" && c.FinishReason == "" {
				continue
			}
			if cs.finished[c.Index] {
				return false, malformed(cs.u, "stream event", fmt.Errorf("text for choice %d after its finish reason", c.Index), nil)
			}
			cs.finished[c.Index] = c.FinishReason != ""
			d := completions.Delta{Choice: c.Index, Text: c.Text, FinishReason: c.FinishReason}
			if !cs.reported {
				cs.estimate.CompletionTokens += fragmentTokens(c.Text)
				cs.estimate.TotalTokens = cs.estimate.PromptTokens + cs.estimate.CompletionTokens
				d.Usage = &cs.estimate
			}
			if fast && len(cs.chunk.Choices) == 1 {
				// A chunk of the usual shape goes to the client as the
				// upstream wrote it, as chatStream's do.
				cs.raw = appendMembers(cs.raw[:0], data, cs.kept)
				d.SetChunk(cs.raw)
			}
			if !yield(d, nil) {
				return false, nil
			}
		}
		if u := cs.chunk.Usage; u != nil {
			cs.reported = true
			claim(u)
			if !yield(completions.Delta{Usage: u}, nil) {
				return false, nil
			}
		}
		return true, nil
	}
}

// completionsPromptTokens estimates the prompt tokens of a completions request.
func completionsPromptTokens(req *completions.Request) int {
	n := 0
	for _, s := range req.Prompt {
		n += estimateTokens(s)
	}
	return n
}
