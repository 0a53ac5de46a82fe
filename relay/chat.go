package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"

	"github.com/gatewaykit/gatewaykit/chat"
)

// Chat returns the relay's backend for the chat handler: it forwards each
// request to POST {base}/chat/completions of the model's upstreams.
//
// The request goes upstream as the client sent it (chat.Params.Body:
// every member, those that chat.Request does not model included; with
// Params that have no Body, built in code, the request encoded again,
// its Extra members included), with "model" replaced by the upstream's
// name for it and, when streaming, stream_options.include_usage set; the
// headers kept by [ForwardHeaders] go with it, the client's key never
// does. The reply is handed back as a chat.Result or chat.Delta values,
// with the upstream's reply or chunks of the usual shape attached
// (chat.Result.SetReply, chat.Delta.SetChunk): the handler writes the
// wire, with the gateway's own ids, created time and public model name.
// A stream calls chat.Params.Flush before each read of the upstream's
// reply.
//
// Streams are read event by event with package sse and turned into one
// Delta per choice of each upstream chunk, as they arrive. The upstream's
// usage, from its final chunk, is the one reported; until it comes, each
// Delta reports a running estimate (the prompt's text and the streamed
// fragments, at about four characters a token), so that a client that
// goes away mid-stream is still charged for what was generated, and an
// upstream that never reports usage is charged by that estimate.
//
// An upstream whose API is [APIAnthropic] is sent POST {base}/messages
// instead, with the request translated into the messages format: system
// and developer messages joined into "system"; user and tool messages
// into user turns (image_url parts as image blocks, a data: URI as base64
// data; tool messages as tool_result blocks, merged into one user turn
// with what follows); assistant messages into text and tool_use blocks
// (arguments that are not a JSON object are a 400); max_tokens from
// max_completion_tokens, max_tokens, the model's OutputTokenLimit or
// 4096, as the format requires one; temperature capped at 1 (the
// format's range); stop as stop_sequences; top_p, and the extra members
// top_k and user (as metadata.user_id); tools and tool_choice (required
// is any, a named function tool, parallel_tool_calls false
// disable_parallel_tool_use); reasoning_effort on a reasoning model as a
// thinking budget (low 2048 tokens, medium 8192, high 16384; max_tokens
// raised above it). response_format, logprobs and other members the
// format does not have are left out, and n above 1 is a 400. The key goes
// as x-api-key, with anthropic-version [DefaultAnthropicVersion]. The
// reply's text blocks become the content, thinking blocks the reasoning
// and tool_use blocks the tool calls; stop_reason end_turn,
// stop_sequence and pause_turn are stop, max_tokens length, tool_use
// tool_calls and refusal content_filter; the usage's prompt tokens are
// its input tokens, the cache's reads and writes included, which are its
// prompt_tokens_details' cached_tokens (cache_read_input_tokens) and
// cache_write_tokens (cache_creation_input_tokens). A Gemini-style
// upstream's cachedContentTokenCount is the cached_tokens, and its
// thoughtsTokenCount the reasoning_tokens. A stream's events become
// deltas as they arrive (message_start gives the input tokens,
// message_delta the stop reason and output tokens; ping and unknown
// events are skipped); one that breaks the format's order, ends without
// message_stop, or sends an error event is a 502. Error replies in the
// format's envelope keep their status and message, with the OpenAI type
// and code of the status; a 429 keeps its retry-after, and a 529
// (overloaded) is a 503 (see [UpstreamError]).
//
// Errors follow [UpstreamError]. An upstream stream that breaks off
// (without its final "data: [DONE]"), sends an event that is not a chunk,
// or breaks the chunk rules (a choice index out of range, a tool call
// index that skips one) is a 502 bad_gateway; after the first chunk, the
// handler sends it as the stream's error event.
//
// An upstream whose API is [APIGemini] or [APIAnthropic] is asked in its
// own format, the request and the reply translated (see the package
// documentation, Upstreams of other formats).
func (r *Relay) Chat() chat.StreamingBackend {
	return chatBackend{r.withTransport(credentialPlacer{next: r.transport})}
}

type chatBackend struct{ r *Relay }

// chatReply is the part of an upstream's chat completion that the relay
// reads.
type chatReply struct {
	Choices []chatReplyChoice `json:"choices"`
	Usage   *chat.Usage       `json:"usage"`
}

