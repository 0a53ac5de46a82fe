package auth_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
)

func TestOwnerFuncs(t *testing.T) {
	t.Parallel()
	with := func(p *auth.Principal) context.Context {
		if p == nil {
			return context.Background()
		}
		return auth.WithPrincipal(context.Background(), p)
	}
	type want struct {
		owner string
		ok    bool
	}
	tests := []struct {
		name         string
		p            *auth.Principal
		account, key want
	}{
		{"no principal", nil, want{auth.AnonymousOwner, true}, want{auth.AnonymousOwner, true}},
		{"a key of an account", &auth.Principal{KeyID: "k1", Owner: "acme"}, want{"owner:acme", true}, want{"key:k1", true}},
		{"a key without an account", &auth.Principal{KeyID: "k1"}, want{"key:k1", true}, want{"key:k1", true}},
		{"a session of an account", &auth.Principal{KeyID: "s1", Owner: "acme", Credential: auth.CredentialSession}, want{"owner:acme", true}, want{"session:s1", true}},
		{"a session without an account", &auth.Principal{KeyID: "s1", Credential: auth.CredentialSession}, want{"session:s1", true}, want{"session:s1", true}},
		{"a principal without a key id", &auth.Principal{}, want{"", false}, want{"", false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			owner, ok := auth.AccountOwner(with(tc.p))
			require.Equal(t, tc.account, want{owner, ok}, "AccountOwner")
			owner, ok = auth.KeyOwner(with(tc.p))
			require.Equal(t, tc.key, want{owner, ok}, "KeyOwner")
		})
	}
}
