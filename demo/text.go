package demo

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatewaykit/gatewaykit/chat"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
)

// The ids of the text models of [TextModels].
const (
	// ChatModel is a plain text model.
	ChatModel = "demo-chat"
	// ReasonerModel is a reasoning model (models.Model.Reasoning): its
	// chat replies carry reasoning_content.
	ReasonerModel = "demo-reasoner"
	// InstructModel is an instruct-style model of the README's legacy
	// completions calls: compat only (chat and completions), not
	// compat-response (responses).
	InstructModel = "demo-instruct"
)

// TextModels returns the catalogue entries of the demo text models:
// [ChatModel] and [ReasonerModel], both serving the compat and
// compat-response endpoint types, and [InstructModel], serving compat
// only. Each call returns new values.
func TextModels() []models.Model {
	return []models.Model{
		{ID: ChatModel, OwnedBy: "gatewaykit", Created: 1735689600, DisplayName: "Demo chat",
			Description:   "Deterministic demo text model of gatewaykit.",
			EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse}},
		{ID: ReasonerModel, OwnedBy: "gatewaykit", Created: 1735689600, DisplayName: "Demo reasoner",
			Description:   "Deterministic demo reasoning model of gatewaykit.",
			EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse}, Reasoning: true},
		{ID: InstructModel, OwnedBy: "gatewaykit", Created: 1735689600,
			Description:   "Deterministic demo instruct model (compat only: chat and legacy completions, no responses).",
			EndpointTypes: []models.EndpointType{models.Compat}},
	}
}

// The directives that a prompt may hold to make the demo misbehave on
// purpose (see the package documentation).
const (
	// DirectiveFail makes the request fail with 502 bad_gateway: at once
	// without streaming, after the first chunk when streaming.
	DirectiveFail = "[demo:fail]"
	// DirectiveContentFilter makes every choice end with finish reason
	// content_filter and no content.
	DirectiveContentFilter = "[demo:content_filter]"
)

// ImageTokens is the number of prompt tokens the demo counts for each
// image.
const ImageTokens = 85

// maxEcho is the number of tokens of the input that a reply echoes.
const maxEcho = 64

// replyTail ends every reply, so that replies are long enough for every
// token cap and stop sequence to be observable.
const replyTail = " This is the gatewaykit demo model, counting to twenty: one, two, three, four, five, six, seven, eight, nine, ten, eleven, twelve, thirteen, fourteen, fifteen, sixteen, seventeen, eighteen, nineteen, twenty."

// errFail is the error of [DirectiveFail].
var errFail = apierrors.BadGateway("demo: simulated upstream failure ("+DirectiveFail+")", nil)

// A TextOption configures [NewTextBackend].
type TextOption func(*textConfig)

type textConfig struct {
	delay          time.Duration
	bgDelay        time.Duration // for background responses; 0: delay
	tokensPerChunk int
}

// WithChunkDelay makes streams wait d before each chunk, so that
// streaming is observable with curl. The default is 0: no waiting. The
// wait ends early, with the context's error, when the request's context
// is done. WithChunkDelay panics if d is negative.
func WithChunkDelay(d time.Duration) TextOption {
	if d < 0 {
		panic("demo: WithChunkDelay: negative delay")
	}
	return func(c *textConfig) { c.delay = d }
}

// WithBackgroundChunkDelay makes the responses of "background": true
// (responses.Params.InBackground) wait d before each chunk instead of
// the delay of [WithChunkDelay], so that a background run lasts long
// enough to be polled, cancelled and resumed with curl. The default is 0:
// the delay of WithChunkDelay. It panics if d is negative.
func WithBackgroundChunkDelay(d time.Duration) TextOption {
	if d < 0 {
		panic("demo: WithBackgroundChunkDelay: negative delay")
	}
	return func(c *textConfig) { c.bgDelay = d }
}

// WithTokensPerChunk sets how many tokens each streamed chunk carries.
// The default is 1, as OpenAI streams. WithTokensPerChunk panics if n is
// below 1.
func WithTokensPerChunk(n int) TextOption {
	if n < 1 {
		panic("demo: WithTokensPerChunk: n below 1")
	}
	return func(c *textConfig) { c.tokensPerChunk = n }
}

// TextBackend is the deterministic demo text backend. It serves chat
// completions through [TextBackend.Chat], legacy completions through
// [TextBackend.Completions] and responses through
// [TextBackend.Responses]; the package documentation says what it
// answers. It is safe for concurrent use.
type TextBackend struct {
	cfg textConfig
}

// NewTextBackend returns a demo text backend.
func NewTextBackend(opts ...TextOption) *TextBackend {
	cfg := textConfig{tokensPerChunk: 1}
	for _, o := range opts {
		o(&cfg)
	}
	return &TextBackend{cfg: cfg}
}

