package pipeline

import (
	"github.com/gatewaykit/gatewaykit/internal/jsonenc"
	"github.com/gatewaykit/gatewaykit/sse"
)

// A ChunkBuffer writes the chunks of a chat or completions stream, every
// one encoded into one reused buffer that starts with the chunk's head
// (its id, object, created and, for chat, model) and `,"choices":[`.
type ChunkBuffer struct {
	s      *sse.Stream
	head   int // length of the head at the start of buf
	prefix int // length of the head and ,"choices":[ at the start of buf
	buf    []byte
}

// Init makes head, the open JSON object of the chunks' first members, the
// start of every chunk written to s.
func (b *ChunkBuffer) Init(s *sse.Stream, head []byte) {
	b.s, b.head = s, len(head)
	b.buf = append(head, `,"choices":[`...)
	b.prefix = len(b.buf)
}

// Prefix returns the start of a chunk: the head and `,"choices":[`, to
// which the caller appends the chunk's choices and the rest of it, then
// passes the result to Send.
func (b *ChunkBuffer) Prefix() []byte { return b.buf[:b.prefix] }

// Send writes the chunk c, made from Prefix, without flushing it (the
// stream's loop flushes, and so does Done), and keeps c's memory for the
// next chunk.
func (b *ChunkBuffer) Send(c []byte) error {
	b.buf = c[:b.prefix]
	return b.s.WriteRaw("", c)
}

// SendRaw writes, as Send does, a chunk of the head and the members of
// raw, a JSON object (an upstream's chunk).
func (b *ChunkBuffer) SendRaw(raw []byte) error {
	c := append(jsonenc.AppendMembers(b.buf[:b.head], raw), '}')
	err := b.s.WriteRaw("", c)
	b.buf = append(c[:b.head], `,"choices":[`...)
	return err
}
