package quietlog_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/gatewaykit/gatewaykit/internal/quietlog"
)

func TestOr(t *testing.T) {
	if got := quietlog.Or(nil); got != quietlog.Discard || got.Enabled(context.Background(), slog.LevelError) {
		t.Errorf("Or(nil) = %v, which logs", got)
	}
	l := slog.Default()
	if got := quietlog.Or(l); got != l {
		t.Errorf("Or(l) = %v, not l", got)
	}
}
