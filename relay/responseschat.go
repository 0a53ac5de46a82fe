package relay

import (
	"context"
	"iter"
	"net/http"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/responses/fromchat"
)

// The responses backend reaches the upstreams whose API is not OpenAI's
// through the chat translation of package fromchat: the responses request
// is made the chat request it amounts to, and the chat reply or stream
// comes back as output items. There are two ways:
//
//   - A model that a Gemini-format upstream serves is answered by the
//     chat backend whole (viaChat): it sends the chat request to a
//     Gemini-format upstream as generateContent, and to an OpenAI-format
//     one of the same route as chat completions.
//   - An upstream whose API has a chat translator (chatDialect: the
//     messages format) is chosen per upstream, as the chat backend
//     chooses it: Relay.Do hands each upstream its request in its own
//     format (responsesBuild), and the reply is read in the format of the
//     one that answered (dialectReply).

// viaChat is the responses backend of a model that a Gemini-format
// upstream serves.
func (b responsesBackend) viaChat() responses.StreamingBackend { return fromchat.New(chatBackend(b)) }

// responsesBuild is the build function of a responses request: body to
// /responses of an OpenAI-format upstream, or p translated for another.
func responsesBuild(p *responses.Params, body requestBody, stream bool) attemptBuild {
	openai := postJSON("/responses", body, stream)
	return func(ctx context.Context, u *Upstream) (*http.Request, error) {
		if t := chatDialect(u.API); t != nil {
			cp, err := fromchat.ChatParams(p)
			if err != nil {
				return nil, err
			}
			return t.request(ctx, u, cp, stream)
		}
		return openai(ctx, u)
	}
}

// dialectReply is the chat backend of one request whose upstream reply
// has arrived: res, from u, whose API's translator is t. Package fromchat
// reads it as it reads any chat backend's reply, given the chat request
// that responsesBuild sent.
type dialectReply struct {
	t   chatTranslator
	res *http.Response
	u   *Upstream
}

func (d dialectReply) Complete(context.Context, *chat.Params) (*chat.Result, error) {
	return d.t.complete(d.res, d.u)
}

func (d dialectReply) Stream(_ context.Context, p *chat.Params) iter.Seq2[chat.Delta, error] {
	return d.t.stream(d.res, d.u, p)
}
