package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/gatewaykit/gatewaykit/auth"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	textendpoint "github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// The access points charge the tokens that the upstream reports against
// the client's key (auth.Charge), read from the reply as it passes
// through, without holding it: a usageScanner follows the JSON structure
// byte by byte and keeps only the value of a "usage" (OpenAI and messages
// formats) or "usageMetadata" (Gemini style) member of the top-level
// object, or of the objects of a top-level array (the Gemini style's
// streamed JSON array). Event streams are scanned event by event. Fields
// seen later replace earlier ones, so a messages-format stream's
// input_tokens (message_start) and final output_tokens (message_delta)
// add up, and a Gemini stream's last usageMetadata wins. A reply that
// reports no usage is not charged.

// maxUsageValue bounds the usage value kept.
const maxUsageValue = 16 << 10

// usageFields are the token counts of the formats' usage objects.
type usageFields struct {
	TotalTokens      *int64 `json:"total_tokens"`      // OpenAI
	PromptTokens     *int64 `json:"prompt_tokens"`     // OpenAI
	CompletionTokens *int64 `json:"completion_tokens"` // OpenAI
	InputTokens      *int64 `json:"input_tokens"`      // messages format, OpenAI's newer objects
	OutputTokens     *int64 `json:"output_tokens"`
	CacheCreation    *int64 `json:"cache_creation_input_tokens"` // messages format
	CacheRead        *int64 `json:"cache_read_input_tokens"`
	TotalTokenCount  *int64 `json:"totalTokenCount"` // Gemini style
	PromptTokenCount *int64 `json:"promptTokenCount"`
	Candidates       *int64 `json:"candidatesTokenCount"`
	Thoughts         *int64 `json:"thoughtsTokenCount"`
	CachedContent    *int64 `json:"cachedContentTokenCount"`

	// The details of OpenAI's usage objects (chat; responses).
	PromptDetails     *cachedDetails    `json:"prompt_tokens_details"`
	InputDetails      *cachedDetails    `json:"input_tokens_details"`
	CompletionDetails *reasoningDetails `json:"completion_tokens_details"`
	OutputDetails     *reasoningDetails `json:"output_tokens_details"`
}

// cachedDetails are the details of an OpenAI usage's input.
type cachedDetails struct {
	CachedTokens     *int64 `json:"cached_tokens"`
	CacheWriteTokens *int64 `json:"cache_write_tokens"`
}

// reasoningDetails are the details of an OpenAI usage's output.
type reasoningDetails struct {
	ReasoningTokens *int64 `json:"reasoning_tokens"`
}

// merge sets the fields that o reports.
func (u *usageFields) merge(o usageFields) {
	for _, p := range [...]struct{ dst, src **int64 }{
		{&u.TotalTokens, &o.TotalTokens}, {&u.PromptTokens, &o.PromptTokens},
		{&u.CompletionTokens, &o.CompletionTokens}, {&u.InputTokens, &o.InputTokens},
		{&u.OutputTokens, &o.OutputTokens}, {&u.CacheCreation, &o.CacheCreation},
		{&u.CacheRead, &o.CacheRead}, {&u.TotalTokenCount, &o.TotalTokenCount},
		{&u.PromptTokenCount, &o.PromptTokenCount}, {&u.Candidates, &o.Candidates}, {&u.Thoughts, &o.Thoughts},
		{&u.CachedContent, &o.CachedContent},
	} {
		if *p.src != nil {
			*p.dst = *p.src
		}
	}
	for _, p := range [...]struct{ dst, src **cachedDetails }{{&u.PromptDetails, &o.PromptDetails}, {&u.InputDetails, &o.InputDetails}} {
		if *p.src != nil {
			*p.dst = *p.src
		}
	}
	for _, p := range [...]struct{ dst, src **reasoningDetails }{{&u.CompletionDetails, &o.CompletionDetails}, {&u.OutputDetails, &o.OutputDetails}} {
		if *p.src != nil {
			*p.dst = *p.src
		}
	}
}

// parts returns the parts of the input and output that the usage reports
// apart, for the usage row and its cost: the prompt tokens read from the
// provider's cache (cached_tokens, cache_read_input_tokens,
// cachedContentTokenCount), those written to it (cache_write_tokens,
// cache_creation_input_tokens), and the reasoning tokens
// (reasoning_tokens, thoughtsTokenCount). The settlement takes each at
// most its whole.
func (u *usageFields) parts() (cached, cacheWrite, reasoning int64) {
	cached = count(u.CacheRead) + count(u.CachedContent)
	cacheWrite = count(u.CacheCreation)
	for _, d := range [...]*cachedDetails{u.PromptDetails, u.InputDetails} {
		if d != nil {
			cached += count(d.CachedTokens)
			cacheWrite += count(d.CacheWriteTokens)
		}
	}
	reasoning = count(u.Thoughts)
	for _, d := range [...]*reasoningDetails{u.CompletionDetails, u.OutputDetails} {
		if d != nil {
			reasoning += count(d.ReasoningTokens)
		}
	}
	return cached, cacheWrite, reasoning
}

