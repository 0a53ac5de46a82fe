package demo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"iter"
	"strconv"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/responses"
)

// ResponsesBackend is the responses side of a [TextBackend]: a
// responses.StreamingBackend and responses.Compactor. Get one with
// [TextBackend.Responses].
type ResponsesBackend struct {
	t *TextBackend
}

var (
	_ responses.StreamingBackend = (*ResponsesBackend)(nil)
	_ responses.Compactor        = (*ResponsesBackend)(nil)
)

// Responses returns the responses backend of t.
func (t *TextBackend) Responses() *ResponsesBackend { return &ResponsesBackend{t: t} }

// compactionPrefix starts the encrypted_content of the demo's compaction
// items; the rest is the base64 of a JSON array of the compacted
// conversation's user messages.
const compactionPrefix = "demo-compaction:"

// Complete implements responses.Backend.
func (b *ResponsesBackend) Complete(ctx context.Context, p *responses.Params) (*responses.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := responsesReply(p)
	if err != nil {
		return nil, err
	}
	if r.in.fail {
		return nil, errFail
	}
	res := &responses.Result{Usage: r.usage(), Incomplete: r.incomplete()}
	pl := &r.plan
	if pl.reasoning != "" {
		res.Output = append(res.Output, responses.Output{Reasoning: pl.reasoning})
	}
	switch {
	case pl.toolName != "":
		res.Output = append(res.Output, responses.Output{Call: &responses.FunctionCall{Name: pl.toolName, Arguments: pl.toolArgs}})
	case r.hasMessage():
		res.Output = append(res.Output, responses.Output{Text: pl.content})
	}
	return res, nil
}

// Stream implements responses.StreamingBackend: the reasoning of a
// reasoning model, then the message's text, in chunks of the configured
// number of tokens, or the function call (its name, then its arguments in
// chunks); then the usage. It calls p.Flush as the chat backend's Stream
// does: before each pause of [WithChunkDelay] (of
// [WithBackgroundChunkDelay] for a background response), or once, first,
// without a chunk delay.
func (b *ResponsesBackend) Stream(ctx context.Context, p *responses.Params) iter.Seq2[responses.Delta, error] {
	return func(yield func(responses.Delta, error) bool) {
		r, err := responsesReply(p)
		if err != nil {
			yield(responses.Delta{}, err)
			return
		}
		delay := b.t.cfg.delay
		if p.InBackground() && b.t.cfg.bgDelay > 0 {
			delay = b.t.cfg.bgDelay
		}
		pace := newPacer(ctx, delay, p.Flush)
		k := b.t.cfg.tokensPerChunk
		send := func(d responses.Delta) bool {
			if err := pace.wait(); err != nil {
				yield(responses.Delta{}, err)
				return false
			}
			if !yield(d, nil) {
				return false
			}
			if r.in.fail {
				yield(responses.Delta{}, errFail)
				return false
			}
			return true
		}
		pl := &r.plan
		item := 0
		if pl.reasoning != "" {
			for pos := 0; pos < len(pl.reasoning); {
				end := advance(pl.reasoning, pos, k)
				if !send(responses.Delta{Item: item, Reasoning: pl.reasoning[pos:end]}) {
					return
				}
				pos = end
			}
			item++
		}
		switch {
		case pl.toolName != "":
			if !send(responses.Delta{Item: item, Call: &responses.FunctionCall{Name: pl.toolName}}) {
				return
			}
			for pos := 0; pos < len(pl.toolArgs); {
				end := advance(pl.toolArgs, pos, k)
				if !send(responses.Delta{Item: item, Arguments: pl.toolArgs[pos:end]}) {
					return
				}
				pos = end
			}
		case r.hasMessage():
			if pl.content == "" && !send(responses.Delta{Item: item}) {
				return
			}
			for pos := 0; pos < len(pl.content); {
				end := advance(pl.content, pos, k)
				if !send(responses.Delta{Item: item, Text: pl.content[pos:end]}) {
					return
				}
				pos = end
			}
		}
		u := r.usage()
		yield(responses.Delta{Usage: &u, Incomplete: r.incomplete()}, nil)
	}
}

