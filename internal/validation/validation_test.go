package validation_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/validation"
)

type message struct {
	Role string `json:"role" validate:"required,oneof=system user assistant tool"`
}

type request struct {
	Model       string    `json:"model" validate:"required"`
	Messages    []message `json:"messages" validate:"required,min=1,dive"`
	Temperature *float64  `json:"temperature,omitempty" validate:"omitempty,gte=0,lte=2"`
	Stop        []string  `json:"stop,omitempty" validate:"max=4"`
	N           *int      `json:"n,omitempty" validate:"omitempty,gte=1,lte=128"`
}

func ptr[T any](v T) *T { return &v }

func TestStruct(t *testing.T) {
	t.Parallel()
	ok := []message{{Role: "user"}}
	tests := []struct {
		name      string
		req       request
		wantParam string
		wantMsg   string
	}{
		{"valid", request{Model: "m", Messages: ok}, "", ""},
		{"missing model", request{Messages: ok}, "model", "model is required"},
		{"no messages", request{Model: "m", Messages: []message{}}, "messages", "messages must hold at least 1 items"},
		{"bad role", request{Model: "m", Messages: []message{{Role: "user"}, {Role: "robot"}}}, "messages[1].role", `messages[1].role must be one of system, user, assistant, tool, got "robot"`},
		{"temperature high", request{Model: "m", Messages: ok, Temperature: ptr(2.5)}, "temperature", "temperature must be at most 2, got 2.5"},
		{"temperature low", request{Model: "m", Messages: ok, Temperature: ptr(-1.0)}, "temperature", "temperature must be at least 0, got -1"},
		{"too many stops", request{Model: "m", Messages: ok, Stop: []string{"a", "b", "c", "d", "e"}}, "stop", "stop must hold at most 4 items"},
		{"n zero", request{Model: "m", Messages: ok, N: ptr(0)}, "n", "n must be at least 1, got 0"},
	}
	v := validation.New()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := validation.Struct(v, tc.req)
			if tc.wantMsg == "" {
				require.NoError(t, err)
				return
			}
			var e *apierrors.Error
			require.True(t, errors.As(err, &e))
			require.Equal(t, 400, e.Status)
			require.Equal(t, tc.wantParam, e.Param)
			require.Equal(t, tc.wantMsg, e.Message)
		})
	}
}