// chatReplyChoice is one choice of a [chatReply].
type chatReplyChoice struct {
	Index   int `json:"index"`
	Message struct {
		Content          *string         `json:"content"`
		ReasoningContent string          `json:"reasoning_content"`
		Reasoning        string          `json:"reasoning"`
		ToolCalls        []chat.ToolCall `json:"tool_calls"`
	} `json:"message"`
	FinishReason chat.FinishReason `json:"finish_reason"`
}

// decode decodes data into r, which must be zero: by hand for the usual
// shape of a reply (decodeChatReply), with encoding/json otherwise. For
// the usual shape, it also sets kept to the spans of the members that a
// pass-through keeps, and reports fast.
func (r *chatReply) decode(data []byte, kept *[]span) (fast bool, err error) {
	if decodeChatReply(data, r, kept) {
		return true, nil
	}
	fallbacks.chatReply.Add()
	*r = chatReply{}
	return false, json.Unmarshal(data, r)
}

// appendMembers appends to b a JSON object of the members of data at the
// spans kept.
func appendMembers(b, data []byte, kept []span) []byte {
	b = append(b, '{')
	for i, sp := range kept {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, data[sp.start:sp.end]...)
	}
	return append(b, '}')
}

// Complete sends p's Body (p.Request encoded when it has none) upstream,
// and returns the reply, with the upstream's members (Result.SetReply)
// when it is of the usual shape.
func (b chatBackend) Complete(ctx context.Context, p *chat.Params) (*chat.Result, error) {
	if b.r.speaks(p.Request.Model, APIGemini) {
		return b.completeGemini(ctx, p)
	}
	req, err := parseRequestBody(p.Body(), p.Request)
	if err != nil {
		return nil, err
	}
	res, u, err := b.r.do(ctx, p.Request.Model, chatBuild(p, req, false))
	if err != nil {
		return nil, err
	}
	if t := chatDialect(u.API); t != nil {
		out, err := t.complete(res, u)
		if out != nil {
			b.r.chatUsage(ctx, u, &out.Usage)
		}
		return out, err
	}
	var reply chatReply
	raw, err := readCompletion(res, u, reply.decode)
	if err != nil {
		return nil, err
	}
	return b.result(ctx, p, &reply, raw, u)
}

// result is the chat.Result of an OpenAI-format upstream's reply, with
// raw, its members when of the usual shape, for the handler to pass
// through.
func (b chatBackend) result(ctx context.Context, p *chat.Params, reply *chatReply, raw []byte, u *Upstream) (*chat.Result, error) {
	out, err := chatResult(p, reply, u)
	if err != nil {
		return nil, err
	}
	b.r.chatUsage(ctx, u, &out.Usage)
	out.SetReply(raw)
	return out, nil
}

// chatResult is the chat.Result of an upstream's reply.
func chatResult(p *chat.Params, reply *chatReply, u *Upstream) (*chat.Result, error) {
	n := p.Request.Choices()
	out := &chat.Result{Choices: make([]chat.Output, n)}
	var completion int
	err := byIndex(u, n, reply.Choices, func(c *chatReplyChoice) int { return c.Index }, func(k int, c *chatReplyChoice) {
		o := &out.Choices[k]
		if c.Message.Content != nil {
			o.Content = *c.Message.Content
		}
		o.Reasoning = c.Message.ReasoningContent
		if o.Reasoning == "" {
			o.Reasoning = c.Message.Reasoning
		}
		o.ToolCalls = c.Message.ToolCalls
		o.FinishReason = c.FinishReason
		completion += estimateTokens(o.Content) + estimateTokens(o.Reasoning)
		for _, tc := range o.ToolCalls {
			completion += estimateTokens(tc.Function.Name) + estimateTokens(tc.Function.Arguments)
		}
	})
	if err != nil {
		return nil, err
	}
	if reply.Usage != nil {
		out.Usage = *reply.Usage
	} else {
		out.Usage = chat.Usage{PromptTokens: chatPromptTokens(p.Request), CompletionTokens: completion}
	}
	return out, nil
}

// complete posts a client's non-streaming request (raw, its body, or v
// encoded when raw is nil) to path of model's upstreams, and decodes the
// reply with decode. It returns the reply's members to pass through
// when decode read the usual shape (nil otherwise), and the upstream
// that answered.
func (r *Relay) complete(ctx context.Context, model, path string, raw []byte, v any, decode func(data []byte, kept *[]span) (fast bool, err error)) ([]byte, *Upstream, error) {
	body, err := parseRequestBody(raw, v)
	if err != nil {
		return nil, nil, err
	}
	res, u, err := r.do(ctx, model, postJSON(path, body, false))
	if err != nil {
		return nil, nil, err
	}
	members, err := readCompletion(res, u, decode)
	return members, u, err
}