// input is what the reply to one prompt derives from.
type input struct {
	echo       string   // the text the reply echoes, at most maxEcho tokens
	images     []string // how the images of the echoed message are named
	toolResult bool     // echo is the result of a tool call
	fail       bool
	filter     bool
}

// newInput returns the input of text, with directives read and the echo
// cut to maxEcho tokens.
func newInput(text string, images []string, toolResult bool) input {
	in := input{images: images, toolResult: toolResult}
	in.fail = strings.Contains(text, DirectiveFail)
	in.filter = strings.Contains(text, DirectiveContentFilter)
	text = strings.TrimSpace(text)
	if cut, more := cutTokens(text, maxEcho); more {
		text = cut + "…"
	}
	in.echo = text
	return in
}

// limits are the request's constraints on every choice.
type limits struct {
	maxTokens int // 0: none
	stop      []string
}

// plan is one choice, fully worked out.
type plan struct {
	reasoning string
	content   string
	toolName  string
	toolArgs  string
	finish    chat.FinishReason
	tokens    int // completion tokens, reasoning included
	reasoned  int // reasoning tokens
}

// replyText is the text of choice i of n.
func replyText(in *input, i, n int) string {
	var b strings.Builder
	b.Grow(len(in.echo) + len(replyTail) + 64)
	if n > 1 {
		b.WriteString("Choice ")
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteString(" of ")
		b.WriteString(strconv.Itoa(n))
		b.WriteString(". ")
	}
	switch {
	case in.toolResult:
		b.WriteString(`The tool returned: "`)
		b.WriteString(in.echo)
		b.WriteString(`".`)
	case in.echo == "":
		b.WriteString("You said nothing.")
	default:
		b.WriteString(`You said: "`)
		b.WriteString(in.echo)
		b.WriteString(`".`)
	}
	if k := len(in.images); k > 0 {
		b.WriteString(" I see ")
		b.WriteString(strconv.Itoa(k))
		if k == 1 {
			b.WriteString(" image: ")
		} else {
			b.WriteString(" images: ")
		}
		for j, name := range in.images {
			switch {
			case j == 0:
			case j == k-1:
				b.WriteString(" and ")
			default:
				b.WriteString(", ")
			}
			b.WriteString(name)
		}
		b.WriteString(".")
	}
	b.WriteString(replyTail)
	return b.String()
}

// reasoningText is the reasoning of a reasoning model.
func reasoningText(in *input, promptTokens int, tool string) string {
	s := "The prompt has " + strconv.Itoa(promptTokens) + " tokens"
	if k := len(in.images); k > 0 {
		s += " and " + strconv.Itoa(k) + " image"
		if k > 1 {
			s += "s"
		}
	}
	if tool != "" {
		return s + ". The user needs the tool " + tool + ", so I will call it."
	}
	return s + ". I will repeat the last message and count to twenty."
}

// imageName names an image in a reply: its URL, or its media type for a
// data URI.
func imageName(url string) string {
	if rest, ok := strings.CutPrefix(url, "data:"); ok {
		mt, _, _ := strings.Cut(rest, ";")
		return "an inline " + mt + " image"
	}
	if len(url) > 100 {
		return url[:97] + "..."
	}
	return url
}

// finishText applies the stop sequences and the token cap to a choice
// whose reasoning and content are set, and counts its tokens.
func (p *plan) finishText(l limits) {
	p.finish = chat.FinishStop
	if cut := stopIndex(p.content, l.stop); cut >= 0 {
		p.content = p.content[:cut]
	}
	p.reasoned = CountTokens(p.reasoning)
	if l.maxTokens > 0 && p.reasoned >= l.maxTokens {
		if p.reasoned > l.maxTokens || p.content != "" {
			p.finish = chat.FinishLength
		}
		p.reasoning, _ = cutTokens(p.reasoning, l.maxTokens)
		p.reasoned = l.maxTokens
		p.content = ""
		p.tokens = p.reasoned
		return
	}
	if l.maxTokens > 0 {
		var more bool
		p.content, more = cutTokens(p.content, l.maxTokens-p.reasoned)
		if more {
			p.finish = chat.FinishLength
			p.tokens = l.maxTokens
			return
		}
	}
	p.tokens = p.reasoned + countReply(p.content)
}

// replyTailTokens is CountTokens(replyTail).
var replyTailTokens = CountTokens(replyTail)

// countReply is CountTokens(s), with the tokens of replyTail, with which
// most replies end, counted once and for all: a reply text puts a
// non-word, non-space character before the tail, so the tail's tokens are
// the same in the reply as alone.
func countReply(s string) int {
	if head, ok := strings.CutSuffix(s, replyTail); ok && head != "" {
		if c := head[len(head)-1]; c < utf8.RuneSelf && !asciiSpace[c] && !wordAt(head, len(head)-1) {
			return CountTokens(head) + replyTailTokens
		}
	}
	return CountTokens(s)
}

