package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/responses/fromchat"
)

// Responses returns the relay's backend for the responses handler: it
// forwards each request to POST {base}/responses of the model's
// upstreams.
//
// The gateway keeps the conversations (previous_response_id, and the
// "conversation" of /v1/conversations, are resolved from its own
// stores), so the upstream is sent the whole conversation and keeps
// nothing: "input" is the conversation's items (Params.History, then the
// request's input; a string input with no history stays a string),
// without the gateway's item ids, which the upstream does not know;
// previous_response_id and conversation are left out and "store" is
// false. Every other
// field of the request goes as the client sent it (unmodelled ones
// included), with "model" replaced by the upstream's name, and the
// headers kept by [ForwardHeaders].
//
// The upstream's output messages, function calls and reasoning items
// become the reply's items (with the gateway's own ids); hosted tool
// calls are not relayed. A reasoning item keeps its summary, its parts
// joined by a blank line into the gateway's one summary part (or, from an
// upstream that sends no summary but reasoning_text content, that text),
// and its encrypted_content, which the upstream sends when the request's
// include lists "reasoning.encrypted_content" (include, like every field,
// is forwarded as the client sent it). With that include, a reasoning
// item also keeps the upstream's id, which its encrypted content goes
// back with: the item returns intact, and a client that sends it back in
// its input (store: false) has it forwarded unchanged; a stored response
// keeps it, so that previous_response_id replays it. An item with
// neither summary nor encrypted content carries nothing the gateway's
// reasoning items can hold, and is left out. A stream is read
// event by event: response.output_item.added begins a message or a
// function call, and a reasoning item at its first
// response.reasoning_summary_text.delta (or reasoning_text.delta), or
// whole at its response.output_item.done if it streamed none (whose
// encrypted content is added to the item in any case);
// output_text, function-call-argument and reasoning deltas continue it,
// and the terminal event (response.completed or response.incomplete)
// gives the usage and the incomplete reason. Until that usage arrives,
// each Delta reports a running estimate, so that a client that goes away
// is charged for what was streamed. Reasoning items of the conversation
// that carry no encrypted_content (those the gateway relayed) are not
// sent back upstream: an upstream that stores nothing cannot use them.
//
// Errors are as for [Relay.Chat]; an upstream response that failed
// (status failed, a non-null error member, or a response.failed or error
// event) is a 502 bad_gateway whose upstream text is only logged, and so
// is a 200 reply that is not a response object (a JSON list, an object
// without "output").
//
// An upstream whose API is [APIAnthropic] is sent POST {base}/messages
// instead: the request becomes the chat request it amounts to (package
// responses/fromchat says what maps to what, what is refused with a 400
// naming the param, such as hosted tools, and what is left out, such as
// reasoning items), translated as [Relay.Chat] translates it. The
// reply's thinking, text and tool_use blocks become reasoning, message
// and function call items, in order; a stop at max_tokens makes the
// response incomplete (max_output_tokens), a refusal incomplete with
// content_filter. A model that an upstream of [APIGemini] serves is
// answered the same way by [Relay.Chat] whole (see the package
// documentation). Compaction is not translated.
//
// The backend is also a responses.Compactor: POST /v1/responses/compact is
// relayed to POST {base}/responses/compact with the whole conversation,
// and the upstream's compaction item (its encrypted_content, which only
// that upstream can read) becomes the gateway's. A later request that
// sends it back in its input forwards it to the upstream unchanged (but
// for the gateway's item id).
func (r *Relay) Responses() ResponsesBackend {
	return responsesBackend{r.withTransport(credentialPlacer{next: r.transport})}
}

// ResponsesBackend is the type of [Relay.Responses]: a streaming responses
// backend that also compacts.
type ResponsesBackend interface {
	responses.StreamingBackend
	responses.Compactor
}

type responsesBackend struct{ r *Relay }

// responsesBody is the upstream request of p: its Body as the client
// sent it (p.Request encoded when it has none), with the conversation as
// input.
func responsesBody(p *responses.Params, stream bool) (requestBody, error) {
	body, err := parseRequestBody(p.Body(), p.Request)
	if err != nil {
		return body, err
	}
	if len(p.History) > 0 || p.Request.Input.Text == nil {
		if err := setInput(body, p.Items()); err != nil {
			return body, err
		}
	}
	body.del("previous_response_id")
	body.del("conversation")
	body.set("store", []byte("false"))
	if stream {
		body.set("stream", []byte("true"))
	} else {
		body.del("stream")
	}
	return body, nil
}

