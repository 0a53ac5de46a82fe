package relay

import "net/http"

// DefaultAnthropicVersion is the anthropic-version header sent upstream on
// the messages-format endpoint when the client sends none: that format's
// upstreams refuse requests without it.
const DefaultAnthropicVersion = "2023-06-01"

// messagesHeaders are the client headers of the messages format that the
// upstream needs: the API version, and the beta features asked for.
var messagesHeaders = [...]string{"Anthropic-Version", "Anthropic-Beta"}

// setMessagesHeaders copies the messages format's own headers from the
// client's request to the upstream request.
func setMessagesHeaders(client, req *http.Request) {
	for _, k := range messagesHeaders {
		if vs := client.Header[k]; len(vs) > 0 {
			req.Header[k] = vs
		}
	}
	if req.Header.Get("Anthropic-Version") == "" {
		req.Header.Set("Anthropic-Version", DefaultAnthropicVersion)
	}
}
