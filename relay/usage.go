package relay

import (
	"context"
	"log/slog"
	"math"

	"github.com/gatewaykit/gatewaykit/chat"
	textendpoint "github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/responses"
)

// The token counts that an upstream reports are taken from 0 to
// endpoint.MaxOutputTokens, as the handlers take any backend's: an
// upstream that claims 2⁶³−1 tokens, or a negative count, neither makes
// its request free (a total that overflowed negative) nor leaves its
// reservation held (a settlement refused). A claim out of that range is
// logged at warn level, with the model and the upstream's name (never its
// key), so that an operator sees which upstream miscounts.

// inRange reports whether n is a token count that the relay takes as
// it is.
func inRange(n int64) bool { return n >= 0 && n <= textendpoint.MaxTokens }

// addInts returns a + b, saturating at the bounds of int rather than
// wrapping, for the sums of an upstream's counts that the relay makes
// before checking them.
func addInts(a, b int) int {
	switch {
	case b > 0 && a > math.MaxInt-b:
		return math.MaxInt
	case b < 0 && a < math.MinInt-b:
		return math.MinInt
	}
	return a + b
}

// logClaim logs the token counts that upstream u reported, if any is
// out of range.
func (r *Relay) logClaim(ctx context.Context, u *Upstream, counts ...slog.Attr) {
	for _, c := range counts {
		if !inRange(c.Value.Int64()) {
			r.logger.LogAttrs(ctx, slog.LevelWarn, "relay: upstream reported token counts out of range; taking them from 0 to the gateway's largest",
				slog.String("model", u.Model), slog.String("upstream", u.Name), slog.Any("usage", slog.GroupValue(counts...)))
			return
		}
	}
}

// chatUsage takes the chat usage cu that upstream u reported as the
// handlers do (chat.Usage.Normalized) if a count is out of range, and
// logs the claim; a usage in range is left as it is.
func (r *Relay) chatUsage(ctx context.Context, u *Upstream, cu *chat.Usage) {
	if cu == nil || inRange(int64(cu.PromptTokens)) && inRange(int64(cu.CompletionTokens)) && detailsInRange(cu) {
		return // the hot path: a running estimate, or a sane count
	}
	attrs := []slog.Attr{slog.Int("prompt_tokens", cu.PromptTokens), slog.Int("completion_tokens", cu.CompletionTokens)}
	if d := cu.PromptTokensDetails; d != nil {
		attrs = append(attrs, slog.Int("cached_tokens", d.CachedTokens), slog.Int("prompt_audio_tokens", d.AudioTokens), slog.Int("cache_write_tokens", d.CacheWriteTokens))
	}
	if d := cu.CompletionTokensDetails; d != nil {
		attrs = append(attrs, slog.Int("reasoning_tokens", d.ReasoningTokens), slog.Int("completion_audio_tokens", d.AudioTokens),
			slog.Int("accepted_prediction_tokens", d.AcceptedPredictionTokens), slog.Int("rejected_prediction_tokens", d.RejectedPredictionTokens))
	}
	r.logClaim(ctx, u, attrs...)
	*cu = cu.Normalized()
}

// detailsInRange reports whether every detail count of cu is in range.
func detailsInRange(cu *chat.Usage) bool {
	if d := cu.PromptTokensDetails; d != nil &&
		!(inRange(int64(d.CachedTokens)) && inRange(int64(d.AudioTokens)) && inRange(int64(d.CacheWriteTokens))) {
		return false
	}
	d := cu.CompletionTokensDetails
	return d == nil || inRange(int64(d.ReasoningTokens)) && inRange(int64(d.AudioTokens)) &&
		inRange(int64(d.AcceptedPredictionTokens)) && inRange(int64(d.RejectedPredictionTokens))
}

// responsesUsage is chatUsage for a responses usage.
func (r *Relay) responsesUsage(ctx context.Context, u *Upstream, ru *responses.Usage) {
	if ru == nil || inRange(int64(ru.InputTokens)) && inRange(int64(ru.OutputTokens)) &&
		inRange(int64(ru.InputTokensDetails.CachedTokens)) && inRange(int64(ru.InputTokensDetails.CacheWriteTokens)) &&
		inRange(int64(ru.OutputTokensDetails.ReasoningTokens)) {
		return
	}
	r.logClaim(ctx, u, slog.Int("input_tokens", ru.InputTokens), slog.Int("output_tokens", ru.OutputTokens),
		slog.Int("cached_tokens", ru.InputTokensDetails.CachedTokens), slog.Int("cache_write_tokens", ru.InputTokensDetails.CacheWriteTokens),
		slog.Int("reasoning_tokens", ru.OutputTokensDetails.ReasoningTokens))
	*ru = ru.Normalized()
}
