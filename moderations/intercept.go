package moderations

import "strings"

// PromptText returns the texts of r's input (its strings, or the text of
// its text parts), each on a line of its own: the text that interceptors
// see as the prompt (endpoint.Prompter).
func (r *Request) PromptText() string {
	if r.Input.Parts == nil {
		return strings.Join(r.Input.Texts, "\n")
	}
	var texts []string
	for _, p := range r.Input.Parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}
