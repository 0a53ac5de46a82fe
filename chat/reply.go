package chat

import "github.com/gatewaykit/gatewaykit/endpoint"

// The object names of chat replies.
const (
	ObjectCompletion = "chat.completion"
	ObjectChunk      = "chat.completion.chunk"
)

// IDPrefix starts the id of every chat completion.
const IDPrefix = "chatcmpl-"

// FinishReason says why a choice ended (spec §2.1): [endpoint.FinishReason].
type FinishReason = endpoint.FinishReason

// The finish reasons of the spec.
const (
	FinishStop          = endpoint.FinishStop
	FinishLength        = endpoint.FinishLength
	FinishToolCalls     = endpoint.FinishToolCalls
	FinishContentFilter = endpoint.FinishContentFilter
)

// Completion is the non-streaming reply (spec §2.1).
type Completion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	Usage   Usage    `json:"usage"`
}

// Choice is one choice of a [Completion].
type Choice struct {
	Index        int           `json:"index"`
	Message      ChoiceMessage `json:"message"`
	FinishReason FinishReason  `json:"finish_reason"`
}

// ChoiceMessage is the assistant message of a [Choice]. Content is null
// when the choice only calls tools.
type ChoiceMessage struct {
	Role             string     `json:"role"`
	Content          *string    `json:"content"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
}

// Usage is the token usage of a reply (spec §2.6): [endpoint.Usage].
type Usage = endpoint.Usage

// CompletionTokensDetails breaks completion tokens down:
// [endpoint.CompletionTokensDetails].
type CompletionTokensDetails = endpoint.CompletionTokensDetails

// PromptTokensDetails breaks prompt tokens down:
// [endpoint.PromptTokensDetails].
type PromptTokensDetails = endpoint.PromptTokensDetails

// Chunk is one event of a streamed reply (spec §2.2). Each chunk carries
// one choice, except the usage chunk, whose Choices is empty.
type Chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []ChunkChoice `json:"choices"`
	Usage   *Usage        `json:"usage,omitempty"`
}

// ChunkChoice is the choice of a [Chunk]. FinishReason is null except in
// the choice's final chunk.
type ChunkChoice struct {
	Index        int           `json:"index"`
	Delta        ChunkDelta    `json:"delta"`
	FinishReason *FinishReason `json:"finish_reason"`
}

// ChunkDelta is the increment of a [ChunkChoice]. Role is set in the
// first chunk of each choice only.
type ChunkDelta struct {
	Role             string          `json:"role,omitempty"`
	Content          string          `json:"content,omitempty"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCallChunk `json:"tool_calls,omitempty"`
}

// ToolCallChunk is a fragment of a streamed tool call, as OpenAI sends it:
// the first fragment of a call carries its index, id, type and function
// name (and empty arguments); later ones carry the same index and a piece
// of the arguments.
type ToolCallChunk struct {
	Index    int               `json:"index"`
	ID       string            `json:"id,omitempty"`
	Type     string            `json:"type,omitempty"`
	Function FunctionCallChunk `json:"function"`
}

// FunctionCallChunk is the function part of a [ToolCallChunk].
type FunctionCallChunk struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}
