package relay

import "github.com/gatewaykit/gatewaykit/chat"

// decodeChatReply decodes an upstream's chat completion into r, which
// must be zero, as json.Unmarshal would, without reflection, for the
// usual shape of a reply: choices with an index, a message of content,
// reasoning_content or reasoning, and a finish_reason; a usage of the
// three counts and the reasoning tokens. Members it does not read are
// skipped, after a check that they are valid JSON. For anything else
// (tool calls, a key that only matches case-insensitively, a duplicate
// member, invalid JSON) it reports false, and the caller decodes data
// with json.Unmarshal into a zero r. FuzzDecodeChatReply checks that it
// agrees with encoding/json whenever it reports true.
//
// The strings of r share data's memory, which readReply never modifies.
// A non-streaming chat completion is the relay's most frequent reply.
func decodeChatReply(data []byte, r *chatReply) bool {
	s := scanner{d: data}
	if !s.open() {
		return false
	}
	var seen [2]bool
	for n := 0; ; n++ {
		key, done, ok := s.member(n)
		switch {
		case !ok:
			return false
		case done:
			return s.end()
		}
		switch string(key) {
		case "choices":
			ok = once(&seen[0]) && s.replyChoices(r)
		case "usage":
			ok = once(&seen[1]) && s.usage(&r.Usage)
		default:
			ok = !foldsTo(key, "choices", "usage") && s.skip()
		}
		if !ok {
			return false
		}
	}
}

// replyChoices decodes the choices array of a reply.
func (s *scanner) replyChoices(r *chatReply) bool {
	if s.peek() != '[' {
		return false
	}
	s.i++
	for n := 0; ; n++ {
		done, ok := s.elem(n)
		switch {
		case !ok:
			return false
		case done:
			return true
		}
		r.Choices = append(r.Choices, chatReplyChoice{})
		if !s.replyChoice(&r.Choices[len(r.Choices)-1]) {
			return false
		}
	}
}

// replyChoice decodes one choice of a reply.
func (s *scanner) replyChoice(ch *chatReplyChoice) bool {
	if !s.open() {
		return false
	}
	var seen [3]bool
	for n := 0; ; n++ {
		key, done, ok := s.member(n)
		switch {
		case !ok:
			return false
		case done:
			return true
		}
		switch string(key) {
		case "index":
			ok = once(&seen[0]) && s.int(&ch.Index)
		case "message":
			ok = once(&seen[1]) && s.message(ch)
		case "finish_reason":
			ok = once(&seen[2]) && s.stringOrNull((*string)(&ch.FinishReason))
		default:
			ok = !foldsTo(key, "index", "message", "finish_reason") && s.skip()
		}
		if !ok {
			return false
		}
	}
}

// message decodes a choice's message; tool calls are left to
// encoding/json.
func (s *scanner) message(ch *chatReplyChoice) bool {
	if !s.open() {
		return false
	}
	m := &ch.Message
	var seen [4]bool
	for n := 0; ; n++ {
		key, done, ok := s.member(n)
		switch {
		case !ok:
			return false
		case done:
			return true
		}
		switch string(key) {
		case "content":
			ok = once(&seen[0]) && s.stringPtr(&m.Content)
		case "reasoning_content":
			ok = once(&seen[1]) && s.stringOrNull(&m.ReasoningContent)
		case "reasoning":
			ok = once(&seen[2]) && s.stringOrNull(&m.Reasoning)
		case "tool_calls":
			ok = once(&seen[3]) && s.null()
		default:
			ok = !foldsTo(key, "content", "reasoning_content", "reasoning", "tool_calls") && s.skip()
		}
		if !ok {
			return false
		}
	}
}

// stringPtr decodes a string into a new *dst, or sets *dst to nil for
// null.
func (s *scanner) stringPtr(dst **string) bool {
	if s.peek() == 'n' {
		*dst = nil
		return s.null()
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
	if s.peek() == 'n' {
		*dst = nil
		return s.null()
	}
	if !s.open() {
		return false
	}
	u := new(chat.Usage)
	*dst = u
	var seen [4]bool
	for n := 0; ; n++ {
		key, done, ok := s.member(n)
		switch {
		case !ok:
			return false
		case done:
			return true
		}
		switch string(key) {
		case "prompt_tokens":
			ok = once(&seen[0]) && s.int(&u.PromptTokens)
		case "completion_tokens":
			ok = once(&seen[1]) && s.int(&u.CompletionTokens)
		case "total_tokens":
			ok = once(&seen[2]) && s.int(&u.TotalTokens)
		case "completion_tokens_details":
			ok = once(&seen[3]) && s.completionDetails(&u.CompletionTokensDetails)
		default:
			ok = !foldsTo(key, "prompt_tokens", "completion_tokens", "total_tokens", "completion_tokens_details") && s.skip()
		}
		if !ok {
			return false
		}
	}
}

// completionDetails decodes a usage's completion_tokens_details.
func (s *scanner) completionDetails(dst **chat.CompletionTokensDetails) bool {
	if s.peek() == 'n' {
		*dst = nil
		return s.null()
	}
	if !s.open() {
		return false
	}
	d := new(chat.CompletionTokensDetails)
	*dst = d
	var seen bool
	for n := 0; ; n++ {
		key, done, ok := s.member(n)
		switch {
		case !ok:
			return false
		case done:
			return true
		}
		switch string(key) {
		case "reasoning_tokens":
			ok = once(&seen) && s.int(&d.ReasoningTokens)
		default:
			ok = !foldsTo(key, "reasoning_tokens") && s.skip()
		}
		if !ok {
			return false
		}
	}
}
