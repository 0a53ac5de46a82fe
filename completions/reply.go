package completions

import "github.com/gatewaykit/gatewaykit/endpoint"

// ObjectCompletion is the object name of replies and chunks.
const ObjectCompletion = "text_completion"

// IDPrefix starts the id of every completion.
const IDPrefix = "cmpl-"

// Completion is the non-streaming reply (spec §2.3).
type Completion struct {
	ID      string         `json:"id"`
	Object  string         `json:"object"`
	Created int64          `json:"created"`
	Model   string         `json:"model"`
	Choices []Choice       `json:"choices"`
	Usage   endpoint.Usage `json:"usage"`
}

// Choice is one choice of a [Completion].
type Choice struct {
	Index        int                   `json:"index"`
	Text         string                `json:"text"`
	FinishReason endpoint.FinishReason `json:"finish_reason"`
}

// Chunk is one event of a streamed reply (spec §2.3, §4.2). It has no
// model field, as the spec says. Each chunk carries one choice, except the
// usage chunk (stream_options.include_usage), whose Choices is empty.
type Chunk struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"`
	Created int64           `json:"created"`
	Choices []ChunkChoice   `json:"choices"`
	Usage   *endpoint.Usage `json:"usage,omitempty"`
}

// ChunkChoice is the choice of a [Chunk]: a fragment of the text.
// FinishReason is null except in the choice's final chunk.
type ChunkChoice struct {
	Index        int                    `json:"index"`
	Text         string                 `json:"text"`
	FinishReason *endpoint.FinishReason `json:"finish_reason"`
}
