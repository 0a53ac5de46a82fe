// Package relaytest provides a fake OpenAI-compatible upstream for testing
// relays, the way net/http/httptest sits beside net/http: an httptest
// server that answers chat completions, completions, responses, video
// tasks, the model list and a few access points (embeddings, the
// messages format, the Gemini style) as real services do, and misbehaves
// in every way a relay must survive (slow, dying or hanging streams,
// malformed JSON and SSE, error statuses, error events, errors that echo
// the credential they were sent, replies that are not what was asked),
// chosen by the model name of each request:
//
//	up := relaytest.NewUpstream()
//	defer up.Close()
//	r, _ := relay.New([]relay.Route{{Model: "gpt", Upstreams: []relay.Upstream{
//		{BaseURL: up.BaseURL(), Model: relaytest.ModeDie},
//	}}})
//
// It records every request it receives ([Upstream.Requests]), with a
// channel closed when it saw the request cancelled, so that tests can
// prove that a relay closes its upstream request when its client goes
// away. [Upstream.SetDown] takes it down (connections dropped) and back
// up.
package relaytest
