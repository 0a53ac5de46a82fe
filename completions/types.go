package completions

import (
	"encoding/json"

	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/jsonext"
)

// MaxChoices is the largest number of choices a request may ask for: n
// times the number of prompts.
const MaxChoices = endpoint.MaxChoices

// Request is the body of POST /v1/completions (spec §4.2).
//
// Fields that Request does not model (suffix, echo, logprobs, best_of,
// seed, user, …) are kept in Extra when it is decoded and written back
// when it is encoded, so that a relay forwards them unchanged.
type Request struct {
	Model  string `json:"model"`
	Prompt Prompt `json:"prompt"`

	// MaxTokens caps the tokens of each choice; nil means the backend's
	// default.
	MaxTokens *int `json:"max_tokens,omitempty"`
	// Temperature is 0 to 2 and TopP 0 to 1, as for chat completions.
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	// N is the number of choices per prompt, 1 to [MaxChoices]; nil
	// means 1. See [Request.Choices].
	N *int `json:"n,omitempty"`

	Stream bool `json:"stream,omitempty"`
	// StreamOptions is not in the spec's table; OpenAI accepts it here as
	// for chat completions, and so does this package.
	StreamOptions *endpoint.StreamOptions `json:"stream_options,omitempty"`

	Stop endpoint.Stop `json:"stop,omitempty"`

	// Extra holds the members of the JSON object that Request does not
	// model, by name, as they were sent.
	Extra map[string]json.RawMessage `json:"-"`
}

var requestJSON = jsonext.NewCodec[Request]()

// UnmarshalJSON decodes a request, keeping unmodelled fields in Extra.
func (r *Request) UnmarshalJSON(b []byte) error { return requestJSON.Decode(b, r) }

// MarshalJSON encodes a request with its Extra fields.
func (r Request) MarshalJSON() ([]byte, error) { return requestJSON.Encode(&r) }

// PerPrompt returns the number of choices for each prompt: N, or 1.
func (r *Request) PerPrompt() int {
	if r.N == nil {
		return 1
	}
	return *r.N
}

// Choices returns the number of choices of the reply: N for each prompt.
// The choices of prompt i have the indexes i*N to i*N+N-1, as in OpenAI's
// API.
func (r *Request) Choices() int {
	return len(r.Prompt) * r.PerPrompt()
}

// IncludeUsage reports whether a streamed reply must end with a usage
// chunk (stream_options.include_usage).
func (r *Request) IncludeUsage() bool {
	return r.StreamOptions != nil && r.StreamOptions.IncludeUsage
}

// Prompt is the prompt of a request, sent as a string or an array of
// strings (a batch: each prompt gets its own choices); a string decodes
// to one element. It encodes as a string when it has one element, and as
// an array otherwise. Arrays of token ids are not supported.
type Prompt []string

// UnmarshalJSON decodes a string, an array of strings or null. Another
// value is a 400 with param "prompt".
func (p *Prompt) UnmarshalJSON(b []byte) error {
	if !jsonext.Strings(b, (*[]string)(p)) {
		return apierrors.InvalidRequest("prompt", "prompt must be a string or an array of strings (arrays of token ids are not supported)")
	}
	return nil
}

// MarshalJSON encodes one prompt as a string, and others as an array.
func (p Prompt) MarshalJSON() ([]byte, error) {
	if len(p) == 1 {
		return json.Marshal(p[0])
	}
	return json.Marshal([]string(p))
}