// tokens is the total that the usage reports: total_tokens or
// totalTokenCount when given, else the sum of its parts.
func (u *usageFields) tokens() int64 {
	switch {
	case u.TotalTokens != nil:
		return count(u.TotalTokens)
	case u.TotalTokenCount != nil:
		return count(u.TotalTokenCount)
	}
	in, out := u.split()
	return in + out
}

// split returns the input tokens (prompt, cached reads and writes
// included) and the output tokens (reasoning included) that the usage
// reports, for the usage row and its cost.
func (u *usageFields) split() (input, output int64) {
	input = count(u.PromptTokens) + count(u.InputTokens) + count(u.CacheCreation) + count(u.CacheRead) + count(u.PromptTokenCount)
	output = count(u.CompletionTokens) + count(u.OutputTokens) + count(u.Candidates) + count(u.Thoughts)
	return input, output
}

// count is *p taken from 0 to the gateway's largest count
// (endpoint.MaxOutputTokens, as the handlers take a backend's), or 0 for
// nil: sums of a few counts never overflow.
func count(p *int64) int64 {
	if p == nil {
		return 0
	}
	return min(max(*p, 0), textendpoint.MaxTokens)
}

// claims returns the counts of u as the upstream reported them, for the
// log, if any is out of the range that count takes; nil otherwise.
func (u *usageFields) claims() []slog.Attr {
	fields := [...]struct {
		name string
		p    *int64
	}{
		{"total_tokens", u.TotalTokens}, {"prompt_tokens", u.PromptTokens}, {"completion_tokens", u.CompletionTokens},
		{"input_tokens", u.InputTokens}, {"output_tokens", u.OutputTokens}, {"cache_creation_input_tokens", u.CacheCreation},
		{"cache_read_input_tokens", u.CacheRead}, {"totalTokenCount", u.TotalTokenCount}, {"promptTokenCount", u.PromptTokenCount},
		{"candidatesTokenCount", u.Candidates}, {"thoughtsTokenCount", u.Thoughts},
	}
	odd := false
	var attrs []slog.Attr
	for _, f := range fields {
		if f.p != nil {
			odd = odd || !inRange(*f.p)
			attrs = append(attrs, slog.Int64(f.name, *f.p))
		}
	}
	if !odd {
		return nil
	}
	return attrs
}

// usageScanner finds the usage members of a JSON text written to it in
// pieces. It assumes nothing of the text: on malformed JSON it finds
// nothing, or a value that does not decode, which is ignored.
type usageScanner struct {
	usage usageFields

	depth     int
	level     int  // the depth of the objects whose members count: 1, or 2 under a top-level array
	started   bool // the first non-space byte is seen
	inString  bool
	escape    bool
	objects   uint64 // bit d-1: the container at depth d is an object (depths ≤ 64)
	wantKey   bool   // the next string at level is a member name
	key       []byte // the member name being read, at most 16 bytes
	keyLong   bool
	inKey     bool
	capturing bool   // inside the value of a usage member
	value     []byte // the usage value so far
}

// reset prepares s for another JSON text (the next event of a stream),
// keeping the usage found so far.
func (s *usageScanner) reset() {
	u := s.usage
	*s = usageScanner{usage: u, key: s.key[:0], value: s.value[:0]}
}

func (s *usageScanner) isObject(depth int) bool {
	return depth >= 1 && depth <= 64 && s.objects&(1<<(depth-1)) != 0
}

// Write scans p; it never fails.
func (s *usageScanner) Write(p []byte) (int, error) {
	for _, c := range p {
		s.scan(c)
	}
	return len(p), nil
}

// WriteString scans p, as Write does.
func (s *usageScanner) WriteString(p string) (int, error) {
	for i := 0; i < len(p); i++ {
		s.scan(p[i])
	}
	return len(p), nil
}

