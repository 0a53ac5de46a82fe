package responses

import (
	"encoding/json"
	"strings"

	"github.com/gatewaykit/gatewaykit/internal/pipeline"
)

// Response is the response object (spec §2.4): the reply of POST
// /v1/responses, of GET /v1/responses/{id}, and the "response" of the
// lifecycle events of a stream.
//
// Every member but conversation (sent only when the request named one) is
// always sent, null when it does not apply, as OpenAI sends it: error is
// set only when Status is failed, incomplete_details only when it is
// incomplete, usage once the response has ended,
// completed_at only when it completed. instructions, temperature, top_p,
// max_output_tokens and previous_response_id echo the request (null when
// it did not set them); tools is [] and metadata {} when there are none,
// tool_choice "auto", parallel_tool_calls true and text
// {"format":{"type":"text"}} unless the request said otherwise.
type Response struct {
	ID                 string             `json:"id"`
	Object             string             `json:"object"`
	CreatedAt          int64              `json:"created_at"`
	Status             Status             `json:"status"`
	CompletedAt        *int64             `json:"completed_at"`
	Error              *ResponseError     `json:"error"`
	IncompleteDetails  *IncompleteDetails `json:"incomplete_details"`
	Instructions       *string            `json:"instructions"`
	MaxOutputTokens    *int               `json:"max_output_tokens"`
	Model              string             `json:"model"`
	Output             []OutputItem       `json:"output"`
	ParallelToolCalls  bool               `json:"parallel_tool_calls"`
	PreviousResponseID *string            `json:"previous_response_id"`
	Store              bool               `json:"store"`
	Temperature        *float64           `json:"temperature"`
	ToolChoice         ToolChoice         `json:"tool_choice"`
	Text               TextConfig         `json:"text"`
	Tools              []Tool             `json:"tools"`
	TopP               *float64           `json:"top_p"`
	Metadata           map[string]string  `json:"metadata"`
	Usage              *Usage             `json:"usage"`
	// Conversation is the conversation that the request named (see
	// [WithConversations]), to which the input and output items are
	// added. It and Background are the members sent only when set.
	Conversation *ConversationRef `json:"conversation,omitempty"`
	// Background is true for a response run in the background (see
	// [Background]); it is sent only then.
	Background *bool `json:"background,omitempty"`
}

// ResponseError is the error of a failed response: a machine-readable
// code (the code of the *apierrors.Error that failed it, such as
// "bad_gateway" or "internal_server_error") and the message the client
// may read.
type ResponseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// IncompleteDetails says why a response is incomplete: Reason is
// [ReasonMaxOutputTokens] or [ReasonContentFilter].
type IncompleteDetails struct {
	Reason string `json:"reason"`
}

// OutputItem is one output item of a [Response]: a message (Role and
// Content), a function call (CallID, Name and Arguments, a JSON string)
// or the reasoning of a reasoning model (Summary). It is encoded with the
// members of its type only.
type OutputItem struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Status Status `json:"status"`

	Role    string       `json:"role,omitempty"`
	Content []OutputText `json:"content,omitempty"`

	CallID    string `json:"call_id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`

	Summary []SummaryText `json:"summary,omitempty"`
	// EncryptedContent is a reasoning item's encrypted_content, sent
	// when set (see [Output]).
	EncryptedContent string `json:"encrypted_content,omitempty"`
}

// SummaryText is a part of the summary of a reasoning item:
// {"type":"summary_text","text"}.
type SummaryText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// MarshalJSON encodes the item with the members of its type.
func (it OutputItem) MarshalJSON() ([]byte, error) {
	return appendOutputItem(make([]byte, 0, 128+len(it.Arguments)), &it), nil
}