// readCompletion reads u's reply res to a non-streaming request, and
// closes it: a status other than 200 is the client's error
// ([UpstreamError]); a 200 is decoded with decode, and its members to
// pass through are returned when decode read the usual shape.
func readCompletion(res *http.Response, u *Upstream, decode func(data []byte, kept *[]span) (fast bool, err error)) ([]byte, error) {
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, UpstreamError(res, u)
	}
	var members []byte
	err := readReply(res.Body, u, func(data []byte) error {
		var kept []span
		fast, err := decode(data, &kept)
		if fast {
			members = appendMembers(nil, data, kept)
		}
		return err
	})
	return members, err
}

// A chatTranslator is the chat backend's way to an upstream whose API is
// not OpenAI's: it builds the upstream request of a chat request, and
// reads the reply (closing its body) and the stream.
type chatTranslator interface {
	request(ctx context.Context, u *Upstream, p *chat.Params, stream bool) (*http.Request, error)
	complete(res *http.Response, u *Upstream) (*chat.Result, error)
	stream(res *http.Response, u *Upstream, p *chat.Params) iter.Seq2[chat.Delta, error]
}

// chatDialect returns the translator of the chat backend for api, or nil
// for the OpenAI API, which needs none.
func chatDialect(api API) chatTranslator {
	switch api {
	case APIAnthropic:
		return anthropicChat{}
	}
	return nil
}

// chatBuild is the build function of a chat request: body, the request
// as the client sent it, to path /chat/completions of an OpenAI-format
// upstream, or p translated for another.
func chatBuild(p *chat.Params, body requestBody, stream bool) attemptBuild {
	openai := postJSON("/chat/completions", body, stream)
	return func(ctx context.Context, u *Upstream) (*http.Request, error) {
		if t := chatDialect(u.API); t != nil {
			return t.request(ctx, u, p, stream)
		}
		return openai(ctx, u)
	}
}

// byIndex calls place with each of a reply's choices and the index it
// claims, after checking that the reply has n choices, each with an
// index of its own below n: a reply that breaks that is a 502.
func byIndex[C any](u *Upstream, n int, choices []C, index func(*C) int, place func(k int, c *C)) error {
	if len(choices) != n {
		return malformed(u, "reply", fmt.Errorf("%d choices for n=%d", len(choices), n), nil)
	}
	seen := make([]bool, n)
	for i := range choices {
		c := &choices[i]
		k := index(c)
		if k < 0 || k >= n || seen[k] {
			return malformed(u, "reply", fmt.Errorf("choice index %d out of range or repeated", k), nil)
		}
		seen[k] = true
		place(k, c)
	}
	return nil
}

// postJSON is the build function of a POST of body to path, with each
// upstream's model name, asking for a stream when stream is set.
func postJSON(path string, body requestBody, stream bool) attemptBuild {
	return func(ctx context.Context, u *Upstream) (*http.Request, error) {
		data, err := body.encode(u.Model)
		if err != nil {
			return nil, err
		}
		req, err := newJSONRequest(ctx, http.MethodPost, u.URL(path), data)
		if err != nil {
			return nil, err
		}
		if stream {
			req.Header["Accept"] = []string{"text/event-stream"}
		}
		return req, nil
	}
}

// chatChunk is the part of an upstream's chat completion chunk that the
// relay reads.
type chatChunk struct {
	Choices []chatChunkChoice `json:"choices"`
	Usage   *chat.Usage       `json:"usage"`
	Error   json.RawMessage   `json:"error"`
}

// chatChunkChoice is one choice of a [chatChunk].
type chatChunkChoice struct {
	Index int `json:"index"`
	Delta struct {
		Role             string          `json:"role"`
		Content          string          `json:"content"`
		ReasoningContent string          `json:"reasoning_content"`
		Reasoning        string          `json:"reasoning"`
		ToolCalls        []chunkToolCall `json:"tool_calls"`
	} `json:"delta"`
	FinishReason chat.FinishReason `json:"finish_reason"`
}

// reasoning returns the reasoning of c, under either of its names.
func (c *chatChunkChoice) reasoning() string {
	if c.Delta.Reasoning == "" {
		return c.Delta.ReasoningContent
	}
	return c.Delta.ReasoningContent + c.Delta.Reasoning
}