// setInput sets the body's input to items, without the gateway's item
// ids, which the upstream does not know, and without the reasoning items
// that carry no encrypted_content (the gateway's own, relayed from an
// upstream's summary): an upstream that keeps nothing (store is false)
// refuses a reasoning item it cannot decrypt, and reasoning items are
// optional context.
func setInput(body requestBody, items []responses.Item) error {
	out := make([]responses.Item, 0, len(items))
	for _, it := range items {
		switch it.Kind() {
		case responses.ItemMessage, responses.ItemFunctionCall, responses.ItemFunctionCallOutput, responses.ItemCompaction:
			it.ID = ""
		case responses.ItemReasoning:
			if it.EncryptedContent == "" {
				continue
			}
		}
		out = append(out, it)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return apierrors.Internal(fmt.Errorf("relay: encode the input: %w", err))
	}
	body.set("input", raw)
	return nil
}

// Compact relays a compaction: the upstream compacts the whole
// conversation, and its compaction item's encrypted content is handed
// back.
func (b responsesBackend) Compact(ctx context.Context, p *responses.CompactParams) (*responses.CompactResult, error) {
	body, err := parseRequestBody(nil, p.Request)
	if err != nil {
		return nil, err
	}
	if err := setInput(body, p.Items()); err != nil {
		return nil, err
	}
	body.del("previous_response_id")
	res, u, err := b.r.do(ctx, p.Request.Model, postJSON("/responses/compact", body, false))
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, UpstreamError(res, u)
	}
	var reply struct {
		Output []struct {
			Type             string `json:"type"`
			EncryptedContent string `json:"encrypted_content"`
		} `json:"output"`
		Usage *responses.Usage `json:"usage"`
	}
	if err := readReply(res.Body, u, unmarshalInto(&reply)); err != nil {
		return nil, err
	}
	out := &responses.CompactResult{}
	for _, o := range reply.Output {
		if o.Type == responses.ItemCompaction && o.EncryptedContent != "" {
			out.EncryptedContent = o.EncryptedContent
		}
	}
	if out.EncryptedContent == "" {
		return nil, malformed(u, "compaction", errors.New("no compaction item"), nil)
	}
	if reply.Usage != nil {
		out.Usage = *reply.Usage
	}
	return out, nil
}

