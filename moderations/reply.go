package moderations

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
)

// Reply is the JSON reply of the handler.
type Reply struct {
	ID      string        `json:"id"`
	Model   string        `json:"model"`
	Results []ReplyResult `json:"results"`
}

// ReplyResult is one result of a [Reply]: every category, in the order
// of [Categories], in each of its three objects.
type ReplyResult struct {
	Flagged                   bool              `json:"flagged"`
	Categories                Ordered[bool]     `json:"categories"`
	CategoryScores            Ordered[float64]  `json:"category_scores"`
	CategoryAppliedInputTypes Ordered[[]string] `json:"category_applied_input_types"`
}

// Ordered is a JSON object with one member per category, written in the
// order of [Categories].
type Ordered[V any] []V

// MarshalJSON writes o as an object keyed by the categories.
func (o Ordered[V]) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range Categories() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(c))
		b.WriteByte(':')
		v, err := json.Marshal(o[i])
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// NewReply returns the reply to in of res, whose results must match in's.
func NewReply(id, model string, in *Input, res *Result) *Reply {
	types := []string{"text"}
	if in.Parts != nil {
		hasText := slices.ContainsFunc(in.Parts, func(p Part) bool { return p.Type == "text" })
		hasImage := slices.ContainsFunc(in.Parts, func(p Part) bool { return p.Type == "image_url" })
		types = types[:0]
		if hasText {
			types = append(types, "text")
		}
		if hasImage {
			types = append(types, "image")
		}
	}
	r := &Reply{ID: id, Model: model, Results: make([]ReplyResult, len(res.Results))}
	cats := Categories()
	for i, c := range res.Results {
		out := ReplyResult{
			Flagged:                   len(c.Flagged) > 0,
			Categories:                make(Ordered[bool], len(cats)),
			CategoryScores:            make(Ordered[float64], len(cats)),
			CategoryAppliedInputTypes: make(Ordered[[]string], len(cats)),
		}
		for j, cat := range cats {
			out.Categories[j] = slices.Contains(c.Flagged, cat)
			out.CategoryScores[j] = c.Scores[cat]
			applied := []string{}
			for _, t := range types {
				if t == "text" || ImageCategories(cat) {
					applied = append(applied, t)
				}
			}
			out.CategoryAppliedInputTypes[j] = applied
		}
		r.Results[i] = out
	}
	return r
}
