package relay

import "time"

// SetClock sets the clock of r's cool-downs, for tests. Call it before r
// is used, and before NewAccessHandler copies r.
func SetClock(r *Relay, now func() time.Time) { r.now = now }

// ReplyBytesHeld returns the bytes that the replies being read hold of
// r's bound (WithMaxReplyBytesInFlight), for tests.
func ReplyBytesHeld(r *Relay) int64 { return r.replies.Used() }

// Fallbacks returns the number of upstream documents that the relay's
// hand decoders have handed to encoding/json so far, for tests.
func Fallbacks() uint64 {
	f := &fallbacks
	return f.chatChunk.Count() + f.chatReply.Count() + f.completionsReply.Count() + f.responsesEvent.Count() + f.geminiEvent.Count()
}
