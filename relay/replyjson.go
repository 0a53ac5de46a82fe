package relay

import (
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/internal/jsonext"
)

// fallbacks count the documents that each hand decoder could not take
// and handed to encoding/json (jsonext.Fallbacks lists them).
var fallbacks = struct {
	chatChunk, chatReply, completionsReply, responsesEvent, geminiEvent *jsonext.Fallback
}{
	chatChunk:        jsonext.NewFallback("relay.chatChunk"),
	chatReply:        jsonext.NewFallback("relay.chatReply"),
	completionsReply: jsonext.NewFallback("relay.completionsReply"),
	responsesEvent:   jsonext.NewFallback("relay.responsesEvent"),
	geminiEvent:      jsonext.NewFallback("relay.geminiEvent"),
}

// decodeChatReply decodes an upstream's chat completion into r, which
// must be zero, as json.Unmarshal would, without reflection, for the
// usual shape of a reply: choices with an index, a message of content,
// reasoning_content or reasoning, and a finish_reason; a usage of the
// three counts and the reasoning tokens. Members it does not read are
// skipped, after a check that they are valid JSON. For anything else
// (tool calls, a key that only matches case-insensitively, a duplicate
// member, invalid JSON) it reports false, and the caller decodes data
// with json.Unmarshal into a zero r.
//
// The strings of r share data's memory, which readReply never modifies.
// A non-streaming chat completion is the relay's most frequent reply.
func decodeChatReply(data []byte, r *chatReply, kept *[]span) bool {
	return decodeChoices(data, &r.Choices, &r.Usage, (*scanner).replyChoice, kept,
		"choices", "usage", "id", "object", "created", "model")
}

// decodeChoices decodes the usual shape of a chat completion or a
// completion: a choices array, each element decoded by choice, and a
// usage. Other members are checked and skipped, unless their keys fold to
// one of reserved (members that encoding/json would decode, or that the
// gateway writes itself). kept, unless nil, receives the spans of the
// members that a pass-through keeps: all but id, object, created, model
// and usage.
func decodeChoices[C any](data []byte, choices *[]C, usage **chat.Usage, choice func(*scanner, *C) bool, kept *[]span, reserved ...string) bool {
	s := scanner{jsonext.Cursor{Data: data}}
	var seen [2]bool
	return s.Object(func(key []byte) bool {
		start := s.MemberStart
		var ok bool
		switch string(key) {
		case "choices":
			ok = once(&seen[0]) && s.Array(func() bool {
				var zero C
				*choices = append(*choices, zero)
				return choice(&s, &(*choices)[len(*choices)-1])
			})
		case "usage":
			return once(&seen[1]) && s.usage(usage)
		case "id", "object", "created", "model":
			return s.skip()
		default:
			ok = !foldsTo(key, reserved...) && s.skip()
		}
		if ok && kept != nil {
			*kept = append(*kept, span{start, s.Pos})
		}
		return ok
	}) && s.End()
}

// replyChoice decodes one choice of a reply.
func (s *scanner) replyChoice(ch *chatReplyChoice) bool {
	var seen [3]bool
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "index":
			return once(&seen[0]) && s.int(&ch.Index)
		case "message":
			return once(&seen[1]) && s.message(ch)
		case "finish_reason":
			return once(&seen[2]) && s.stringOrNull((*string)(&ch.FinishReason))
		}
		return !foldsTo(key, "index", "message", "finish_reason") && s.skip()
	})
}

// message decodes a choice's message; tool calls are left to
// encoding/json.
func (s *scanner) message(ch *chatReplyChoice) bool {
	m := &ch.Message
	var seen [4]bool
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "content":
			return once(&seen[0]) && s.stringPtr(&m.Content)
		case "reasoning_content":
			return once(&seen[1]) && s.stringOrNull(&m.ReasoningContent)
		case "reasoning":
			return once(&seen[2]) && s.stringOrNull(&m.Reasoning)
		case "tool_calls":
			return once(&seen[3]) && s.Null()
		}
		return !foldsTo(key, "content", "reasoning_content", "reasoning", "tool_calls") && s.skip()
	})
}

// stringPtr decodes a string into a new *dst, or sets *dst to nil for
// null.
func (s *scanner) stringPtr(dst **string) bool {
	*dst = nil
	if s.Null() {
		return true
	}
	var v string
	if !s.stringOrNull(&v) {
		return false
	}
	*dst = &v
	return true
}

