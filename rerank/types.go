package rerank

import (
	"bytes"
	"context"
	"encoding/json"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
)

// MaxDocuments is the largest number of documents of one request.
const MaxDocuments = 1000

// Request is the body of POST /v1/rerank, in the form that Jina's and
// Cohere's (v1) rerank APIs share.
type Request struct {
	// Model is the model id (required).
	Model string `json:"model"`
	// Query is the search query (required, not empty).
	Query string `json:"query"`
	// Documents are the texts to rank (required, at least one): strings,
	// or objects with a "text" member.
	Documents Documents `json:"documents"`
	// TopN is the number of results to return, the best first; 0 (or
	// more than the documents) means all of them.
	TopN int `json:"top_n,omitempty"`
	// ReturnDocuments asks for each result's document text; nil means
	// true, as Jina's API and Cohere's v1 default to.
	ReturnDocuments *bool `json:"return_documents,omitempty"`
}

// ReturnsDocuments reports whether the reply carries the documents.
func (r *Request) ReturnsDocuments() bool { return r.ReturnDocuments == nil || *r.ReturnDocuments }

// Documents are the texts of a request's documents.
type Documents []string

// UnmarshalJSON accepts an array of strings or of objects with a "text"
// member (the other members are ignored).
func (d *Documents) UnmarshalJSON(b []byte) error {
	*d = nil
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return apierrors.InvalidRequest("documents", "documents must be an array of strings or of objects with a text member").WithCause(err)
	}
	out := make(Documents, len(items))
	for i, it := range items {
		it = bytes.TrimSpace(it)
		if len(it) > 0 && it[0] == '{' {
			var o struct {
				Text *string `json:"text"`
			}
			if err := json.Unmarshal(it, &o); err != nil || o.Text == nil {
				return apierrors.InvalidRequestf("documents", "documents[%d] must be a string or an object with a text string", i)
			}
			out[i] = *o.Text
			continue
		}
		if err := json.Unmarshal(it, &out[i]); err != nil {
			return apierrors.InvalidRequestf("documents", "documents[%d] must be a string or an object with a text string", i).WithCause(err)
		}
	}
	*d = out
	return nil
}

// A Backend scores documents against a query. The handler owns the wire
// (the order, top_n, the documents returned, the usage); a Backend only
// says how relevant each document is.
//
// Rerank returns one score per document of p.Request, in the documents'
// order; higher is more relevant (Jina and Cohere send scores between 0
// and 1). The context is the request's: it is cancelled when the client
// goes away, and Rerank should then return promptly. To send a
// client-facing error, return or wrap an *apierrors.Error; any other
// error is answered as a 500 whose text is only logged. Backends must be
// safe for concurrent use and must not modify p.
type Backend interface {
	Rerank(ctx context.Context, p *Params) (*Result, error)
}

// Params is what a [Backend] is asked: the decoded and validated request,
// and the catalogue entry of its model. Read them, do not modify them.
type Params struct {
	Request *Request
	Model   *models.Model
}

// Result is a backend's reply.
type Result struct {
	// Scores holds one relevance score per document, in the documents'
	// order.
	Scores []float64
	// PromptTokens is the number of tokens read (query and documents),
	// sent as usage and charged to the API key.
	PromptTokens int
	// Model is the model that answered, sent as "model"; empty means the
	// request's.
	Model string
}