// reset empties c for the next chunk, keeping the choices' backing array,
// zeroed: encoding/json decodes into the elements it finds there without
// clearing them.
func (c *chatChunk) reset() {
	choices := c.Choices
	clear(choices[:cap(choices)])
	*c = chatChunk{Choices: choices[:0]}
}

// decode decodes data into c: by hand for the usual shape of a chunk,
// with encoding/json otherwise. For the usual shape, it also sets kept
// to the spans of the members that a pass-through keeps, and reports
// fast; see decodeChatChunk.
func (c *chatChunk) decode(data []byte, kept *[]span) (fast bool, err error) {
	c.reset()
	*kept = (*kept)[:0]
	if decodeChatChunk(data, c, kept) {
		return true, nil
	}
	fallbacks.chatChunk.Add()
	c.reset()
	return false, json.Unmarshal(data, c)
}

// chunkToolCall is a tool-call fragment of an upstream chunk.
type chunkToolCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Stream sends p's Body (p.Request encoded when it has none) upstream,
// and yields the deltas of its stream, each chunk of the usual shape
// attached (chat.Delta.SetChunk); it calls p.Flush before each read of
// the upstream's reply.
func (b chatBackend) Stream(ctx context.Context, p *chat.Params) iter.Seq2[chat.Delta, error] {
	if b.r.speaks(p.Request.Model, APIGemini) {
		return b.streamGemini(ctx, p)
	}
	return func(yield func(chat.Delta, error) bool) {
		body, err := parseRequestBody(p.Body(), p.Request)
		if err == nil {
			err = body.forStream()
		}
		if err != nil {
			yield(chat.Delta{}, err)
			return
		}
		res, u, err := b.r.do(ctx, p.Request.Model, chatBuild(p, body, true))
		if err == nil {
			paced(res, p.Flush)
			if t := chatDialect(u.API); t != nil {
				for d, err := range t.stream(res, u, p) {
					b.r.chatUsage(ctx, u, d.Usage)
					if !yield(d, err) || err != nil {
						return
					}
				}
				return
			}
		}
		res, u, err = checkStream(res, u, err)
		if err != nil {
			yield(chat.Delta{}, err)
			return
		}
		defer res.Body.Close()
		b.readChatStream(ctx, p, res, u, yield)
	}
}

// readChatStream reads the stream res of u, an OpenAI-format upstream,
// and yields its deltas (see chatStream).
func (b chatBackend) readChatStream(ctx context.Context, p *chat.Params, res *http.Response, u *Upstream, yield func(chat.Delta, error) bool) {
	claim := func(cu *chat.Usage) { b.r.chatUsage(ctx, u, cu) }
	yieldEvents(res.Body, u, newChatStream(p, u).event(yield, claim), yield)
}

// chatStream turns upstream chunks into Deltas, checking them against the
// rules the handler relies on.
//
// A chunk of the usual shape (one choice, without tool calls, and with
// the role if it is the choice's first) is attached to its Delta
// (chat.Delta.SetChunk): the upstream's bytes without the members that
// the handler writes itself (id, object, created, model) and without
// "usage", so that the client gets every member the upstream sent
// (system_fingerprint, logprobs, …) and the handler does not encode the
// text again. Other chunks are decoded into Deltas that the handler
// encodes.
type chatStream struct {
	u        *Upstream
	choices  []chatChoiceState
	estimate chat.Usage // running estimate, reported until the upstream's usage arrives
	reported bool       // the upstream reported its usage
	chunk    chatChunk
	kept     []span               // the members of the chunk that a pass-through keeps
	raw      []byte               // the pass-through chunk, reused
	calls    []chat.ToolCallDelta // reused
}

type chatChoiceState struct {
	started  bool
	finished bool
	calls    int // tool calls begun
}

func newChatStream(p *chat.Params, u *Upstream) *chatStream {
	return &chatStream{
		u:        u,
		choices:  make([]chatChoiceState, p.Request.Choices()),
		estimate: chat.Usage{PromptTokens: chatPromptTokens(p.Request)},
	}
}

