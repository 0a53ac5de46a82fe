package endpoint

import (
	"context"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
)

// A Call is a request as an [Interceptor] sees it: admitted (decoded,
// validated, its model found and allowed, its estimate reserved from the
// caller's quota) and about to be answered.
type Call struct {
	// Family is the endpoint family that serves the request: "chat",
	// "completions", "responses", "messages", "gemini", "embeddings",
	// "moderations", "rerank", "images" or "audio" (the name of its
	// package).
	Family string
	// Model is the model that the request names.
	Model string
	// Stream reports whether the reply is a stream.
	Stream bool
	// Principal is the authenticated caller (auth.PrincipalFrom), nil
	// for a handler that is not behind auth.Middleware.
	Principal *auth.Principal
	// Request is the decoded request, to type-switch on: a
	// *chat.Request, *completions.Request, *responses.Request,
	// *embeddings.Request, *moderations.Request, *rerank.Request,
	// *images.Request, *audio.SpeechRequest or
	// *audio.TranscriptionRequest; the handlers of messages and gemini,
	// which run over a chat.Backend, give the *chat.Request that they
	// translated the request into. Every one of them is a [Prompter]. It
	// is shared with the handler and the backend: read it, do not
	// modify it.
	Request any
}

// A Prompter is a request that tells its prompt's text: the request
// types of every endpoint family are Prompters (for embeddings and
// moderations, the input's texts; for rerank, the query and the
// documents; for images, the prompt; for speech, the text to speak).
type Prompter interface {
	// PromptText returns the text of the request's prompt (for chat, the
	// text of its messages), joined with "\n".
	PromptText() string
}

// Prompt returns the prompt's text of c.Request if it is a [Prompter],
// and "" otherwise.
func (c *Call) Prompt() string {
	if p, ok := c.Request.(Prompter); ok {
		return p.PromptText()
	}
	return ""
}

// A Func answers a [Call]: the next step of an [Interceptor], which ends
// with the handler's backend. It returns the reply, or the error to send
// in its place (an *apierrors.Error, rendered once, in the family's
// shape and with its status; any other error is a 500). A nil Reply
// with a nil error stands for the backend's.
type Func func(ctx context.Context, c *Call) (*Reply, error)

// An Interceptor wraps the next step of a call, as connect's
// interceptors wrap a handler's: it may refuse the call (return an
// error without calling next), answer it itself (return [NewReply]
// without calling next: a cache hit), or call next and set hooks on the
// reply it returns, to observe or rewrite the reply's text and usage on
// its way out ([Reply.EditText], [Reply.OnDone]). Interceptors must be
// safe for concurrent use.
//
// The reply that next returns is the backend's to come: the backend is
// asked once the chain has returned, with the request's context (values
// that an interceptor adds to ctx do not reach it), and its text goes
// through the hooks as it is sent.
type Interceptor func(next Func) Func

// A Reply is the reply to a [Call]: the backend's, as next returns it,
// or an interceptor's own ([NewReply]). The handler sends it in the
// family's form, as JSON or as a stream.
//
// The members of an upstream's reply that the kit does not model (a
// relay's system_fingerprint, logprobs) reach the client as long as no
// hook changes the text that carries them: only a chunk (or a JSON
// reply) whose text a hook changed is encoded anew by the handler.
type Reply struct{ r *pipeline.Reply }

// NewReply returns an interceptor's own reply: text, as the content of
// every choice of the reply, and the usage that the caller is charged
// and that the reply reports. The handler sends it as it sends a
// backend's, JSON or stream: as one piece of text per choice.
func NewReply(text string, inputTokens, outputTokens int64) *Reply {
	return &Reply{&pipeline.Reply{Own: true, Text: text, Usage: pipeline.Usage{Input: inputTokens, Output: outputTokens}}}
}

// Own reports whether r was made by an interceptor ([NewReply]) rather
// than being the backend's.
func (r *Reply) Own() bool { return r.r.Own }

// Text returns the text of an interceptor's own reply; "" for the
// backend's, whose text is known only as it is sent ([Reply.OnDone]).
func (r *Reply) Text() string { return r.r.Text }

