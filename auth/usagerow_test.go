package auth_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
)

func TestUsageRowSetGroup(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		by   auth.UsageGroup
		want auth.UsageRow
	}{
		{auth.GroupByDay, auth.UsageRow{Day: "v", Requests: 1}},
		{"", auth.UsageRow{Day: "v", Requests: 1}},
		{auth.GroupByModel, auth.UsageRow{Model: "v", Requests: 1}},
		{auth.GroupByKey, auth.UsageRow{KeyID: "v", Requests: 1}},
	} {
		r := auth.UsageRow{Requests: 1}
		r.SetGroup(tt.by, "v")
		require.Equal(t, tt.want, r, "group by %q", tt.by)
	}
}