// usage decodes a reply's usage into a new *dst, or sets *dst to nil
// for null.
func (s *scanner) usage(dst **chat.Usage) bool {
	*dst = nil
	if s.Null() {
		return true
	}
	u := new(chat.Usage)
	*dst = u
	var seen [5]bool
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "prompt_tokens":
			return once(&seen[0]) && s.int(&u.PromptTokens)
		case "completion_tokens":
			return once(&seen[1]) && s.int(&u.CompletionTokens)
		case "total_tokens":
			return once(&seen[2]) && s.int(&u.TotalTokens)
		case "completion_tokens_details":
			return once(&seen[3]) && s.completionDetails(&u.CompletionTokensDetails)
		case "prompt_tokens_details":
			return once(&seen[4]) && s.promptDetails(&u.PromptTokensDetails)
		}
		return !foldsTo(key, "prompt_tokens", "completion_tokens", "total_tokens", "completion_tokens_details", "prompt_tokens_details") && s.skip()
	})
}

// completionDetails decodes a usage's completion_tokens_details into a
// new *dst, or sets *dst to nil for null.
func (s *scanner) completionDetails(dst **chat.CompletionTokensDetails) bool {
	*dst = nil
	if s.Null() {
		return true
	}
	d := new(chat.CompletionTokensDetails)
	*dst = d
	var seen [4]bool
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "reasoning_tokens":
			return once(&seen[0]) && s.int(&d.ReasoningTokens)
		case "audio_tokens":
			return once(&seen[1]) && s.int(&d.AudioTokens)
		case "accepted_prediction_tokens":
			return once(&seen[2]) && s.int(&d.AcceptedPredictionTokens)
		case "rejected_prediction_tokens":
			return once(&seen[3]) && s.int(&d.RejectedPredictionTokens)
		}
		return !foldsTo(key, "reasoning_tokens", "audio_tokens", "accepted_prediction_tokens", "rejected_prediction_tokens") && s.skip()
	})
}

// promptDetails decodes a usage's prompt_tokens_details into a new *dst,
// or sets *dst to nil for null.
func (s *scanner) promptDetails(dst **chat.PromptTokensDetails) bool {
	*dst = nil
	if s.Null() {
		return true
	}
	d := new(chat.PromptTokensDetails)
	*dst = d
	var seen [3]bool
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "cached_tokens":
			return once(&seen[0]) && s.int(&d.CachedTokens)
		case "audio_tokens":
			return once(&seen[1]) && s.int(&d.AudioTokens)
		case "cache_write_tokens":
			return once(&seen[2]) && s.int(&d.CacheWriteTokens)
		}
		return !foldsTo(key, "cached_tokens", "audio_tokens", "cache_write_tokens") && s.skip()
	})
}

// decodeResponsesEvent decodes an upstream's responses stream event into
// e, which must be zero, as json.Unmarshal would, without reflection, for
// the events that the relay reads only for their type, output_index,
// summary_index and delta: the text, argument and reasoning deltas, which
// are most of a stream, and
// the lifecycle events that it skips (their item, part or response is
// only checked to be JSON, where encoding/json would also check its
// members' kinds). An event whose item or response the
// relay reads (see needsBody) reports false, as does a key that only
// matches case-insensitively, a duplicate member or invalid JSON; the
// caller then decodes data with json.Unmarshal into a zero e.
func decodeResponsesEvent(data []byte, e *responsesEvent) bool {
	s := scanner{jsonext.Cursor{Data: data}}
	var seen [4]bool
	var body bool // an item or a response was skipped
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return once(&seen[0]) && s.stringOrNull(&e.Type)
		case "output_index":
			return once(&seen[1]) && s.int(&e.OutputIndex)
		case "delta":
			return once(&seen[2]) && s.stringOrNull(&e.Delta)
		case "summary_index":
			return once(&seen[3]) && s.int(&e.SummaryIndex)
		case "item", "response":
			body = body || s.Peek() != 'n'
		default:
			if foldsTo(key, "type", "output_index", "delta", "summary_index", "item", "response") {
				return false
			}
		}
		return s.skip()
	}) && s.End()
	return ok && !(body && needsBody(e.Type))
}

// decodeCompletionsReply decodes an upstream's completion, or a chunk of
// its stream, into r, which must be zero apart from the capacity of its
// Choices, as json.Unmarshal would, without reflection, for the usual
// shape: choices of an index, a text and a finish_reason, and a usage. An
// error member, a key that only matches case-insensitively, a duplicate
// member or invalid JSON reports false, and the caller decodes data with
// json.Unmarshal.
func decodeCompletionsReply(data []byte, r *completionsReply, kept *[]span) bool {
	return decodeChoices(data, &r.Choices, &r.Usage, (*scanner).completionsChoice, kept,
		"choices", "usage", "error", "id", "object", "created", "model")
}

// completionsChoice decodes one choice of a completion.
func (s *scanner) completionsChoice(c *completionsChoice) bool {
	var seen [3]bool
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "index":
			return once(&seen[0]) && s.int(&c.Index)
		case "text":
			return once(&seen[1]) && s.stringOrNull(&c.Text)
		case "finish_reason":
			return once(&seen[2]) && s.stringOrNull((*string)(&c.FinishReason))
		}
		return !foldsTo(key, "index", "text", "finish_reason") && s.skip()
	})
}
