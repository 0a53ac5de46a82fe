// Package relay forwards the gateway's requests to upstream
// OpenAI-compatible services over HTTP: backends for the chat,
// completions, responses and videos handlers, and pass-through handlers
// for the other access points of spec §4.4.
//
// # Routes and failover
//
// A [Relay] is made from [Route] values: each public model id names one
// or more [Upstream] services (base URL, the upstream's key, the
// upstream's name for the model), in failover order.
//
//	r, err := relay.New([]relay.Route{{
//		Model: "gpt-4o",
//		Upstreams: []relay.Upstream{
//			{BaseURL: "https://api.openai.com/v1", Key: os.Getenv("OPENAI_API_KEY")},
//			{BaseURL: "http://10.0.0.7:8000/v1", Model: "local-4o"},
//		},
//	}})
//
// Every upstream call goes through [Relay.Do]: it sends the request to
// the first upstream, and to the next when one cannot be reached, does not
// answer within the first-byte timeout, or answers 5xx; never after
// anything went to the client (see Do for when a retry is safe). Upstream
// replies that are errors become the client's errors with
// [UpstreamError]: a 4xx keeps its status and message, a 429 its
// Retry-After, and everything else (5xx, a connection failure, a reply
// that cannot be read) is 502 bad_gateway; timeouts are 504
// gateway_timeout.
//
// # Credentials and headers
//
// The upstream's key, never the client's, is sent as Authorization:
// Bearer. The client headers that matter upstream (OpenAI-Organization,
// OpenAI-Project, Idempotency-Key, X-Request-Id, …) are forwarded when the
// handlers are wrapped in [ForwardHeaders].
//
// # Timeouts and cancellation
//
// [Timeouts] bounds connecting, the wait for the reply's headers (first
// byte), and each wait for more of a reply body (idle, between stream
// events). Every upstream request carries the client request's context:
// a client that goes away closes the upstream request at once, before
// its first byte as well as in the middle of a stream.
//
// # Transport
//
// All calls of a Relay share one tuned [http.Transport] ([NewTransport]
// documents its pool sizing, timeouts and HTTP/2 choice), unless
// [WithTransport] sets another.
package relay
