package rerank

import "strings"

// PromptText returns r's query, then its documents, each on a line of its
// own: the text that interceptors see as the prompt (endpoint.Prompter).
func (r *Request) PromptText() string {
	return strings.Join(append([]string{r.Query}, r.Documents...), "\n")
}
