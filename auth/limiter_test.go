package auth_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
)

func TestParseLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		want       auth.Limit
		wantErr    string // empty: no error
	}{
		{"per second", "5/s", auth.Limit{Requests: 5, Period: time.Second}, ""},
		{"per minute", "600/m", auth.Limit{Requests: 600, Period: time.Minute}, ""},
		{"per hour", "1000/h", auth.Limit{Requests: 1000, Period: time.Hour}, ""},
		{"a duration", "100/10s", auth.Limit{Requests: 100, Period: 10 * time.Second}, ""},
		{"String's form", "60/1m0s", auth.Limit{Requests: 60, Period: time.Minute}, ""},
		{"unlimited", "unlimited", auth.Limit{}, ""},
		{"empty", "", auth.Limit{}, `rate limit ""`},
		{"no period", "5", auth.Limit{}, "<requests>/<period>"},
		{"zero requests", "0/s", auth.Limit{}, "positive integer"},
		{"negative requests", "-5/s", auth.Limit{}, "positive integer"},
		{"not a number", "five/s", auth.Limit{}, "positive integer"},
		{"unknown unit", "5/d", auth.Limit{}, "the period"},
		{"zero period", "5/0s", auth.Limit{}, "the period"},
		{"negative period", "5/-1s", auth.Limit{}, "the period"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := auth.ParseLimit(tc.text)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			text, err := got.MarshalText()
			require.NoError(t, err)
			back, err := auth.ParseLimit(string(text))
			require.NoError(t, err)
			require.Equal(t, got.String(), back.String(), "MarshalText round-trips")
		})
	}
}

func TestLimitIsAJSONString(t *testing.T) {
	t.Parallel()
	var v struct {
		Limit    auth.Limit  `json:"limit"`
		Optional *auth.Limit `json:"optional"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"limit":"5/s","optional":"unlimited"}`), &v))
	require.Equal(t, auth.Limit{Requests: 5, Period: time.Second}, v.Limit)
	require.NotNil(t, v.Optional)
	require.True(t, v.Optional.Unlimited())
	b, err := json.Marshal(v)
	require.NoError(t, err)
	require.JSONEq(t, `{"limit":"5/1s","optional":"unlimited"}`, string(b))
	require.ErrorContains(t, json.Unmarshal([]byte(`{"limit":"5/x"}`), &v), `rate limit "5/x"`)
}
