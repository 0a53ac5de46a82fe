package videos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"

	"github.com/gatewaykit/gatewaykit/auth"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// msgQuota is the message of a creation refused for quota.
const msgQuota = "You exceeded the quota of this API key: what is left is reserved by requests and video tasks in flight. Please retry when they end, or check your plan and billing details."

// cost is what task t of model m costs (see [WithPricing]).
func (h *handler) cost(t *Task, m *models.Model) int64 {
	price := h.cfg.price(m.ID)
	if price <= 0 {
		return 0
	}
	c := math.Ceil(taskSeconds(t, m)) * float64(price)
	if c >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(c)
}

// taskSeconds is the duration that task t of model m is charged for: its
// seconds, else the longest its model allows, else unknownSeconds.
func taskSeconds(t *Task, m *models.Model) float64 {
	seconds, err := strconv.ParseFloat(t.Seconds, 64)
	if err != nil || seconds <= 0 || math.IsInf(seconds, 0) || math.IsNaN(seconds) {
		seconds = unknownSeconds
		if m.Video != nil && len(m.Video.Seconds) > 0 {
			seconds = float64(slices.Max(m.Video.Seconds))
		}
	}
	return seconds
}

// reserve reserves the cost of t against the request's key and records it
// in t.Charge; it returns the reservation to release if t cannot be
// stored. A request without a principal, or a free task, reserves
// nothing; a key store that fails is a 503 (apierrors.FromDependency).
func (h *handler) reserve(ctx context.Context, t *Task, m *models.Model) (*auth.Reservation, error) {
	amount := h.cost(t, m)
	if amount <= 0 {
		return nil, nil
	}
	rsv, err := auth.Reserve(ctx, amount)
	switch {
	case errors.Is(err, auth.ErrNoPrincipal):
		return nil, nil
	case errors.Is(err, auth.ErrQuotaExceeded):
		telemetry.SetRefusal(ctx, telemetry.RefusalQuota)
		return nil, apierrors.InsufficientQuota(msgQuota).WithCause(err)
	case err != nil:
		return nil, apierrors.FromDependency(ctx, fmt.Errorf("videos: reserving quota: %w", err))
	}
	if rsv.Amount() > 0 {
		t.Charge = &TaskCharge{KeyID: rsv.KeyID(), Amount: rsv.Amount(),
			CostUSD: m.Pricing.VideoCost(math.Ceil(taskSeconds(t, m)))}
	}
	return rsv, nil
}

// release releases the charge of t, a task deleted before it finished,
// through the request's key store.
func (h *handler) release(ctx context.Context, t *Task) {
	if t.Charge == nil {
		return
	}
	_, err := auth.Settle(ctx, auth.SettleParams{KeyID: t.Charge.KeyID, Reserved: t.Charge.Amount})
	if err != nil && !errors.Is(err, auth.ErrNoPrincipal) {
		h.cfg.logger.LogAttrs(ctx, slog.LevelError, "videos: releasing the quota of a deleted task",
			slog.String("task_id", t.ID), slog.String("error", err.Error()))
	}
}