// Compact implements responses.Compactor. The compaction item's content is
// [compactionPrefix] and the base64 of a JSON array of the conversation's
// user messages (those of earlier compaction items first); a later
// request that sends it back is answered as if those messages came before
// its input. Usage: the conversation's tokens in, the user messages'
// tokens out.
func (b *ResponsesBackend) Compact(ctx context.Context, p *responses.CompactParams) (*responses.CompactResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	conv, err := readConversation(p.Items(), nil)
	if err != nil {
		return nil, err
	}
	data, _ := json.Marshal(conv.said)
	out := 0
	for _, s := range conv.said {
		out += CountTokens(s)
	}
	return &responses.CompactResult{
		EncryptedContent: compactionPrefix + base64.StdEncoding.EncodeToString(data),
		Usage:            responses.Usage{InputTokens: conv.prompt, OutputTokens: out},
	}, nil
}

// responsesReplyData is the whole demo reply to a responses request.
type responsesReplyData struct {
	in     input
	prompt int
	plan   plan
}

func (r *responsesReplyData) usage() responses.Usage {
	return responses.Usage{InputTokens: r.prompt, OutputTokens: r.plan.tokens,
		OutputTokensDetails: responses.OutputTokensDetails{ReasoningTokens: r.plan.reasoned},
		TotalTokens:         r.prompt + r.plan.tokens}
}

// hasMessage reports whether the reply has a message item: not when the
// reply is filtered or calls a tool, nor when the token cap left nothing
// after the reasoning.
func (r *responsesReplyData) hasMessage() bool {
	return !r.in.filter && r.plan.toolName == "" && (r.plan.content != "" || r.plan.reasoning == "")
}

func (r *responsesReplyData) incomplete() string {
	switch {
	case r.in.filter:
		return responses.ReasonContentFilter
	case r.plan.finish == "length":
		return responses.ReasonMaxOutputTokens
	}
	return ""
}

// conversation is what the demo reads of the items of a conversation.
type conversation struct {
	said       []string // the user messages' text, oldest first
	last       *responses.Item
	lastUser   *responses.Item
	toolOutput *responses.Item // the last item, if it is a function_call_output
	prompt     int
}

// readConversation reads items, with the instructions' tokens counted as
// prompt tokens.
func readConversation(items []responses.Item, instructions *string) (conversation, error) {
	var c conversation
	if instructions != nil {
		c.prompt += CountTokens(*instructions)
	}
	for i := range items {
		it := &items[i]
		c.last = it
		switch it.Kind() {
		case responses.ItemMessage:
			c.prompt += contentTokens(&it.Content)
			if it.Role == responses.RoleUser {
				c.said = append(c.said, it.Content.String())
				c.lastUser = it
			}
		case responses.ItemFunctionCall:
			c.prompt += CountTokens(it.Name) + CountTokens(it.Arguments)
		case responses.ItemFunctionCallOutput:
			if it.Output != nil {
				c.prompt += contentTokens(it.Output)
			}
		case responses.ItemCompaction:
			said, err := readCompaction(it.EncryptedContent)
			if err != nil {
				return c, err
			}
			for _, s := range said {
				c.prompt += CountTokens(s)
			}
			c.said = append(c.said, said...)
		}
	}
	if c.last != nil && c.last.Kind() == responses.ItemFunctionCallOutput {
		c.toolOutput = c.last
	}
	return c, nil
}

// readCompaction decodes the content of a demo compaction item. Content
// the demo did not make is a 400 naming no field (the client sent an item
// of another backend).
func readCompaction(s string) ([]string, error) {
	bad := apierrors.InvalidRequest("input", "demo: a compaction item holds content that this backend did not make")
	rest, ok := strings.CutPrefix(s, compactionPrefix)
	if !ok {
		return nil, bad
	}
	data, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return nil, bad.WithCause(err)
	}
	var said []string
	if err := json.Unmarshal(data, &said); err != nil {
		return nil, bad.WithCause(err)
	}
	return said, nil
}

// contentTokens counts the tokens of a content. Earlier demo replies,
// which end with replyTail, are counted with countReply's shortcut.
func contentTokens(c *responses.Content) int {
	if c.Text != nil {
		return countReply(*c.Text)
	}
	n := 0
	for i := range c.Parts {
		switch part := &c.Parts[i]; part.Type {
		case responses.PartInputImage:
			n += ImageTokens
		case responses.PartRefusal:
			n += CountTokens(part.Refusal)
		default:
			n += countReply(part.Text)
		}
	}
	return n
}