// responsesReply is the part of an upstream's response object that the
// relay reads.
type responsesReply struct {
	Status string `json:"status"`
	Output []struct {
		Type             string     `json:"type"`
		ID               string     `json:"id"`
		CallID           string     `json:"call_id"`
		Name             string     `json:"name"`
		Arguments        string     `json:"arguments"`
		Content          []textPart `json:"content"`
		Summary          []textPart `json:"summary"`
		EncryptedContent string     `json:"encrypted_content"`
	} `json:"output"`
	Usage             *responses.Usage `json:"usage"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error json.RawMessage `json:"error"`
}

// textPart is a part of an output item's content or summary.
type textPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// summarySeparator joins the parts of a reasoning summary: the gateway's
// reasoning items have one part.
const summarySeparator = "\n\n"

// reasoningText is the gateway's summary of an upstream reasoning item:
// its summary_text parts, joined by summarySeparator, or else its
// reasoning_text content; "" when it has neither.
func reasoningText(summary, content []textPart) string {
	var text strings.Builder
	for _, p := range summary {
		if p.Type == responses.PartSummary && p.Text != "" {
			if text.Len() > 0 {
				text.WriteString(summarySeparator)
			}
			text.WriteString(p.Text)
		}
	}
	if text.Len() == 0 {
		for _, c := range content {
			if c.Type == "reasoning_text" {
				text.WriteString(c.Text)
			}
		}
	}
	return text.String()
}

func (b responsesBackend) Complete(ctx context.Context, p *responses.Params) (*responses.Result, error) {
	if b.r.speaks(p.Request.Model, APIGemini) {
		return b.viaChat().Complete(ctx, p)
	}
	body, err := responsesBody(p, false)
	if err != nil {
		return nil, err
	}
	res, u, err := b.r.do(ctx, p.Request.Model, responsesBuild(p, body, false))
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if t := chatDialect(u.API); t != nil {
		out, err := fromchat.New(dialectReply{t, res, u}).Complete(ctx, p)
		if out != nil {
			b.r.responsesUsage(ctx, u, &out.Usage)
		}
		return out, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, UpstreamError(res, u)
	}
	var reply responsesReply
	if err := readReply(res.Body, u, unmarshalInto(&reply)); err != nil {
		return nil, err
	}
	if reply.Status == string(responses.StatusFailed) || isError(reply.Error) {
		return nil, upstreamResponseFailed(u, reply.Error)
	}
	if reply.Output == nil {
		// null, or an object without "output": not a response.
		return nil, malformed(u, "reply", errors.New("not a response object (no output)"), nil)
	}
	out := &responses.Result{}
	outTokens := 0
	keepIDs := wantsEncryptedReasoning(p)
	for _, o := range reply.Output {
		switch o.Type {
		case responses.ItemReasoning:
			text := reasoningText(o.Summary, o.Content)
			if text == "" && o.EncryptedContent == "" {
				continue // nothing that a reasoning item of the gateway can show
			}
			ro := responses.Output{Reasoning: text, EncryptedContent: o.EncryptedContent}
			if keepIDs {
				ro.ID = o.ID
			}
			out.Output = append(out.Output, ro)
			outTokens += estimateTokens(text)
		case responses.ItemMessage:
			var text strings.Builder
			for _, c := range o.Content {
				if c.Type == responses.PartOutputText {
					text.WriteString(c.Text)
				}
			}
			out.Output = append(out.Output, responses.Output{Text: text.String()})
			outTokens += estimateTokens(text.String())
		case responses.ItemFunctionCall:
			if o.Name == "" {
				return nil, malformed(u, "reply", errors.New("a function call without a name"), nil)
			}
			out.Output = append(out.Output, responses.Output{Call: &responses.FunctionCall{CallID: o.CallID, Name: o.Name, Arguments: o.Arguments}})
			outTokens += estimateTokens(o.Name) + estimateTokens(o.Arguments)
		}
	}
	if reply.Status == string(responses.StatusIncomplete) {
		out.Incomplete = responses.ReasonMaxOutputTokens
		if d := reply.IncompleteDetails; d != nil && d.Reason != "" {
			out.Incomplete = d.Reason
		}
	}
	if reply.Usage != nil {
		out.Usage = *reply.Usage
	} else {
		out.Usage = responses.Usage{InputTokens: responsesInputTokens(p), OutputTokens: outTokens}
	}
	b.r.responsesUsage(ctx, u, &out.Usage)
	return out, nil
}

// upstreamResponseFailed is the 502 of a response that failed upstream.
func upstreamResponseFailed(u *Upstream, raw json.RawMessage) error {
	return apierrors.BadGateway("The upstream failed to generate the response.",
		fmt.Errorf("relay: upstream %s: response failed: %s", u.Name, snippet(raw, u.Key)))
}

// responsesEvent is the part of an upstream's stream event that the relay
// reads.
type responsesEvent struct {
	Type         string `json:"type"`
	OutputIndex  int    `json:"output_index"`
	SummaryIndex int    `json:"summary_index"`
	Delta        string `json:"delta"`
	Item         *struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"item"`
	Response *responsesReply `json:"response"`
}

// decode decodes data into e, which must be zero: by hand when it can
// (decodeResponsesEvent), with encoding/json otherwise.
func (e *responsesEvent) decode(data []byte) error {
	if decodeResponsesEvent(data, e) {
		return nil
	}
	fallbacks.responsesEvent.Add()
	*e = responsesEvent{}
	return json.Unmarshal(data, e)
}

// needsBody reports whether the relay reads the item or the response of
// an event of type typ.
func needsBody(typ string) bool {
	switch typ {
	case "response.output_item.added", "response.completed", "response.incomplete", "response.failed":
		return true
	}
	return false
}

