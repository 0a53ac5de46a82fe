package audio

// PromptText returns the text to speak: the text that interceptors see
// as the prompt (endpoint.Prompter).
func (r *SpeechRequest) PromptText() string { return r.Input }

// PromptText returns the prompt that guides the transcription's style:
// the text that interceptors see as the prompt (endpoint.Prompter).
func (r *TranscriptionRequest) PromptText() string { return r.Prompt }
