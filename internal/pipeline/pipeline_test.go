package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/models"
)

func TestSettersRestoreDefaults(t *testing.T) {
	t.Parallel()
	c := pipeline.Defaults()
	c.SetMaxBytes(10)
	require.Equal(t, int64(10), c.MaxBytes)
	c.SetMaxBytes(0)
	require.Equal(t, httpjson.DefaultTextMaxBytes, c.MaxBytes)
	c.SetClock(func() time.Time { return time.Unix(7, 0) })
	require.Equal(t, int64(7), c.Now().Unix())
	c.SetClock(nil)
	require.NotEqual(t, int64(7), c.Now().Unix())
	c.SetValidator(nil)
	c.Finish()
	require.Nil(t, c.Validate, "no validator but one given: the handlers check their rules in plain Go")
	require.Panics(t, func() { endpoint.WithKeepAlive(-time.Second) })
}

func TestHook(t *testing.T) {
	t.Parallel()
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want apierrors.Code // the code the hook sees; "" for no call
	}{
		{"an API error", context.Background(), apierrors.InvalidRequest("model", "bad"), apierrors.CodeInvalidRequest},
		{"any other error is a 500", context.Background(), errors.New("boom"), apierrors.CodeInternal},
		{"the client has gone", gone, apierrors.InvalidRequest("model", "bad"), ""},
		{"a bare cancellation", context.Background(), fmt.Errorf("read: %w", context.Canceled), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got apierrors.Code
			c := pipeline.Defaults()
			c.ErrorHook = func(_ *http.Request, e *apierrors.Error) { got = e.Code }
			c.Finish()
			w := httptest.NewRecorder()
			c.Fail(w, httptest.NewRequestWithContext(tc.ctx, http.MethodPost, "/", nil), tc.err)
			if tc.want == "" {
				require.Empty(t, got)
				return
			}
			require.Equal(t, tc.want, got)
		})
	}
}

func TestReserveWithoutKeyLogsNothing(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	c := pipeline.Defaults()
	c.SetLogger(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})))
	rsv, err := c.Reserve(context.Background(), &models.Model{ID: "m"}, 12)
	require.NoError(t, err)
	require.Nil(t, rsv)
	c.Settle(context.Background(), rsv, pipeline.Usage{Input: 5, Output: 7})
	require.Empty(t, log.String(), "a request without an API key has nothing to charge")
}

func TestEstimate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		prompt         int64
		choices, limit int
		model          *models.Model
		want           int64
	}{
		{name: "RequestCap", prompt: 10, choices: 1, limit: 50, want: 60},
		{name: "RequestCapPerChoice", prompt: 10, choices: 3, limit: 50, model: &models.Model{OutputTokenLimit: 9}, want: 160},
		{name: "ModelCap", prompt: 10, choices: 2, model: &models.Model{OutputTokenLimit: 100}, want: 210},
		{name: "DefaultCap", prompt: 1, choices: 0, want: 1 + pipeline.DefaultOutputReserve},
		// Caps that would overflow an int64 saturate: 4 × 2⁶² wrapped
		// to 0, and 2⁶³−1 plus a prompt to a negative amount.
		{name: "ProductSaturates", prompt: 10, choices: 4, limit: 1 << 62, want: math.MaxInt64},
		{name: "SumSaturates", prompt: 10, choices: 1, limit: math.MaxInt64, want: math.MaxInt64},
		{name: "PromptSaturates", prompt: math.MaxInt64, choices: 1, limit: 1, want: math.MaxInt64},
		{name: "LargestCapOfLargestN", prompt: 0, choices: endpoint.MaxChoices, limit: endpoint.MaxOutputTokens, want: endpoint.MaxChoices * math.MaxInt32},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, pipeline.Estimate(tc.prompt, tc.choices, tc.limit, tc.model))
		})
	}
	require.Equal(t, int64(0), pipeline.PromptTokens(0))
	require.Equal(t, int64(1), pipeline.PromptTokens(1))
	require.Equal(t, int64(2), pipeline.PromptTokens(8))
	require.Equal(t, int64(3), pipeline.PromptTokens(9))
}

func TestUsageNeverOverflows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		u    pipeline.Usage
		want int64
	}{
		{"Sum", pipeline.Usage{Input: 3, Output: 4}, 7},
		{"NegativeCountsAsZero", pipeline.Usage{Input: -5, Output: 4}, 4},
		{"Saturates", pipeline.Usage{Input: math.MaxInt64, Output: math.MaxInt64}, math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, tc.u.Total())
		})
	}
	var w pipeline.Written
	w.Reported()
	require.Equal(t, pipeline.Usage{Input: 0, Output: pipeline.MaxTokens}, w.Usage(pipeline.Usage{Input: -5, Output: math.MaxInt64}, 1),
		"a backend's counts are taken from 0 to MaxTokens")
}

func TestUsageClamped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		u, want pipeline.Usage
	}{
		{"AsItIs", pipeline.Usage{Input: 100, Output: 50, Cached: 60, CacheWrite: 30, Reasoning: 20},
			pipeline.Usage{Input: 100, Output: 50, Cached: 60, CacheWrite: 30, Reasoning: 20}},
		{"CachedAtMostInput", pipeline.Usage{Input: 10, Output: 5, Cached: 60, CacheWrite: 30},
			pipeline.Usage{Input: 10, Output: 5, Cached: 10}},
		{"CacheWriteAtMostTheRest", pipeline.Usage{Input: 10, Cached: 4, CacheWrite: 30},
			pipeline.Usage{Input: 10, Cached: 4, CacheWrite: 6}},
		{"ReasoningAtMostOutput", pipeline.Usage{Input: 1, Output: 5, Reasoning: 9},
			pipeline.Usage{Input: 1, Output: 5, Reasoning: 5}},
		{"Negative", pipeline.Usage{Input: -1, Output: -1, Cached: -1, CacheWrite: -1, Reasoning: -1}, pipeline.Usage{}},
		{"Large", pipeline.Usage{Input: math.MaxInt64, Output: math.MaxInt64, Cached: math.MaxInt64, Reasoning: math.MaxInt64},
			pipeline.Usage{Input: pipeline.MaxTokens, Output: pipeline.MaxTokens, Cached: pipeline.MaxTokens, Reasoning: pipeline.MaxTokens}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, tc.u.Clamped())
		})
	}
}

func TestWrittenUsage(t *testing.T) {
	t.Parallel()
	var w pipeline.Written
	require.Equal(t, pipeline.Usage{}, w.Usage(pipeline.Usage{Input: 90, Output: 9}, 5), "nothing reported, nothing written: nothing charged")
	w.Add(10)
	require.Equal(t, pipeline.Usage{Input: 5, Output: 3}, w.Usage(pipeline.Usage{Input: 90, Output: 9}, 5), "no usage reported: the prompt estimate and a quarter of the output bytes")
	w.Reported()
	require.Equal(t, pipeline.Usage{Input: 90, Output: 9}, w.Usage(pipeline.Usage{Input: 90, Output: 9}, 5), "the usage reported")
}
