package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"strings"
	"unsafe"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/gemini"
	"github.com/gatewaykit/gatewaykit/sse"
)

// streamGemini is the chat stream of a model that a Gemini-format
// upstream serves: each upstream in failover order gets the request in
// its own format, and the stream is read in the format of the one that
// answered (:streamGenerateContent?alt=sse: one data: line per event,
// each a whole GenerateContentResponse, and no [DONE]).
func (b chatBackend) streamGemini(ctx context.Context, p *chat.Params) iter.Seq2[chat.Delta, error] {
	return func(yield func(chat.Delta, error) bool) {
		gbody, err := geminiChatBody(p)
		if err != nil {
			yield(chat.Delta{}, err)
			return
		}
		obody, err := parseRequestBody(p.Body(), p.Request)
		if err == nil {
			err = obody.forStream()
		}
		if err != nil {
			yield(chat.Delta{}, err)
			return
		}
		res, u, err := b.r.openStream(ctx, p.Request.Model, byAPI(geminiBuild(gbody, true), postJSON("/chat/completions", obody, true)), p.Flush)
		if err != nil {
			yield(chat.Delta{}, err)
			return
		}
		defer res.Body.Close()
		if u.API != APIGemini {
			b.readChatStream(ctx, p, res, u, yield)
			return
		}
		gs := newGeminiReader(p, u)
		if err := gs.read(res.Body, func(d chat.Delta) bool {
			b.r.chatUsage(ctx, u, d.Usage)
			return yield(d, nil)
		}); err != nil {
			yield(chat.Delta{}, err)
		}
	}
}

// geminiReader turns the events of a Gemini-format stream into chat
// deltas: per candidate of each event, one delta with its text, its
// thoughts (as reasoning), its function calls (each whole, as a tool call
// of the next index) and its finish reason; and a usage-only delta for
// each usageMetadata (the last one counts). Until the upstream reports
// its usage, each delta carries a running estimate, as the OpenAI-format
// stream's do. The stream must end (the body's end, there is no [DONE])
// after every candidate that began has its finishReason, else it is a
// 502; an event that is Google's error object is a 502 too.
type geminiReader struct {
	u        *Upstream
	cands    []geminiCand
	estimate chat.Usage
	reported bool
	usage    chat.Usage
	calls    []chat.ToolCallDelta
}

type geminiCand struct {
	started, finished bool
	calls             int
}

// geminiEvent is one event of a Gemini-format stream.
type geminiEvent struct {
	gemini.Response
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	Error json.RawMessage `json:"error"`
}

func newGeminiReader(p *chat.Params, u *Upstream) *geminiReader {
	return &geminiReader{u: u, cands: make([]geminiCand, p.Request.Choices()),
		estimate: chat.Usage{PromptTokens: chatPromptTokens(p.Request)}}
}

// read reads the stream body and hands each delta to yield, until the
// body ends or yield returns false.
func (gs *geminiReader) read(body io.Reader, yield func(chat.Delta) bool) error {
	for ev, err := range sse.Read(body) {
		if err != nil {
			return streamReadError(err, gs.u)
		}
		if ev.Type == "error" {
			return streamError(gs.u, json.RawMessage(ev.Data))
		}
		if ev.Data == "" {
			continue
		}
		// A view of the immutable data, as in readEvents: a copy per
		// event saved (BENCHMARKS.md, JSON codecs).
		more, err := gs.event(unsafe.Slice(unsafe.StringData(ev.Data), len(ev.Data)), yield)
		if err != nil || !more {
			return err
		}
	}
	began := false
	for i := range gs.cands {
		c := &gs.cands[i]
		if c.started && !c.finished {
			return malformed(gs.u, "stream", fmt.Errorf("candidate %d: %w", i, errGeminiEnded), nil)
		}
		began = began || c.started
	}
	if !began {
		return malformed(gs.u, "stream", errGeminiEnded, nil)
	}
	return nil
}

// event handles the data of one event.
func (gs *geminiReader) event(data []byte, yield func(chat.Delta) bool) (bool, error) {
	var ev geminiEvent
	if !decodeGeminiEvent(data, &ev) {
		fallbacks.geminiEvent.Add()
		ev = geminiEvent{}
		if err := json.Unmarshal(data, &ev); err != nil {
			return false, malformed(gs.u, "stream event", err, data)
		}
	}
	if isError(ev.Error) {
		return false, streamError(gs.u, ev.Error)
	}
	if len(ev.Candidates) == 0 && ev.PromptFeedback != nil && ev.PromptFeedback.BlockReason != "" {
		// The prompt was blocked: every choice ends, filtered.
		for i := range gs.cands {
			c := &gs.cands[i]
			if c.finished {
				continue
			}
			c.started, c.finished = true, true
			if !yield(chat.Delta{Choice: i, FinishReason: chat.FinishContentFilter}) {
				return false, nil
			}
		}
	}
	for k := range ev.Candidates {
		d, ok, err := gs.delta(&ev.Candidates[k], data)
		if err != nil {
			return false, err
		}
		if ok && !yield(d) {
			return false, nil
		}
	}
	if m := ev.UsageMetadata; m != nil {
		gs.reported = true
		gs.usage = geminiUsage(m)
		if !yield(chat.Delta{Usage: &gs.usage}) {
			return false, nil
		}
	}
	return true, nil
}

// delta makes the delta of one candidate of an event; !ok when it
// carries nothing.
func (gs *geminiReader) delta(c *gemini.Candidate, data []byte) (chat.Delta, bool, error) {
	if c.Index < 0 || c.Index >= len(gs.cands) {
		return chat.Delta{}, false, malformed(gs.u, "stream event", fmt.Errorf("candidate index %d of %d", c.Index, len(gs.cands)), data)
	}
	st := &gs.cands[c.Index]
	d := chat.Delta{Choice: c.Index}
	var text, thought strings.Builder
	gs.calls = gs.calls[:0]
	tokens := 0
	if c.Content != nil {
		for _, part := range c.Content.Parts {
			switch {
			case part.FunctionCall != nil:
				fc := part.FunctionCall
				if fc.Name == "" {
					return chat.Delta{}, false, malformed(gs.u, "stream event", fmt.Errorf("a functionCall without a name"), data)
				}
				args := geminiArgs(fc.Args)
				gs.calls = append(gs.calls, chat.ToolCallDelta{Index: st.calls, ID: signedID(fc.ID, part.ThoughtSignature), Name: fc.Name, Arguments: args})
				st.calls++
				tokens += fragmentTokens(fc.Name) + fragmentTokens(args)
			case part.Thought:
				thought.WriteString(part.Text)
			default:
				text.WriteString(part.Text)
			}
		}
	}
	d.Content, d.Reasoning = text.String(), thought.String()
	if len(gs.calls) > 0 {
		d.ToolCalls = gs.calls
	}
	if d.Content == "" && d.Reasoning == "" && len(d.ToolCalls) == 0 && c.FinishReason == "" {
		return chat.Delta{}, false, nil
	}
	if st.finished {
		return chat.Delta{}, false, malformed(gs.u, "stream event", fmt.Errorf("candidate %d after its finishReason", c.Index), data)
	}
	st.started = true
	if c.FinishReason != "" {
		st.finished = true
		d.FinishReason = geminiFinish(c.FinishReason, st.calls > 0)
	}
	if !gs.reported {
		gs.estimate.CompletionTokens += tokens + fragmentTokens(d.Content) + fragmentTokens(d.Reasoning)
		gs.estimate.TotalTokens = gs.estimate.PromptTokens + gs.estimate.CompletionTokens
		d.Usage = &gs.estimate
	}
	return d, true, nil
}
