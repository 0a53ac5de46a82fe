package pipeline

// A Source is what the Params of a chat, completions or responses
// backend carry besides the request itself: the body that the request
// (of type R) was decoded from, and the flush of the handler's stream.
// Each of those packages keeps one, unexported, in its Params, and gives
// the Params methods of their own (Body, Flush, SetFlush) that state the
// contract; a copy of the Params copies the Source.
type Source[R any] struct {
	body  []byte
	of    *R // the request decoded from body
	flush func()
}

// NewSource returns the Source of req, decoded from body.
func NewSource[R any](req *R, body []byte) Source[R] {
	return Source[R]{body: body, of: req}
}

// Body returns the body, if req is the request decoded from it, and nil
// otherwise: Params whose Request was replaced do not carry the old
// request's body.
func (s *Source[R]) Body(req *R) []byte {
	if req == nil || req != s.of {
		return nil
	}
	return s.body
}

// Flush calls the flush function, if one is set.
func (s *Source[R]) Flush() {
	if s.flush != nil {
		s.flush()
	}
}

// SetFlush sets the flush function; nil removes it.
func (s *Source[R]) SetFlush(flush func()) { s.flush = flush }

// Same reports whether a and b are the same string: an upstream's chunk
// still describes a delta whose strings are the same as when it was
// attached. It is a == b, without the call that compares the bytes when
// both are empty (the reasoning and finish reason of most deltas), and
// cheap when they share their bytes (the runtime compares the pointers
// first): it runs for every field of every delta that carries a chunk.
func Same(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || a == b)
}
