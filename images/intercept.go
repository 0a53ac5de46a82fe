package images

// PromptText returns r's prompt: the text that interceptors see as the
// prompt (endpoint.Prompter).
func (r *Request) PromptText() string { return r.Prompt }
