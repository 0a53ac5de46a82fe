package endpoint

import (
	"encoding/json"
	"net/url"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/jsonext"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
)

// MaxChoices is the largest number of choices a request may ask for (n,
// or n times the prompts of a completions request), as in OpenAI's API.
const MaxChoices = 128

// MaxStop is the largest number of stop sequences a request may send.
const MaxStop = 4

// MaxOutputTokens is the largest output cap a request may set
// (max_tokens, max_completion_tokens, max_output_tokens, the messages
// format's max_tokens, the Gemini style's maxOutputTokens): 2³¹−1, the
// largest that the upstream APIs take (Google's field is a 32-bit
// integer). A larger cap is refused with a 400 naming the field, so that
// no request reserves more than its choices times this (see package auth,
// The bound). It is also the largest token count that the handlers take
// from a backend's usage: a count above it is taken as MaxOutputTokens,
// and a negative one as 0.
const MaxOutputTokens = pipeline.MaxTokens

// FinishReason says why a choice ended (spec §2.1).
type FinishReason string

// The finish reasons of the spec.
const (
	// FinishStop is a natural end or a stop sequence hit.
	FinishStop FinishReason = "stop"
	// FinishLength is the token cap (max_tokens) reached.
	FinishLength FinishReason = "length"
	// FinishToolCalls is a reply that calls tools.
	FinishToolCalls FinishReason = "tool_calls"
	// FinishContentFilter is a reply blocked by a safety policy.
	FinishContentFilter FinishReason = "content_filter"
)

// Usage is the token usage of a chat or completions reply (spec §2.6).
// TotalTokens is always PromptTokens + CompletionTokens.
//
// The details break the counts down as the backend reports them, and are
// sent only when it reports them (nil is absent on the wire):
// PromptTokensDetails counts the prompt tokens read from the provider's
// prompt cache (cached_tokens), written to it (cache_write_tokens,
// reported by providers that charge cache writes, such as Anthropic's) and
// the audio tokens; CompletionTokensDetails counts the reasoning, audio and
// predicted-output tokens. The detail counts are parts of PromptTokens and
// CompletionTokens, never added to them.
type Usage struct {
	PromptTokens            int                      `json:"prompt_tokens"`
	CompletionTokens        int                      `json:"completion_tokens"`
	TotalTokens             int                      `json:"total_tokens"`
	PromptTokensDetails     *PromptTokensDetails     `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails *CompletionTokensDetails `json:"completion_tokens_details,omitempty"`
}

// Normalized returns u as the handlers send and charge it, whatever a
// backend reported: each count from 0 to [MaxOutputTokens] (a negative
// count as 0, a larger one as MaxOutputTokens), each detail at most the
// count that it is part of (the cached and cache-write tokens together at
// most the prompt tokens), and TotalTokens their sum, so that a client
// never sees a negative or overflowed total. It does not modify u.
func (u Usage) Normalized() Usage {
	u.PromptTokens, u.CompletionTokens = pipeline.Count(u.PromptTokens), pipeline.Count(u.CompletionTokens)
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	if d := u.PromptTokensDetails; d != nil {
		n := PromptTokensDetails{CachedTokens: min(pipeline.Count(d.CachedTokens), u.PromptTokens)}
		n.CacheWriteTokens = min(pipeline.Count(d.CacheWriteTokens), u.PromptTokens-n.CachedTokens)
		n.AudioTokens = min(pipeline.Count(d.AudioTokens), u.PromptTokens)
		u.PromptTokensDetails = &n
	}
	if d := u.CompletionTokensDetails; d != nil {
		c := u.CompletionTokens
		u.CompletionTokensDetails = &CompletionTokensDetails{
			ReasoningTokens:          min(pipeline.Count(d.ReasoningTokens), c),
			AudioTokens:              min(pipeline.Count(d.AudioTokens), c),
			AcceptedPredictionTokens: min(pipeline.Count(d.AcceptedPredictionTokens), c),
			RejectedPredictionTokens: min(pipeline.Count(d.RejectedPredictionTokens), c),
		}
	}
	return u
}

// Cached returns the prompt tokens read from the prompt cache, 0 without
// PromptTokensDetails.
func (u *Usage) Cached() int {
	if u.PromptTokensDetails == nil {
		return 0
	}
	return u.PromptTokensDetails.CachedTokens
}

// CacheWrite returns the prompt tokens written to the prompt cache, 0
// without PromptTokensDetails.
func (u *Usage) CacheWrite() int {
	if u.PromptTokensDetails == nil {
		return 0
	}
	return u.PromptTokensDetails.CacheWriteTokens
}

// Reasoning returns the reasoning tokens, 0 without
// CompletionTokensDetails.
func (u *Usage) Reasoning() int {
	if u.CompletionTokensDetails == nil {
		return 0
	}
	return u.CompletionTokensDetails.ReasoningTokens
}

// PromptTokensDetails breaks prompt tokens down, as OpenAI's
// prompt_tokens_details: CachedTokens were read from the provider's
// prompt cache, AudioTokens were audio. CacheWriteTokens (cache_write_tokens,
// sent only when not 0) were written to the prompt cache, for providers
// that charge cache writes (Anthropic's cache_creation_input_tokens).
type PromptTokensDetails struct {
	CachedTokens     int `json:"cached_tokens"`
	AudioTokens      int `json:"audio_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
}

