package endpoint_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/endpoint"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
)

func TestSettersRestoreDefaults(t *testing.T) {
	t.Parallel()
	c := endpoint.Defaults()
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
	require.NotNil(t, c.Validate, "Finish builds the default validator")
	require.False(t, c.CustomValidator)
	require.Panics(t, func() { endpoint.CheckKeepAlive("chat", -time.Second) })
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
			c := endpoint.Defaults()
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

func TestChargeWithoutKeyLogsNothing(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	c := endpoint.Defaults()
	c.SetLogger(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})))
	c.Charge(context.Background(), 12)
	require.Empty(t, log.String(), "a request without an API key has nothing to charge")
}
