package embeddings

import "strings"

// PromptText returns the texts of r's input, each on a line of its own
// ("" for token arrays): the text that interceptors see as the prompt
// (endpoint.Prompter).
func (r *Request) PromptText() string { return strings.Join(r.Input.Texts, "\n") }
