// Package relaytypes holds copies of the unexported types that package
// relay's hand decoders fill, so that module bench (bench/codecs) can
// decode the same documents (package codecdocs) into the same types with
// json v2. relay's TestRelayTypesAreCopies holds each copy to the shape
// of its original: the same fields, names, tags and field types.
package relaytypes

import (
	"encoding/json"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/gemini"
	"github.com/gatewaykit/gatewaykit/responses"
)

// ChatChunk is relay's chatChunk.
type ChatChunk struct {
	Choices []ChatChunkChoice `json:"choices"`
	Usage   *chat.Usage       `json:"usage"`
	Error   json.RawMessage   `json:"error"`
}

// ChatChunkChoice is relay's chatChunkChoice.
type ChatChunkChoice struct {
	Index int `json:"index"`
	Delta struct {
		Role             string          `json:"role"`
		Content          string          `json:"content"`
		ReasoningContent string          `json:"reasoning_content"`
		Reasoning        string          `json:"reasoning"`
		ToolCalls        []ChunkToolCall `json:"tool_calls"`
	} `json:"delta"`
	FinishReason chat.FinishReason `json:"finish_reason"`
}

// ChunkToolCall is relay's chunkToolCall.
type ChunkToolCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// ChatReply is relay's chatReply.
type ChatReply struct {
	Choices []ChatReplyChoice `json:"choices"`
	Usage   *chat.Usage       `json:"usage"`
}

// ChatReplyChoice is relay's chatReplyChoice.
type ChatReplyChoice struct {
	Index   int `json:"index"`
	Message struct {
		Content          *string         `json:"content"`
		ReasoningContent string          `json:"reasoning_content"`
		Reasoning        string          `json:"reasoning"`
		ToolCalls        []chat.ToolCall `json:"tool_calls"`
	} `json:"message"`
	FinishReason chat.FinishReason `json:"finish_reason"`
}

// CompletionsReply is relay's completionsReply.
type CompletionsReply struct {
	Choices []CompletionsChoice `json:"choices"`
	Usage   *chat.Usage         `json:"usage"`
	Error   json.RawMessage     `json:"error"`
}

// CompletionsChoice is relay's completionsChoice.
type CompletionsChoice struct {
	Index        int               `json:"index"`
	Text         string            `json:"text"`
	FinishReason chat.FinishReason `json:"finish_reason"`
}

// ResponsesEvent is relay's responsesEvent.
type ResponsesEvent struct {
	Type         string `json:"type"`
	OutputIndex  int    `json:"output_index"`
	SummaryIndex int    `json:"summary_index"`
	Delta        string `json:"delta"`
	Item         *struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"item"`
	Response *ResponsesReply `json:"response"`
}

// ResponsesReply is relay's responsesReply.
type ResponsesReply struct {
	Status string `json:"status"`
	Output []struct {
		Type             string     `json:"type"`
		ID               string     `json:"id"`
		CallID           string     `json:"call_id"`
		Name             string     `json:"name"`
		Arguments        string     `json:"arguments"`
		Content          []TextPart `json:"content"`
		Summary          []TextPart `json:"summary"`
		EncryptedContent string     `json:"encrypted_content"`
	} `json:"output"`
	Usage             *responses.Usage `json:"usage"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error json.RawMessage `json:"error"`
}

// TextPart is relay's textPart.
type TextPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// GeminiEvent is relay's geminiEvent.
type GeminiEvent struct {
	gemini.Response
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	Error json.RawMessage `json:"error"`
}