// CompletionTokensDetails breaks completion tokens down, as OpenAI's
// completion_tokens_details: the reasoning tokens of reasoning models,
// audio tokens, and the tokens of a predicted output (prediction) that
// appeared in the completion (accepted) or did not (rejected, still
// billed as completion tokens). The counts other than ReasoningTokens are
// sent only when not 0.
type CompletionTokensDetails struct {
	ReasoningTokens          int `json:"reasoning_tokens"`
	AudioTokens              int `json:"audio_tokens,omitempty"`
	AcceptedPredictionTokens int `json:"accepted_prediction_tokens,omitempty"`
	RejectedPredictionTokens int `json:"rejected_prediction_tokens,omitempty"`
}

// StreamOptions are the options of a streamed reply.
type StreamOptions struct {
	IncludeUsage bool                       `json:"include_usage,omitempty"`
	Extra        map[string]json.RawMessage `json:"-"`
}

var streamOptionsJSON = jsonext.NewCodec[StreamOptions]()

// UnmarshalJSON decodes stream options, keeping unmodelled fields in Extra.
func (o *StreamOptions) UnmarshalJSON(b []byte) error { return streamOptionsJSON.Decode(b, o) }

// MarshalJSON encodes stream options with their Extra fields.
func (o StreamOptions) MarshalJSON() ([]byte, error) { return streamOptionsJSON.Encode(&o) }

// Stop is the stop sequences of a request, sent as a string or an array
// of strings; a string decodes to one element. It encodes as an array.
// Chat and completions requests use the same type.
type Stop []string

// UnmarshalJSON decodes a string, an array of strings or null. Another
// value is a 400 with param "stop".
func (s *Stop) UnmarshalJSON(b []byte) error {
	if !jsonext.Strings(b, (*[]string)(s)) {
		return apierrors.InvalidRequest("stop", "stop must be a string or an array of strings")
	}
	return nil
}

// ValidImageURL reports whether u is an absolute http or https URL with a
// host, or a data URI of the form data:image/<type>;base64,<data> with
// some data. The data itself is not decoded. Chat's image_url parts and
// the responses input_image parts are checked with it.
func ValidImageURL(u string) bool {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		meta, data, ok := strings.Cut(rest, ",")
		return ok && data != "" && strings.HasPrefix(meta, "image/") && strings.HasSuffix(meta, ";base64")
	}
	pu, err := url.Parse(u)
	return err == nil && (pu.Scheme == "http" || pu.Scheme == "https") && pu.Host != ""
}
