package moderations

import (
	"bytes"
	"context"
	"encoding/json"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/served"
	"github.com/gatewaykit/gatewaykit/models"
)

// The categories of OpenAI's moderation models, in the order the handler
// sends them. Every reply carries all of them.
const (
	Harassment            = "harassment"
	HarassmentThreatening = "harassment/threatening"
	Hate                  = "hate"
	HateThreatening       = "hate/threatening"
	Illicit               = "illicit"
	IllicitViolent        = "illicit/violent"
	SelfHarm              = "self-harm"
	SelfHarmInstructions  = "self-harm/instructions"
	SelfHarmIntent        = "self-harm/intent"
	Sexual                = "sexual"
	SexualMinors          = "sexual/minors"
	Violence              = "violence"
	ViolenceGraphic       = "violence/graphic"
)

// Categories returns every category, in the order of the reply (a new
// slice each call).
func Categories() []string {
	return []string{Harassment, HarassmentThreatening, Hate, HateThreatening, Illicit, IllicitViolent,
		SelfHarm, SelfHarmInstructions, SelfHarmIntent, Sexual, SexualMinors, Violence, ViolenceGraphic}
}

// ImageCategories reports whether images are classified for category c,
// as in OpenAI's omni-moderation models: the self-harm, sexual (but not
// sexual/minors) and violence categories. A category's
// category_applied_input_types lists "image" only if it is one of these
// and the input holds an image.
func ImageCategories(c string) bool {
	switch c {
	case SelfHarm, SelfHarmInstructions, SelfHarmIntent, Sexual, Violence, ViolenceGraphic:
		return true
	}
	return false
}

// MaxInputs is the largest number of items of an input array.
const MaxInputs = 2048

// Request is the body of POST /v1/moderations.
type Request struct {
	// Model is the model id (required: the handler has no default model).
	Model string `json:"model"`
	// Input is what to classify (required).
	Input Input `json:"input"`
}

// Input is the input of a request: a string or an array of strings (each
// classified on its own: one result per string), or an array of
// multimodal parts ({"type":"text","text"} and
// {"type":"image_url","image_url":{"url"}}), classified together as one
// input: one result.
type Input struct {
	// Texts are the strings; nil for a multimodal input.
	Texts []string
	// Parts are the parts of a multimodal input; nil otherwise.
	Parts []Part
}

// Part is one part of a multimodal input.
type Part struct {
	// Type is "text" or "image_url".
	Type string
	// Text is the text of a text part.
	Text string
	// ImageURL is the URL (or data URI) of an image part.
	ImageURL string
}

// Results returns the number of results that in asks for.
func (in Input) Results() int {
	if in.Parts != nil {
		return 1
	}
	return len(in.Texts)
}

// UnmarshalJSON accepts the three forms of input.
func (in *Input) UnmarshalJSON(b []byte) error {
	*in = Input{}
	bad := apierrors.InvalidRequest("input", "input must be a string, an array of strings or an array of text and image_url parts")
	texts, items, err := served.InputItems(b, bad)
	if items == nil {
		in.Texts = texts
		return err
	}
	if first := bytes.TrimSpace(items[0]); len(first) > 0 && first[0] == '{' {
		in.Parts = make([]Part, len(items))
		for i, it := range items {
			var p struct {
				Type     string `json:"type"`
				Text     *string
				ImageURL *struct {
					URL string `json:"url"`
				} `json:"image_url"`
			}
			if err := json.Unmarshal(it, &p); err != nil {
				return apierrors.InvalidRequestf("input", "input[%d] must be a text or image_url part, like the first item", i).WithCause(err)
			}
			switch {
			case p.Type == "text" && p.Text != nil:
				in.Parts[i] = Part{Type: "text", Text: *p.Text}
			case p.Type == "image_url" && p.ImageURL != nil && p.ImageURL.URL != "":
				in.Parts[i] = Part{Type: "image_url", ImageURL: p.ImageURL.URL}
			default:
				return apierrors.InvalidRequestf("input", `input[%d] must be {"type":"text","text":…} or {"type":"image_url","image_url":{"url":…}}`, i)
			}
		}
		return nil
	}
	in.Texts, err = served.InputTexts(items)
	return err
}

// A Backend classifies content. The handler owns the wire (the id, every
// category in every result, the flagged summary); a Backend only says
// what the model found.
//
// Moderate returns one [Classification] per result that the request asks
// for (p.Request.Input.Results()), in order. The context is the
// request's: it is cancelled when the client goes away, and Moderate
// should then return promptly. To send a client-facing error, return or
// wrap an *apierrors.Error; any other error is answered as a 500 whose
// text is only logged. Backends must be safe for concurrent use and must
// not modify p.
type Backend interface {
	Moderate(ctx context.Context, p *Params) (*Result, error)
}

// Params is what a [Backend] is asked: the decoded and validated request,
// and the catalogue entry of its model. Read them, do not modify them.
type Params struct {
	Request *Request
	Model   *models.Model
}

// Result is a backend's reply.
type Result struct {
	// Results holds one classification per result asked for, in order.
	Results []Classification
	// InputTokens is the number of input tokens read, charged to the API
	// key (the reply, as OpenAI's, reports no usage).
	InputTokens int
	// Model is the model that answered, sent as "model"; empty means the
	// request's.
	Model string
}

// Classification is the verdict on one input.
type Classification struct {
	// Flagged lists the categories the input violates. A result is
	// flagged when any is.
	Flagged []string
	// Scores holds the score of each category, between 0 and 1; a
	// category left out scores 0.
	Scores map[string]float64
}