// EditText adds f to the hooks that rewrite the reply's text on its way
// out. f is called with each piece of each choice's text, in order: each
// delta's text in a stream, the whole text of a choice in a JSON reply
// (in package responses, choice is 0 and the pieces are those of the
// response's messages). What f returns is sent in place of text; to
// leave it alone, return text (the handler then sends the upstream's
// encoding of it, unmodelled members included). Hooks added later see
// what the earlier ones returned.
func (r *Reply) EditText(f func(choice int, text string) string) { r.r.OnEdit(f) }

// OnDone adds f to the hooks called once the reply has ended (or failed,
// or its client gone: Done.Err says), before the handler sends its usage
// and charges it: for a JSON reply before it is written, for a stream
// after its last text.
func (r *Reply) OnDone(f func(ctx context.Context, d *Done)) {
	r.r.OnDone(func(ctx context.Context, o *pipeline.Outcome) {
		d := Done{Texts: o.Texts, InputTokens: o.Usage.Input, OutputTokens: o.Usage.Output, Err: o.Err}
		f(ctx, &d)
		o.Usage = pipeline.Usage{Input: d.InputTokens, Output: d.OutputTokens}
	})
}

// Done is what an [Reply.OnDone] hook sees of a reply that has ended.
type Done struct {
	// Texts holds the text of each choice as it was sent, after the edit
	// hooks.
	Texts []string
	// InputTokens and OutputTokens are the reply's usage as its backend
	// reported it (or as NewReply set it); both 0 for a stream whose
	// backend reported none, which the handler then charges at its
	// estimate, and for a reply that failed. A hook may change them: the
	// reply is charged the usage that the hooks leave, and, where the
	// reply has yet to send it (a JSON reply; a stream's final usage),
	// reports it.
	InputTokens, OutputTokens int64
	// Err is the error that ended the reply, nil if it was complete.
	Err error
}

// WithInterceptors adds interceptors to the handler: each call runs
// through them, the first given outermost, then through those of later
// WithInterceptors options, then to the backend. By default there are
// none, and a handler takes none of their steps.
//
// The interceptors run once a request is admitted: decoded, validated,
// its model allowed, and its estimate reserved from the caller's quota
// (package auth). A call that an interceptor refuses is charged nothing
// (the reservation is released); a call that an interceptor answers is
// charged the usage of its reply ([NewReply]); a call that reaches the
// backend is charged as without interceptors, or as its hooks leave the
// usage ([Done]).
//
// Every endpoint package's handler runs them. Those of chat,
// completions, responses, messages and gemini send an interceptor's own
// reply (JSON or stream, in their form) and run the edit hooks on the
// reply's text. Those of embeddings, moderations, rerank, images and
// audio, whose replies are not text, run refusals and done hooks (which
// see the usage; Done.Texts is empty); an interceptor's own reply is a
// 500 there.
func WithInterceptors(ics ...Interceptor) Option {
	return Option{func(c *pipeline.Config) {
		all, _ := c.Interceptors.([]Interceptor)
		all = append(all[:len(all):len(all)], ics...)
		c.Interceptors = all
		if len(all) == 0 {
			c.Chain = nil
			return
		}
		c.Chain = chain(all)
	}}
}

// chain composes ics, the first outermost, around the backend's step.
func chain(ics []Interceptor) pipeline.Chain {
	f := Func(backendStep)
	for i := len(ics) - 1; i >= 0; i-- {
		if ics[i] != nil {
			f = ics[i](f)
		}
	}
	return func(ctx context.Context, pc *pipeline.Call) (*pipeline.Reply, error) {
		c := &Call{Family: pc.Family, Model: pc.Model, Stream: pc.Stream, Request: pc.Request}
		c.Principal, _ = auth.PrincipalFrom(ctx)
		r, err := f(ctx, c)
		if err != nil {
			return nil, pipeline.Refusal(err)
		}
		if r == nil || r.r == nil {
			return &pipeline.Reply{}, nil
		}
		return r.r, nil
	}
}

// backendStep is the last step of every chain: the backend's reply, to
// come.
func backendStep(context.Context, *Call) (*Reply, error) {
	return &Reply{&pipeline.Reply{}}, nil
}
