// Package sse writes and reads the server-sent event (SSE) streams of the
// gateway API. It is a thin layer over github.com/tmaxmax/go-sse (imported
// as gosse), which does all of the SSE framing: a [Stream] writes through
// a gosse Session and gosse Messages. [Read] parses as gosse's reader does,
// with gosse's split of the stream into events, without its copies of each
// line and event (the relay reads every upstream event with it);
// FuzzReadLikeGoSSE holds it to gosse's reader, event for event and error
// for error. No other package of the module frames or parses SSE by hand.
//
// # Writing a stream
//
// A streaming handler validates the request and starts the backend call
// first, so that early failures still get a JSON error with a real status
// code. It then opens a [Stream] with [Start], sends each chunk, and ends
// the stream:
//
//	s, err := sse.Start(w, r)
//	if err != nil {
//		apierrors.Write(w, r, err)
//		return
//	}
//	defer s.Close()
//	for chunk, err := range chunks {
//		if err != nil {
//			s.Error(err) // JSON error before the first event, error event after
//			return
//		}
//		if err := s.Send(chunk); err != nil {
//			return // the client has gone
//		}
//	}
//	s.Done()
//
// Every write method returns an error once the request's context is done
// or a write has failed, so a producer stops at the first error. A Stream
// is safe for concurrent use, and must be closed before the handler
// returns (net/http forbids later writes).
//
// # Wire format
//
// Each event is one data: line holding one JSON value, followed by a blank
// line, and is flushed as soon as it is written ([Stream.WriteRaw] leaves
// it for the next flush, see Performance). Chat completions and
// completions streams send unnamed events ([Stream.Send]) and end with
// [Stream.Done]:
//
//	data: {"id":"chatcmpl-1","object":"chat.completion.chunk",...}
//
//	data: [DONE]
//
// Responses streams name each event after its type ([Stream.SendJSON]),
// and end with [Stream.Done] too, after their terminal event:
//
//	event: response.output_text.delta
//	data: {"type":"response.output_text.delta","delta":"Hi",...}
//
//	event: response.completed
//	data: {"type":"response.completed","response":{...},...}
//
//	data: [DONE]
//
// Values are encoded with encoding/json, without HTML escaping (<, > and &
// are sent as they are); the output never holds a line break, so an event
// has exactly one data: line. [Stream.SendRaw] and [Stream.SendEvent] pass
// pre-encoded data through unchanged (a relay's upstream events); data with
// line breaks becomes several data: lines, which readers join with "\n".
//
// # Headers
//
// [Start] writes nothing. The first event (or keep-alive comment) sends
// status 200 with these headers, plus any that the handler set before:
//
//	Content-Type: text/event-stream
//	Cache-Control: no-cache
//	Connection: keep-alive   (HTTP/1.x only)
//	X-Accel-Buffering: no
//
// Connection is a connection-specific header, which HTTP/2 forbids; Go's
// HTTP/2 server would drop it, and the package does not set it on HTTP/2
// requests in the first place. X-Accel-Buffering: no asks nginx and
// compatible proxies not to buffer the stream. A Content-Length is
// removed. Until the first event [Stream.Started] is false, and the
// handler can still answer with any status.
//
// # Errors
//
// [Stream.Error] chooses the error's form by the moment it comes. Before
// the stream started it is a JSON error with its real status, rendered by
// apierrors ([WithRenderer] picks the renderer). After the first byte it
// is one unnamed event whose data is the general error body, and the
// stream ends without [DONE] (the official SDKs surface that as an error):
//
//	data: {"error":{"message":"upstream failed","type":"upstream_error","param":null,"code":"bad_gateway"}}
//
// Either way the client sees only what apierrors.From makes of the error:
// one that is not an *apierrors.Error is sent as "internal server error",
// its text only logged. A departed client (the request context is done,
// or the error is context.Canceled) gets nothing. Responses streams report
// failures with a response.failed event instead, sent with
// [Stream.SendJSON].
//
// # Keep-alive
//
// A stream that has been silent for an interval ([DefaultKeepAlive], 15s,
// unless [WithKeepAlive] sets another; 0 disables) writes an SSE comment
// line, which clients ignore and which keeps proxies from cutting the idle
// connection while a backend is slow to its first token or is reasoning:
//
//	: keep-alive
//
// The interval restarts with every write. The comments come from one
// timer per stream ([time.AfterFunc]: no goroutine waits on it), started
// by [Start] and stopped by [Stream.Close], [Stream.Done] or
// [Stream.Error] (and by the end of the request's context); when Close
// returns, nothing more is written.
//
// # Reading
//
// [Read] iterates over the events of a stream, with each event's name
// ([Event.Type]) and data; [Event.IsDone] recognises the [DONE] sentinel.
// Comments, id: and retry: fields are skipped. Events may be up to
// [MaxEventSize] (32 MiB); a longer one, or a stream cut off in the middle
// of a line, ends the iteration with an error, never a panic. Tests parse
// the streams of the handlers with it, and the relay reads upstream
// streams with it.
//
// # Performance
//
// The write path reuses its buffers: one JSON encoding buffer and one
// frame buffer per stream, so that each event reaches the
// http.ResponseWriter in one Write followed by one Flush; the headers
// leave with the first event. A producer that knows that more events are
// at hand writes them with [Stream.WriteRaw] and calls [Stream.Flush]
// after the last: the burst then costs one flush, that is one write system
// call on the connection, instead of one per event; the handlers do so
// for the deltas that a backend's stream yields between two calls of its
// Params' Flush (a relay's, before each read of its upstream's reply).
// An open stream holds no goroutine of its own: the keep-alive timer
// runs only when it fires. See BenchmarkEvent
// for the cost per event against a raw fmt.Fprintf and Flush baseline,
// BenchmarkStream for the cost of a whole stream, and the load tool
// (go run ./bench, BENCHMARKS.md) for the cost per request and per open
// stream of the whole gateway.
package sse