// event returns the function that handles the data of one upstream
// event: it yields the event's deltas, and its usage once claim has
// taken it (the relay's check of the counts an upstream reports).
func (cs *chatStream) event(yield func(chat.Delta, error) bool, claim func(*chat.Usage)) func(data []byte) (bool, error) {
	return func(data []byte) (bool, error) {
		fast, err := cs.chunk.decode(data, &cs.kept)
		if err != nil {
			return false, malformed(cs.u, "stream event", err, data)
		}
		if isError(cs.chunk.Error) {
			return false, streamError(cs.u, cs.chunk.Error)
		}
		for i := range cs.chunk.Choices {
			c := &cs.chunk.Choices[i]
			pass := fast && len(cs.chunk.Choices) == 1 && len(c.Delta.ToolCalls) == 0 && (c.Delta.Role != "" || cs.started(c.Index))
			d, ok, err := cs.delta(c.Index, c.Delta.Content, c.reasoning(), c.FinishReason, c.Delta.ToolCalls, pass)
			if err != nil {
				return false, err
			}
			if !ok {
				continue
			}
			if pass {
				d.SetChunk(cs.passThrough(data))
			}
			if !yield(d, nil) {
				return false, nil
			}
		}
		if u := cs.chunk.Usage; u != nil {
			cs.reported = true
			claim(u)
			if !yield(chat.Delta{Usage: u}, nil) {
				return false, nil
			}
		}
		return true, nil
	}
}

// started reports whether the choice with index i has had a delta.
func (cs *chatStream) started(i int) bool {
	return i >= 0 && i < len(cs.choices) && cs.choices[i].started
}

// passThrough returns the chunk data as a Delta's Raw: an object of the
// members that decoding kept.
func (cs *chatStream) passThrough(data []byte) []byte {
	cs.raw = appendMembers(cs.raw[:0], data, cs.kept)
	return cs.raw
}

// delta makes the Delta of one choice of a chunk; !ok when it carries
// nothing. A chunk to be passed through (pass) carries its role.
func (cs *chatStream) delta(index int, content, reasoning string, finish chat.FinishReason, calls []chunkToolCall, pass bool) (_ chat.Delta, ok bool, _ error) {
	if index < 0 || index >= len(cs.choices) {
		return chat.Delta{}, false, malformed(cs.u, "stream event", fmt.Errorf("choice index %d of %d", index, len(cs.choices)), nil)
	}
	st := &cs.choices[index]
	if content == "" && reasoning == "" && len(calls) == 0 && finish == "" && (st.started || !pass) {
		// An empty delta, or a role-only one that is not passed through:
		// the handler sends the role itself.
		return chat.Delta{}, false, nil
	}
	if st.finished {
		return chat.Delta{}, false, malformed(cs.u, "stream event", fmt.Errorf("delta for choice %d after its finish reason", index), nil)
	}
	d := chat.Delta{Choice: index, Content: content, Reasoning: reasoning, FinishReason: finish}
	tokens := fragmentTokens(content) + fragmentTokens(reasoning)
	cs.calls = cs.calls[:0]
	for _, tc := range calls {
		switch {
		case tc.Index == st.calls:
			if tc.Function.Name == "" {
				return chat.Delta{}, false, malformed(cs.u, "stream event", fmt.Errorf("tool call %d of choice %d begins without a name", tc.Index, index), nil)
			}
			st.calls++
		case tc.Index >= 0 && tc.Index < st.calls:
		default:
			return chat.Delta{}, false, malformed(cs.u, "stream event", fmt.Errorf("tool call index %d of choice %d skips %d", tc.Index, index, st.calls), nil)
		}
		cs.calls = append(cs.calls, chat.ToolCallDelta{Index: tc.Index, ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		tokens += fragmentTokens(tc.Function.Name) + fragmentTokens(tc.Function.Arguments)
	}
	if len(cs.calls) > 0 {
		d.ToolCalls = cs.calls
	}
	st.started = true
	st.finished = finish != ""
	if !cs.reported {
		cs.estimate.CompletionTokens += tokens
		cs.estimate.TotalTokens = cs.estimate.PromptTokens + cs.estimate.CompletionTokens
		d.Usage = &cs.estimate
	}
	return d, true, nil
}

// chatPromptTokens estimates the prompt tokens of a request: its messages'
// text and tool calls, and a few tokens of framing per message.
func chatPromptTokens(req *chat.Request) int {
	n := 0
	for i := range req.Messages {
		m := &req.Messages[i]
		n += 3 + estimateTokens(m.Content.String())
		for _, tc := range m.ToolCalls {
			n += estimateTokens(tc.Function.Name) + estimateTokens(tc.Function.Arguments)
		}
	}
	return n
}