func (b responsesBackend) Stream(ctx context.Context, p *responses.Params) iter.Seq2[responses.Delta, error] {
	if b.r.speaks(p.Request.Model, APIGemini) {
		return b.viaChat().Stream(ctx, p)
	}
	return func(yield func(responses.Delta, error) bool) {
		body, err := responsesBody(p, true)
		if err != nil {
			yield(responses.Delta{}, err)
			return
		}
		res, u, err := b.r.do(ctx, p.Request.Model, responsesBuild(p, body, true))
		if err == nil {
			paced(res, p.Flush)
			if t := chatDialect(u.API); t != nil {
				defer res.Body.Close()
				for d, err := range fromchat.New(dialectReply{t, res, u}).Stream(ctx, p) {
					b.r.responsesUsage(ctx, u, d.Usage)
					if !yield(d, err) || err != nil {
						return
					}
				}
				return
			}
		}
		res, u, err = checkStream(res, u, err)
		if err != nil {
			yield(responses.Delta{}, err)
			return
		}
		defer res.Body.Close()
		rs := &responsesStream{u: u, items: map[int]int{}, reasoning: map[int]*reasoningState{}, cur: -1,
			estimate: responses.Usage{InputTokens: responsesInputTokens(p)}, keepIDs: wantsEncryptedReasoning(p)}
		yieldEvents(res.Body, u, rs.event(func(d responses.Delta, err error) bool {
			b.r.responsesUsage(ctx, u, d.Usage)
			return yield(d, err)
		}), yield)
	}
}

// responsesStream turns upstream events into Deltas.
type responsesStream struct {
	u         *Upstream
	items     map[int]int             // upstream output_index → the gateway's item index
	reasoning map[int]*reasoningState // upstream output_index → a reasoning item
	cur       int                     // the gateway's open item
	estimate  responses.Usage
	reported  bool
	keepIDs   bool // the request asked for reasoning.encrypted_content: reasoning items keep the upstream's ids
}

// reasoningState is a reasoning item of an upstream stream. The gateway's
// item begins with its first summary (or reasoning text) delta, or, if
// it streams none, at its response.output_item.done, with the summary
// and the encrypted content of the finished item (one with neither is
// not relayed). The encrypted content of an item begun earlier is added
// to it at its response.output_item.done.
type reasoningState struct {
	opened bool
	part   int    // the summary part being streamed
	id     string // the upstream's id of the item, if the gateway's item keeps it
}