// responsesReply works out the reply to a responses request.
func responsesReply(p *responses.Params) (responsesReplyData, error) {
	req := p.Request
	var r responsesReplyData
	conv, err := readConversation(p.Items(), req.Instructions)
	if err != nil {
		return r, err
	}
	r.prompt = conv.prompt
	switch {
	case conv.toolOutput != nil:
		r.in = newInput(conv.toolOutput.Output.String(), nil, true)
	case conv.lastUser != nil:
		var images []string
		for j := range conv.lastUser.Content.Parts {
			if part := &conv.lastUser.Content.Parts[j]; part.Type == responses.PartInputImage {
				name := part.ImageURL
				if name == "" {
					name = "file " + part.FileID
				}
				images = append(images, imageName(name))
			}
		}
		r.in = newInput(conv.lastUser.Content.String(), images, false)
	default:
		r.in = newInput("", nil, false)
	}
	if r.in.filter {
		return r, nil
	}
	reasoning := p.Model != nil && p.Model.Reasoning
	if tool := responsesTool(req, &r.in); tool != nil {
		pl := &r.plan
		if reasoning {
			pl.reasoning = reasoningText(&r.in, r.prompt, tool.Name)
			pl.reasoned = CountTokens(pl.reasoning)
		}
		// A tool call is never cut: its arguments stay valid JSON.
		pl.toolName, pl.toolArgs = tool.Name, sampleJSON(tool.Parameters, sampleString(&r.in))
		pl.tokens = pl.reasoned + CountTokens(pl.toolName) + CountTokens(pl.toolArgs)
		return r, nil
	}
	if reasoning {
		r.plan.reasoning = reasoningText(&r.in, r.prompt, "")
	}
	r.plan.content = responsesContent(req, earlierTurn(&conv, &r.in)+replyText(&r.in, 0, 1))
	r.plan.finishText(limits{maxTokens: req.TokenLimit()})
	return r, nil
}

// responsesContent is the message's text: the reply text, or a JSON
// document when text.format asks for one, as chatContent does for
// response_format.
func responsesContent(req *responses.Request, text string) string {
	if req.Text == nil || req.Text.Format == nil {
		return text
	}
	switch f := req.Text.Format; f.Type {
	case responses.FormatJSONObject:
		q, _ := json.Marshal(text)
		return `{"reply":` + string(q) + `}`
	case responses.FormatJSONSchema:
		return sampleJSON(f.Schema, text)
	}
	return text
}

// earlierTurn is the sentence that shows the demo saw the conversation
// before the last user message: `Earlier you said: "<the user message
// before it>" (<n> earlier messages). `, or "" when there is none.
func earlierTurn(c *conversation, in *input) string {
	n := len(c.said)
	if !in.toolResult {
		n-- // the last user message is the one answered
	}
	if n <= 0 {
		return ""
	}
	prev := newInput(c.said[n-1], nil, false).echo
	s := `Earlier you said: "` + prev + `" (`
	if n == 1 {
		return s + "1 earlier message). "
	}
	return s + strconv.Itoa(n) + " earlier messages). "
}

// responsesTool returns the function tool the demo calls, or nil, by the
// rules of chatTool: the named one when tool_choice names one, the first
// one when it is "required", and with "auto" (or no tool_choice) the first
// one whose name appears in the last user message, unless the
// conversation ends with a tool result.
func responsesTool(req *responses.Request, in *input) *responses.Tool {
	tc := req.ToolChoice
	if tc != nil && tc.Mode == responses.ToolChoiceNone {
		return nil
	}
	var first *responses.Tool
	for i := range req.Tools {
		t := &req.Tools[i]
		if t.Type != responses.ToolFunction || t.Name == "" {
			continue
		}
		if first == nil {
			first = t
		}
		switch {
		case tc != nil && tc.Function != "":
			if t.Name == tc.Function {
				return t
			}
		case tc != nil && tc.Mode == responses.ToolChoiceRequired:
			return first
		case in.toolResult:
			return nil
		case strings.Contains(in.echo, t.Name):
			return t
		}
	}
	return nil
}
