package relay_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/typecheck"
)

// TestOptionsAreTyped type-checks small programs against the relay: New
// takes every option, NewAccessHandler only the access points' (an
// option of the relay itself, such as WithTransport, means nothing to an
// access handler and does not compile there).
func TestOptionsAreTyped(t *testing.T) {
	t.Parallel()
	c := typecheck.New(t, "relay", "models")
	for _, tc := range []struct {
		option string
		access bool // an AccessOption
	}{
		{"relay.WithTransport(nil)", false},
		{"relay.WithTimeouts(relay.Timeouts{})", false},
		{"relay.WithLogger(nil)", false},
		{"relay.WithPollInterval(0)", false},
		{"relay.WithMaxMediaBytes(0)", false},
		{"relay.WithMaxReplyBytesInFlight(0)", false},
		{"relay.WithCooldown(0, 0)", false},
		{"relay.WithAttemptObserver(nil)", false},
		{"relay.WithMaxRequestBytes(0)", true},
		{"relay.WithAllowed(nil)", true},
		{"relay.WithEndpointType(relay.PatternEmbeddings, \"\")", true},
		{"relay.WithKeepAlive(0)", true},
		{"relay.WithFallback(relay.PatternEmbeddings, nil)", true},
	} {
		name, _, _ := strings.Cut(strings.TrimPrefix(tc.option, "relay."), "(")
		t.Run(name, func(t *testing.T) {
			decls := "var r *relay.Relay\nvar c models.Catalog\n"
			require.NoError(t, c.Check(typecheck.Program([]string{"relay", "models"}, nil,
				decls+fmt.Sprintf("var _, _ = relay.New(nil, %s)", tc.option))), "New takes it")
			err := c.Check(typecheck.Program([]string{"relay", "models"}, nil,
				decls+fmt.Sprintf("var _ = relay.NewAccessHandler(r, c, %s)", tc.option)))
			if tc.access {
				require.NoError(t, err, "NewAccessHandler takes it")
				return
			}
			require.ErrorContains(t, err, "relay.Option does not implement relay.AccessOption (missing method applyToAccess)")
		})
	}
}
