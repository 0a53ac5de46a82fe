package demo

import (
	"context"
	"slices"
	"strings"

	"github.com/gatewaykit/gatewaykit/moderations"
)

// ModerationTriggers maps each trigger word of the demo moderation model
// to the category it flags (see the package documentation, Moderations).
// A subcategory's word ("harassment/threatening") flags its parent
// ("harassment") too.
func ModerationTriggers() map[string]string {
	return map[string]string{
		"idiot":       moderations.Harassment,
		"threaten":    moderations.HarassmentThreatening,
		"hate":        moderations.Hate,
		"exterminate": moderations.HateThreatening,
		"steal":       moderations.Illicit,
		"bomb":        moderations.IllicitViolent,
		"suicide":     moderations.SelfHarm,
		"overdose":    moderations.SelfHarmInstructions,
		"hopeless":    moderations.SelfHarmIntent,
		"explicit":    moderations.Sexual,
		"underage":    moderations.SexualMinors,
		"kill":        moderations.Violence,
		"gore":        moderations.ViolenceGraphic,
	}
}

// ModerationBackend is the demo's moderations.Backend. Create it with
// [NewModerationBackend]; it is safe for concurrent use.
type ModerationBackend struct {
	triggers map[string]string
}

// NewModerationBackend returns the demo moderation backend.
func NewModerationBackend() *ModerationBackend {
	return &ModerationBackend{triggers: ModerationTriggers()}
}

// Moderate flags the categories of the trigger words of each input.
func (b *ModerationBackend) Moderate(ctx context.Context, p *moderations.Params) (*moderations.Result, error) {
	in := p.Request.Input
	res := &moderations.Result{}
	if in.Parts != nil {
		var texts []string
		for _, part := range in.Parts {
			if part.Type == "text" {
				texts = append(texts, part.Text)
			} else {
				res.InputTokens += ImageTokens
			}
		}
		text := strings.Join(texts, "\n")
		res.InputTokens += CountTokens(text)
		res.Results = append(res.Results, b.classify(text))
		return res, ctx.Err()
	}
	for _, s := range in.Texts {
		res.InputTokens += CountTokens(s)
		res.Results = append(res.Results, b.classify(s))
	}
	return res, ctx.Err()
}

// classify scores every category of text: 0.97 for a category whose
// trigger word it holds, 0.9 for the parent of one, and otherwise a small
// score (below 0.01) derived from the text.
func (b *ModerationBackend) classify(text string) moderations.Classification {
	c := moderations.Classification{Scores: map[string]float64{}}
	for _, w := range words(text) {
		cat, ok := b.triggers[w]
		if !ok {
			continue
		}
		c.Scores[cat] = 0.97
		if parent, _, sub := strings.Cut(cat, "/"); sub && c.Scores[parent] < 0.9 {
			c.Scores[parent] = 0.9
		}
	}
	for _, cat := range moderations.Categories() {
		if c.Scores[cat] >= 0.5 {
			c.Flagged = append(c.Flagged, cat)
			continue
		}
		c.Scores[cat] = float64(hash64(cat+"\x00"+text)%1000) / 1e5
	}
	slices.Sort(c.Flagged)
	return c
}