func (rs *responsesStream) event(yield func(responses.Delta, error) bool) func(data []byte) (bool, error) {
	return func(data []byte) (bool, error) {
		var ev responsesEvent
		if err := ev.decode(data); err != nil {
			return false, malformed(rs.u, "stream event", err, data)
		}
		var d responses.Delta
		switch ev.Type {
		case "response.output_item.added":
			it := ev.Item
			if it == nil {
				return false, malformed(rs.u, "stream event", errors.New("output_item.added without an item"), data)
			}
			if _, dup := rs.items[ev.OutputIndex]; dup || rs.reasoning[ev.OutputIndex] != nil {
				return false, malformed(rs.u, "stream event", fmt.Errorf("output item %d added twice", ev.OutputIndex), data)
			}
			switch it.Type {
			case responses.ItemMessage:
			case responses.ItemFunctionCall:
				if it.Name == "" {
					return false, malformed(rs.u, "stream event", errors.New("a function call without a name"), data)
				}
				d.Call = &responses.FunctionCall{CallID: it.CallID, Name: it.Name, Arguments: it.Arguments}
			case responses.ItemReasoning:
				st := &reasoningState{}
				if rs.keepIDs {
					st.id = it.ID
				}
				rs.reasoning[ev.OutputIndex] = st
				return true, nil // begun by its first delta
			default:
				return true, nil // hosted tool items are not relayed
			}
			rs.cur++
			rs.items[ev.OutputIndex] = rs.cur
			d.Item = rs.cur
		case "response.output_text.delta", "response.function_call_arguments.delta":
			k, ok := rs.items[ev.OutputIndex]
			if !ok || k != rs.cur {
				return false, malformed(rs.u, "stream event", fmt.Errorf("a delta for output item %d, which is not the open one", ev.OutputIndex), data)
			}
			if ev.Delta == "" {
				return true, nil
			}
			d.Item = k
			if ev.Type == "response.output_text.delta" {
				d.Text = ev.Delta
			} else {
				d.Arguments = ev.Delta
			}
			if !rs.reported {
				rs.estimate.OutputTokens += fragmentTokens(ev.Delta)
				rs.estimate.TotalTokens = rs.estimate.InputTokens + rs.estimate.OutputTokens
				d.Usage = &rs.estimate
			}
		case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
			st := rs.reasoning[ev.OutputIndex]
			if st == nil {
				return false, malformed(rs.u, "stream event", fmt.Errorf("a reasoning delta for output item %d, which is not a reasoning item", ev.OutputIndex), data)
			}
			if ev.Delta == "" {
				return true, nil
			}
			delta := ev.Delta
			switch {
			case !st.opened:
				st.opened, st.part = true, ev.SummaryIndex
				rs.cur++
				rs.items[ev.OutputIndex] = rs.cur
				d.ID = st.id
			case rs.items[ev.OutputIndex] != rs.cur:
				return false, malformed(rs.u, "stream event", fmt.Errorf("a delta for output item %d, which is not the open one", ev.OutputIndex), data)
			case ev.Type == "response.reasoning_summary_text.delta" && ev.SummaryIndex != st.part:
				st.part = ev.SummaryIndex
				delta = summarySeparator + delta
			}
			d.Item = rs.items[ev.OutputIndex]
			d.Reasoning = delta
			if !rs.reported {
				rs.estimate.OutputTokens += fragmentTokens(ev.Delta)
				rs.estimate.TotalTokens = rs.estimate.InputTokens + rs.estimate.OutputTokens
				d.Usage = &rs.estimate
			}
		case "response.output_item.done":
			st := rs.reasoning[ev.OutputIndex]
			if st == nil {
				return true, nil
			}
			// The finished reasoning item: its encrypted content, and, if
			// it streamed no deltas, its summary.
			var done struct {
				Item struct {
					Summary          []textPart `json:"summary"`
					Content          []textPart `json:"content"`
					EncryptedContent string     `json:"encrypted_content"`
				} `json:"item"`
			}
			if err := json.Unmarshal(data, &done); err != nil {
				return false, malformed(rs.u, "stream event", err, data)
			}
			if st.opened {
				if done.Item.EncryptedContent == "" {
					return true, nil
				}
				if k := rs.items[ev.OutputIndex]; k != rs.cur {
					return false, malformed(rs.u, "stream event", fmt.Errorf("output item %d done after the next one began", ev.OutputIndex), data)
				}
				d.Item, d.EncryptedContent = rs.cur, done.Item.EncryptedContent
				break
			}
			text := reasoningText(done.Item.Summary, done.Item.Content)
			if text == "" && done.Item.EncryptedContent == "" {
				return true, nil
			}
			st.opened = true
			rs.cur++
			rs.items[ev.OutputIndex] = rs.cur
			d.Item, d.Reasoning, d.EncryptedContent, d.ID = rs.cur, text, done.Item.EncryptedContent, st.id
			if !rs.reported {
				rs.estimate.OutputTokens += estimateTokens(text)
				rs.estimate.TotalTokens = rs.estimate.InputTokens + rs.estimate.OutputTokens
				d.Usage = &rs.estimate
			}
		case "response.completed", "response.incomplete":
			if resp := ev.Response; resp != nil {
				if resp.Usage != nil {
					rs.reported = true
					d.Usage = resp.Usage
				}
				if ev.Type == "response.incomplete" {
					d.Incomplete = responses.ReasonMaxOutputTokens
					if det := resp.IncompleteDetails; det != nil && det.Reason != "" {
						d.Incomplete = det.Reason
					}
				}
			}
			if d.Usage != nil || d.Incomplete != "" {
				yield(d, nil)
			}
			return false, nil // the terminal event: the stream is over
		case "response.failed":
			var raw json.RawMessage
			if ev.Response != nil {
				raw = ev.Response.Error
			}
			return false, upstreamResponseFailed(rs.u, raw)
		case "error":
			return false, streamError(rs.u, json.RawMessage(data))
		default:
			return true, nil
		}
		return yield(d, nil), nil
	}
}

// wantsEncryptedReasoning reports whether the request's include asks for
// reasoning.encrypted_content: then the reasoning items relayed keep the
// upstream's ids, which their encrypted content goes back with.
func wantsEncryptedReasoning(p *responses.Params) bool {
	raw, ok := p.Request.Extra["include"]
	if !ok {
		return false
	}
	var include []string
	return json.Unmarshal(raw, &include) == nil && slices.Contains(include, "reasoning.encrypted_content")
}

// responsesInputTokens estimates the input tokens of a request: its
// instructions and the text of its conversation.
func responsesInputTokens(p *responses.Params) int {
	n := 0
	if in := p.Request.Instructions; in != nil {
		n += estimateTokens(*in)
	}
	for _, it := range p.Items() {
		n += 3 + estimateTokens(it.Content.String()) + estimateTokens(it.Arguments)
		if it.Output != nil {
			n += estimateTokens(it.Output.String())
		}
	}
	return n
}