// stopIndex returns where the first stop sequence begins in s, or -1.
// Empty sequences are ignored.
func stopIndex(s string, stop []string) int {
	at := -1
	for _, seq := range stop {
		if seq == "" {
			continue
		}
		if i := strings.Index(s, seq); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	return at
}

// wait sleeps d, or until ctx is done.
func wait(ctx context.Context, t **time.Timer, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	if *t == nil {
		*t = time.NewTimer(d)
	} else {
		(*t).Reset(d)
	}
	select {
	case <-(*t).C:
		return nil
	case <-ctx.Done():
		(*t).Stop()
		return ctx.Err()
	}
}

// A pacer pauses a stream before each chunk for the configured delay,
// and says so first with flush, the Flush of the stream's Params: the
// handler then sends what the stream yielded before the pause, and
// coalesces what it yields between two pauses. A stream without a delay
// has its whole reply at hand, which the pacer says once, as it starts:
// the reply goes out in one write.
type pacer struct {
	ctx   context.Context
	delay time.Duration
	flush func()
	timer *time.Timer
}

func newPacer(ctx context.Context, delay time.Duration, flush func()) *pacer {
	if delay <= 0 {
		flush()
	}
	return &pacer{ctx: ctx, delay: delay, flush: flush}
}

// wait pauses before the next chunk, or returns the context's error.
func (p *pacer) wait() error {
	if p.delay > 0 {
		p.flush()
	}
	return wait(p.ctx, &p.timer, p.delay)
}

// cursor walks one choice's plan in chunks of k tokens: reasoning, then
// content, then the tool call (its name, then its arguments).
type cursor struct {
	p     *plan
	phase int
	pos   int
	done  bool
	call  [1]chat.ToolCallDelta
}

const (
	phaseReasoning = iota
	phaseContent
	phaseToolName
	phaseToolArgs
	phaseEnd
)

// next returns the next delta of the choice, and false when the choice
// has been sent entirely. The last delta carries the finish reason.
func (c *cursor) next(choice, k int) (chat.Delta, bool) {
	if c.done {
		return chat.Delta{}, false
	}
	d := chat.Delta{Choice: choice}
	for {
		switch c.phase {
		case phaseReasoning:
			if piece, ok := c.take(c.p.reasoning, k); ok {
				d.Reasoning = piece
				return c.emit(d), true
			}
			c.phase, c.pos = phaseContent, 0
		case phaseContent:
			if piece, ok := c.take(c.p.content, k); ok {
				d.Content = piece
				return c.emit(d), true
			}
			c.phase, c.pos = phaseToolName, 0
		case phaseToolName:
			if c.p.toolName == "" {
				c.phase = phaseEnd
				continue
			}
			c.call[0] = chat.ToolCallDelta{Name: c.p.toolName}
			d.ToolCalls = c.call[:]
			c.phase = phaseToolArgs
			return c.emit(d), true
		case phaseToolArgs:
			if piece, ok := c.take(c.p.toolArgs, k); ok {
				c.call[0] = chat.ToolCallDelta{Arguments: piece}
				d.ToolCalls = c.call[:]
				return c.emit(d), true
			}
			c.phase = phaseEnd
		default:
			// Nothing was sent at all (an empty, filtered reply): send
			// the finish reason alone.
			d.FinishReason = c.p.finish
			c.done = true
			return d, true
		}
	}
}

// take returns the next k tokens of s, the text of the current phase
// (see advance), and moves the cursor past them; false when s has been
// sent entirely.
func (c *cursor) take(s string, k int) (string, bool) {
	if c.pos >= len(s) {
		return "", false
	}
	end := advance(s, c.pos, k)
	piece := s[c.pos:end]
	c.pos = end
	return piece, true
}

// emit sets the finish reason on d if nothing follows it.
func (c *cursor) emit(d chat.Delta) chat.Delta {
	p := c.p
	var rest bool
	switch c.phase {
	case phaseReasoning:
		rest = c.pos < len(p.reasoning) || p.content != "" || p.toolName != ""
	case phaseContent:
		rest = c.pos < len(p.content) || p.toolName != ""
	case phaseToolArgs:
		rest = c.pos < len(p.toolArgs)
	}
	if !rest {
		d.FinishReason = p.finish
		c.done = true
	}
	return d
}

// advance returns the end of the k tokens of s that start at i.
func advance(s string, i, k int) int {
	for ; k > 0 && i < len(s); k-- {
		i = nextToken(s, i)
	}
	return i
}
