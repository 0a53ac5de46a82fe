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

// A Chunk is a delta as an upstream encoded it (a JSON object of the
// members of the delta's chunk that the handler does not write itself),
// with what the delta said (S, its content) when the chunk was attached:
// the handler sends the chunk only while the delta still says that.
type Chunk[S comparable] struct {
	data []byte
	said S
}

// Set attaches data to a delta that says said; nil data detaches.
func (c *Chunk[S]) Set(data []byte, said S) {
	c.data, c.said = data, said
}

// For returns the chunk of a delta that says said: the data attached, if
// the delta said the same then, and nil otherwise.
func (c *Chunk[S]) For(said S) []byte {
	if c.data == nil || c.said != said {
		return nil
	}
	return c.data
}
