package relay

import (
	"bytes"

	"github.com/gatewaykit/gatewaykit/gemini"
	"github.com/gatewaykit/gatewaykit/internal/jsonext"
)

// decodeGeminiEvent decodes the data of a Gemini-format stream event into
// ev, which must be zero, as json.Unmarshal would, without reflection,
// for the usual shape of an event: candidates whose content holds text
// parts (thought or not) and a role, with a finishReason and an index;
// the usageMetadata counts; modelVersion and responseId. Members it does
// not read are skipped. For anything else (a function call, a thought
// signature or any other part member, an error or promptFeedback member,
// a key that only matches case-insensitively, a duplicate member, invalid
// JSON) it reports false, and the caller decodes data with json.Unmarshal
// into a zero ev. FuzzDecodeGeminiEvent checks that the two agree.
//
// The strings of ev may share data's memory, which must not be modified
// while ev is in use (the reader hands over the bytes of an immutable
// string).
func decodeGeminiEvent(data []byte, ev *geminiEvent) bool {
	s := scanner{jsonext.Cursor{Data: data}}
	var seenC, seenU, seenM, seenR bool
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "candidates":
			if !once(&seenC) {
				return false
			}
			if s.Null() {
				return true
			}
			ev.Candidates = []gemini.Candidate{}
			return s.Array(func() bool {
				ev.Candidates = append(ev.Candidates, gemini.Candidate{})
				return s.geminiCandidate(&ev.Candidates[len(ev.Candidates)-1])
			})
		case "usageMetadata":
			return once(&seenU) && s.geminiUsage(&ev.UsageMetadata)
		case "modelVersion":
			return once(&seenM) && s.stringOrNull(&ev.ModelVersion)
		case "responseId":
			return once(&seenR) && s.stringOrNull(&ev.ResponseID)
		}
		return !foldsTo(key, "candidates", "usageMetadata", "modelVersion", "responseId", "promptFeedback", "error") && s.skip()
	}) && s.End()
}

func (s *scanner) geminiCandidate(c *gemini.Candidate) bool {
	var seenC, seenF, seenI bool
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "content":
			if !once(&seenC) {
				return false
			}
			if s.Null() {
				return true
			}
			c.Content = &gemini.Content{}
			return s.geminiContent(c.Content)
		case "finishReason":
			return once(&seenF) && s.stringOrNull(&c.FinishReason)
		case "index":
			return once(&seenI) && s.int(&c.Index)
		}
		return !foldsTo(key, "content", "finishReason", "index") && s.skip()
	})
}

func (s *scanner) geminiContent(c *gemini.Content) bool {
	var seenP, seenR bool
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "parts":
			if !once(&seenP) {
				return false
			}
			if s.Null() {
				return true
			}
			c.Parts = []gemini.Part{}
			return s.Array(func() bool {
				c.Parts = append(c.Parts, gemini.Part{})
				return s.geminiTextPart(&c.Parts[len(c.Parts)-1])
			})
		case "role":
			return once(&seenR) && s.stringOrNull(&c.Role)
		}
		return !foldsTo(key, "parts", "role") && s.skip()
	})
}

// geminiTextPart reads a part of text and thought only.
func (s *scanner) geminiTextPart(p *gemini.Part) bool {
	var seenT, seenTh bool
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "text":
			return once(&seenT) && s.stringOrNull(&p.Text)
		case "thought":
			return once(&seenTh) && s.boolOrNull(&p.Thought)
		}
		return false // any other member: encoding/json
	})
}

func (s *scanner) geminiUsage(dst **gemini.UsageMetadata) bool {
	if s.Null() {
		return true
	}
	u := &gemini.UsageMetadata{}
	*dst = u
	var seen [5]bool
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "cachedContentTokenCount":
			return once(&seen[4]) && s.int(&u.CachedContentTokenCount)
		case "promptTokenCount":
			return once(&seen[0]) && s.int(&u.PromptTokenCount)
		case "candidatesTokenCount":
			return once(&seen[1]) && s.int(&u.CandidatesTokenCount)
		case "totalTokenCount":
			return once(&seen[2]) && s.int(&u.TotalTokenCount)
		case "thoughtsTokenCount":
			return once(&seen[3]) && s.int(&u.ThoughtsTokenCount)
		}
		return !foldsTo(key, "promptTokenCount", "candidatesTokenCount", "totalTokenCount", "thoughtsTokenCount", "cachedContentTokenCount") && s.skip()
	})
}

var (
	trueLiteral  = []byte("true")
	falseLiteral = []byte("false")
)

// boolOrNull reads true, false or null (which leaves dst as it is).
func (s *scanner) boolOrNull(dst *bool) bool {
	if s.Null() {
		return true
	}
	s.Space()
	rest := s.Data[s.Pos:]
	switch {
	case bytes.HasPrefix(rest, trueLiteral):
		*dst = true
		s.Pos += len(trueLiteral)
	case bytes.HasPrefix(rest, falseLiteral):
		*dst = false
		s.Pos += len(falseLiteral)
	default:
		return false
	}
	return true
}
