package embeddings

import (
	"bytes"
	"context"
	"encoding/json"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/served"
	"github.com/gatewaykit/gatewaykit/models"
)

// The limits of a request, as in OpenAI's API.
const (
	// MaxInputs is the largest number of inputs of one request.
	MaxInputs = 2048
	// MaxDimensions is the largest dimensions a request may ask for.
	MaxDimensions = 4096
)

// The values of encoding_format.
const (
	// EncodingFloat sends each embedding as a JSON array of numbers (the
	// default).
	EncodingFloat = "float"
	// EncodingBase64 sends each embedding as the base64 text of its
	// little-endian float32 values.
	EncodingBase64 = "base64"
)

// Request is the body of POST /v1/embeddings.
type Request struct {
	// Model is the model id (required).
	Model string `json:"model"`
	// Input is the text or texts to embed, or token arrays (required).
	Input Input `json:"input"`
	// Dimensions is the length of each vector asked for; 0 means the
	// model's own.
	Dimensions int `json:"dimensions,omitempty"`
	// EncodingFormat is EncodingFloat (the default, also when empty) or
	// EncodingBase64.
	EncodingFormat string `json:"encoding_format,omitempty"`
	// User identifies the end user; it is passed to the backend.
	User string `json:"user,omitempty"`
}

// Input is the input of a request: a string or an array of strings (Texts),
// or an array of token ids or of arrays of token ids (Tokens). Exactly one
// of the two is set by decoding; each item gets one embedding, in order.
type Input struct {
	Texts  []string
	Tokens [][]int64
}

// Len returns the number of items of in.
func (in Input) Len() int { return len(in.Texts) + len(in.Tokens) }

// UnmarshalJSON accepts the four forms of input.
func (in *Input) UnmarshalJSON(b []byte) error {
	*in = Input{}
	bad := apierrors.InvalidRequest("input", "input must be a string, an array of strings, an array of token ids or an array of arrays of token ids")
	texts, items, err := served.InputItems(b, bad)
	if items == nil {
		in.Texts = texts
		return err
	}
	switch first := bytes.TrimSpace(items[0]); {
	case len(first) > 0 && first[0] == '"':
		in.Texts, err = served.InputTexts(items)
		return err
	case len(first) > 0 && first[0] == '[':
		in.Tokens = make([][]int64, len(items))
		for i, it := range items {
			if err := json.Unmarshal(it, &in.Tokens[i]); err != nil {
				return apierrors.InvalidRequestf("input", "input[%d] must be an array of token ids (integers), like the first item", i).WithCause(err)
			}
		}
	default:
		var toks []int64
		if err := json.Unmarshal(b, &toks); err != nil {
			return bad.WithCause(err)
		}
		in.Tokens = [][]int64{toks}
	}
	return nil
}

// MarshalJSON writes in in the form it was decoded from: a string for one
// text, else an array.
func (in Input) MarshalJSON() ([]byte, error) {
	switch {
	case len(in.Tokens) > 0:
		return json.Marshal(in.Tokens)
	case len(in.Texts) == 1:
		return json.Marshal(in.Texts[0])
	}
	return json.Marshal(in.Texts)
}

// A Backend computes embeddings: the vectors of a request's inputs. The
// handler owns the wire (the list object, the encoding, the usage
// totals); a Backend only says what the model computed.
//
// Embed returns one vector per input item, in order, each of exactly
// p.Request.Dimensions values when that is set. The context is the
// request's: it is cancelled when the client goes away, and Embed should
// then return promptly. To send a client-facing error (a dimensions value
// that the model cannot produce, say), return or wrap an
// *apierrors.Error; any other error is answered as a 500 whose text is
// only logged. Backends must be safe for concurrent use and must not
// modify p.
type Backend interface {
	Embed(ctx context.Context, p *Params) (*Result, error)
}

// Params is what a [Backend] is asked: the decoded and validated request,
// and the catalogue entry of its model. Read them, do not modify them.
type Params struct {
	Request *Request
	Model   *models.Model
}

// Result is a backend's reply.
type Result struct {
	// Embeddings holds one vector per input item, in order.
	Embeddings [][]float32
	// PromptTokens is the number of input tokens read; it is sent as
	// usage.prompt_tokens and usage.total_tokens and charged to the API
	// key.
	PromptTokens int
	// Model is the model that answered, sent as "model"; empty means the
	// request's.
	Model string
}