// scanEvent scans the data of one event of a stream. The messages
// format's message_start event carries its usage (the input tokens) in
// its message object rather than at the top.
func (s *usageScanner) scanEvent(typ, data string) {
	if typ == "message_start" {
		var ev struct {
			Message struct {
				Usage usageFields `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal([]byte(data), &ev) == nil {
			s.usage.merge(ev.Message.Usage)
		}
		return
	}
	s.reset()
	_, _ = s.WriteString(data)
}

func (s *usageScanner) scan(c byte) {
	if s.capturing {
		if len(s.value) < maxUsageValue {
			s.value = append(s.value, c)
		}
	}
	if s.inString {
		switch {
		case s.escape:
			s.escape = false
		case c == '\\':
			s.escape = true
		case c == '"':
			s.inString, s.inKey = false, false
			return
		}
		if s.inKey {
			if len(s.key) < 16 {
				s.key = append(s.key, c)
			} else {
				s.keyLong = true
			}
		}
		return
	}
	switch c {
	case ' ', '\t', '\n', '\r':
		return
	case '"':
		s.inString = true
		if s.wantKey && s.depth == s.level && s.isObject(s.depth) {
			s.inKey, s.wantKey = true, false
			s.key, s.keyLong = s.key[:0], false
		}
	case ':':
		if s.depth == s.level && s.isObject(s.depth) && !s.keyLong &&
			(string(s.key) == "usage" || string(s.key) == "usageMetadata") {
			s.capturing = true
			s.value = s.value[:0]
		}
	case '{', '[':
		if !s.started {
			s.started = true
			s.level = 1
			if c == '[' {
				s.level = 2
			}
		}
		s.depth++
		if s.depth >= 1 && s.depth <= 64 {
			if c == '{' {
				s.objects |= 1 << (s.depth - 1)
			} else {
				s.objects &^= 1 << (s.depth - 1)
			}
		}
		if c == '{' && s.depth == s.level {
			s.wantKey = true
		}
	case '}', ']':
		if s.capturing && s.depth == s.level {
			s.endValue()
		}
		if s.depth > 0 { // malformed JSON closes more than it opened
			s.depth--
		}
	case ',':
		if s.depth == s.level && s.isObject(s.depth) {
			if s.capturing {
				s.endValue()
			}
			s.wantKey = true
		}
	}
}

// endValue ends the capture of a usage value; the last byte captured is
// the delimiter that ended it.
func (s *usageScanner) endValue() {
	s.capturing = false
	v := s.value
	if len(v) > 0 {
		v = v[:len(v)-1]
	}
	var u usageFields
	if len(s.value) < maxUsageValue && json.Unmarshal(v, &u) == nil {
		s.usage.merge(u)
	}
}

// An access point's request reserves an estimate of its tokens once its
// model is checked (auth.Reserve), and settles it to the usage that the
// reply reports when the reply ends; a request that fails before a reply
// releases it. The estimate: for the messages format, the body's bytes
// / 4 plus its max_tokens (4096 if absent); for the Gemini style, whose
// body is streamed upstream unread, its Content-Length / 4 plus 4096; for
// the other JSON access points, the body's bytes / 4; a multipart body
// (audio) reserves nothing but must still find some of the key's quota
// unreserved. When all of it is reserved by requests in flight, the
// answer is a 403 insufficient_quota in the access point's shape.

// quotaSlot holds the reservation of an access point's request and the
// model it names (once checked), put in its context by ServeHTTP.
type quotaSlot struct {
	rsv   *auth.Reservation
	model *models.Model
}

type quotaSlotKey struct{}

// withQuotaSlot returns ctx with an empty slot, and the function that
// releases what is still reserved when the request ends.
func withQuotaSlot(ctx context.Context) (context.Context, func()) {
	slot := new(quotaSlot)
	return context.WithValue(ctx, quotaSlotKey{}, slot), func() {
		if slot.rsv != nil { // nothing if charge settled it
			var p auth.SettleParams
			if slot.model != nil {
				p.Model = slot.model.ID // a failed request is recorded, at no cost
			}
			_, _ = slot.rsv.SettleUsage(ctx, p)
		}
	}
}

// msgQuotaReserved is the message of a request refused because all of its
// key's quota is reserved by requests in flight.
const msgQuotaReserved = "You exceeded the quota of this API key: what is left is reserved by requests in flight. Please retry when they end, or check your plan and billing details."

// reserve reserves est tokens of the request's key. A request without a
// principal (not behind auth.Middleware) reserves nothing; a key store
// that fails is a 503 (apierrors.FromDependency).
func (h *accessHandler) reserve(ctx context.Context, est int64) error {
	rsv, err := auth.Reserve(ctx, est)
	switch {
	case err == nil:
		if slot, ok := ctx.Value(quotaSlotKey{}).(*quotaSlot); ok {
			slot.rsv = rsv
		} else {
			_, _ = rsv.Settle(ctx, 0)
		}
		return nil
	case errors.Is(err, auth.ErrNoPrincipal):
		return nil
	case errors.Is(err, auth.ErrQuotaExceeded):
		telemetry.SetRefusal(ctx, telemetry.RefusalQuota)
		return apierrors.InsufficientQuota(msgQuotaReserved).WithCause(err)
	}
	return apierrors.FromDependency(ctx, fmt.Errorf("relay: reserving quota: %w", err))
}

// jsonEstimate is the reservation of a JSON body of access point ep. A
// messages-format max_tokens above endpoint.MaxOutputTokens is refused
// with a 400, as package messages refuses it.
func jsonEstimate(ep *endpoint, body []byte) (int64, error) {
	prompt := textendpoint.PromptTokens(len(body))
	if ep.format != formatMessages {
		return prompt, nil
	}
	var v struct {
		MaxTokens json.Number `json:"max_tokens"`
	}
	limit := 0
	if json.Unmarshal(body, &v) == nil && v.MaxTokens != "" {
		n, err := strconv.ParseInt(v.MaxTokens.String(), 10, 64)
		if errors.Is(err, strconv.ErrRange) || n > textendpoint.MaxTokens {
			return 0, apierrors.InvalidRequestf("max_tokens", "max_tokens: must be at most %d, got %s", textendpoint.MaxTokens, apierrors.Echo(v.MaxTokens.String()))
		}
		limit = int(n)
	}
	return textendpoint.Estimate(prompt, 1, limit, nil), nil
}

// geminiEstimate is the reservation of a Gemini-style request whose body
// has n bytes (-1 if unknown).
func geminiEstimate(n int64) int64 {
	return textendpoint.Estimate(textendpoint.PromptTokens(int(max(n, 0))), 1, 0, nil)
}

// charge records the usage found against the request's key, settling its
// reservation, and adds its tokens to the request's telemetry.Info. A
// request without a principal (not behind auth.Middleware) has no key
// to charge.
//
// The settlement carries the model, the input and output tokens and
// their cost at the model's pricing, so that the request is recorded once
// in the key's usage.
func (h *accessHandler) charge(ctx context.Context, up *Upstream, u *usageFields) {
	if attrs := u.claims(); attrs != nil {
		h.logger.LogAttrs(ctx, slog.LevelWarn, "relay: upstream reported token counts out of range; taking them from 0 to the gateway's largest",
			slog.String("model", up.Model), slog.String("upstream", up.Name), slog.Any("usage", slog.GroupValue(attrs...)))
	}
	n := u.tokens()
	in, out := u.split()
	telemetry.AddTokens(ctx, in, out)
	cached, write, reasoning := u.parts()
	cached = min(cached, in)
	write = min(write, in-cached)
	reasoning = min(reasoning, out)
	telemetry.AddTokenDetails(ctx, cached, write, reasoning)
	p := auth.SettleParams{Used: n, InputTokens: in, OutputTokens: out, CachedTokens: cached, CacheWriteTokens: write, ReasoningTokens: reasoning}
	slot, _ := ctx.Value(quotaSlotKey{}).(*quotaSlot)
	if slot != nil && slot.model != nil {
		p.Model, p.CostUSD = slot.model.ID, slot.model.Pricing.TokensCost(models.Tokens{Input: in, Output: out, Cached: cached, CacheWrite: write, Reasoning: reasoning})
	}
	if slot != nil && slot.rsv != nil {
		_, err := slot.rsv.SettleUsage(ctx, p)
		h.logCharge(ctx, n, err)
		return
	}
	if n <= 0 {
		return
	}
	pr, ok := auth.PrincipalFrom(ctx)
	if !ok {
		return
	}
	p.KeyID = pr.KeyID
	_, err := auth.Settle(ctx, p)
	h.logCharge(ctx, n, err)
}

func (h *accessHandler) logCharge(ctx context.Context, n int64, err error) {
	switch {
	case err == nil, errors.Is(err, auth.ErrNoPrincipal):
	case errors.Is(err, auth.ErrQuotaExceeded):
		h.logger.LogAttrs(ctx, slog.LevelDebug, "relay: usage exceeded the key's quota", slog.Int64("tokens", n))
	default:
		h.logger.LogAttrs(ctx, slog.LevelError, "relay: charging usage", slog.Int64("tokens", n), slog.String("error", err.Error()))
	}
}