// Text returns the text of a message item: its parts' text, concatenated.
func (it *OutputItem) Text() string {
	if len(it.Content) == 1 {
		return it.Content[0].Text
	}
	var b strings.Builder
	for _, c := range it.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// OutputText is a content part of an output message: {"type":
// "output_text","text","annotations":[]}.
type OutputText struct {
	Type        string            `json:"type"`
	Text        string            `json:"text"`
	Annotations []json.RawMessage `json:"annotations"`
}

// Usage is the token usage of a response (spec §2.6). TotalTokens is
// always InputTokens + OutputTokens; the details are always sent (the
// SDKs expect them), with zeros where the backend reports nothing.
type Usage struct {
	InputTokens         int                 `json:"input_tokens"`
	InputTokensDetails  InputTokensDetails  `json:"input_tokens_details"`
	OutputTokens        int                 `json:"output_tokens"`
	OutputTokensDetails OutputTokensDetails `json:"output_tokens_details"`
	TotalTokens         int                 `json:"total_tokens"`
}

// Normalized returns u as the handler sends and charges it, whatever a
// backend reported: each count from 0 to endpoint.MaxOutputTokens (a
// negative count as 0, a larger one as endpoint.MaxOutputTokens), the
// cached and cache-write tokens together at most the input tokens and the
// reasoning tokens at most the output tokens, and TotalTokens their sum,
// so that a client never sees a negative or overflowed total.
func (u Usage) Normalized() Usage {
	u.InputTokens, u.OutputTokens = pipeline.Count(u.InputTokens), pipeline.Count(u.OutputTokens)
	u.InputTokensDetails.CachedTokens = min(pipeline.Count(u.InputTokensDetails.CachedTokens), u.InputTokens)
	u.InputTokensDetails.CacheWriteTokens = min(pipeline.Count(u.InputTokensDetails.CacheWriteTokens), u.InputTokens-u.InputTokensDetails.CachedTokens)
	u.OutputTokensDetails.ReasoningTokens = min(pipeline.Count(u.OutputTokensDetails.ReasoningTokens), u.OutputTokens)
	u.TotalTokens = u.InputTokens + u.OutputTokens
	return u
}

// charged returns the usage that u charges (u as it is: normalize it
// first): the cached input tokens and the reasoning tokens apart.
func (u *Usage) charged() pipeline.Usage {
	return pipeline.Usage{Input: int64(u.InputTokens), Output: int64(u.OutputTokens),
		Cached: int64(u.InputTokensDetails.CachedTokens), CacheWrite: int64(u.InputTokensDetails.CacheWriteTokens), Reasoning: int64(u.OutputTokensDetails.ReasoningTokens)}
}

// InputTokensDetails breaks input tokens down: CachedTokens were read
// from the provider's prompt cache. CacheWriteTokens (cache_write_tokens,
// sent only when not 0, as in chat's prompt_tokens_details) were written
// to it, for providers that charge cache writes (Anthropic's
// cache_creation_input_tokens, relayed through chat).
type InputTokensDetails struct {
	CachedTokens     int `json:"cached_tokens"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
}

// OutputTokensDetails breaks output tokens down: reasoning tokens count as
// output tokens.
type OutputTokensDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// CompactedResponse is the reply of POST /v1/responses/compact, as in
// OpenAI's API reference: every user message of the conversation, in
// order, then one compaction item (Type "compaction", ID and
// EncryptedContent set), which a later request sends back in its input in
// place of the conversation.
type CompactedResponse struct {
	ID        string           `json:"id"`
	Object    string           `json:"object"`
	CreatedAt int64            `json:"created_at"`
	Output    []CompactionItem `json:"output"`
	Usage     Usage            `json:"usage"`
}

// CompactionItem is an output item of a [CompactedResponse]: a user
// message {type, id, status, role, content} or the compaction item {type,
// id, encrypted_content}.
type CompactionItem struct {
	Type             string        `json:"type"`
	ID               string        `json:"id"`
	Status           Status        `json:"status,omitempty"`
	Role             string        `json:"role,omitempty"`
	Content          []ContentPart `json:"content,omitempty"`
	EncryptedContent string        `json:"encrypted_content,omitempty"`
}

// DeletedResponse is the reply of DELETE /v1/responses/{id}.
type DeletedResponse struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}
