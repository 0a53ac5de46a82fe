package auth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/internal/reqctx"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// TestMiddlewarePrincipalInTheRequestState checks where the middleware
// puts the principal: in the request's reqctx.State when the kit's
// metrics or tracing middleware made one (the handler gets the request
// itself, not a copy), in a context of its own otherwise, and never in a
// context that telemetry.NewContext made, which many requests may share.
func TestMiddlewarePrincipalInTheRequestState(t *testing.T) {
	t.Parallel()
	keys := storeWith(t, "sk-alpha0123456789", auth.Key{ID: "key-alpha", Quota: auth.UnlimitedQuota()})
	require.NoError(t, keys.Add(t.Context(), "sk-beta01234567890", auth.Key{ID: "key-beta", Quota: auth.UnlimitedQuota()}))
	type seen struct {
		keyID  string
		copied bool
		info   *telemetry.Info
	}
	serve := func(base context.Context, secret string) seen {
		var got seen
		var sent *http.Request
		h := auth.Middleware(keys)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, ok := auth.PrincipalFrom(r.Context())
			require.True(t, ok)
			got.keyID, got.copied, got.info = p.KeyID, r != sent, telemetry.FromContext(r.Context())
		}))
		sent = httptest.NewRequestWithContext(base, http.MethodPost, "/v1/chat/completions", nil)
		sent.Header.Set("Authorization", "Bearer "+secret)
		h.ServeHTTP(httptest.NewRecorder(), sent)
		return got
	}
	info := new(telemetry.Info)
	shared := telemetry.NewContext(context.Background(), info)
	outer := auth.WithPrincipal(context.Background(), &auth.Principal{KeyID: "key-outer"})
	for _, tc := range []struct {
		name       string
		base       func() context.Context
		secret     string
		wantKey    string
		wantCopied bool
	}{
		{"the request's state", func() context.Context { return reqctx.New(context.Background(), info) }, "sk-alpha0123456789", "key-alpha", false},
		{"no state", context.Background, "sk-alpha0123456789", "key-alpha", true},
		{"a shared telemetry context, first", func() context.Context { return shared }, "sk-alpha0123456789", "key-alpha", true},
		{"a shared telemetry context, second", func() context.Context { return shared }, "sk-beta01234567890", "key-beta", true},
		{"a state under a principal", func() context.Context { return reqctx.New(outer, info) }, "sk-beta01234567890", "key-beta", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := serve(tc.base(), tc.secret)
			require.Equal(t, tc.wantKey, got.keyID)
			require.Equal(t, tc.wantCopied, got.copied)
			if tc.name != "no state" {
				require.Same(t, info, got.info, "the telemetry.Info stays visible")
			}
		})
	}
	_, ok := auth.PrincipalFrom(shared)
	require.False(t, ok, "no principal was recorded in the shared context")
}

// TestRequestStateHidesOnlyWhatItHolds checks reqctx.State's lookups: a
// State answers for the Info and principal it holds, and its parent
// answers for the rest.
func TestRequestStateHidesOnlyWhatItHolds(t *testing.T) {
	t.Parallel()
	outerInfo, innerInfo := new(telemetry.Info), new(telemetry.Info)
	outer := auth.WithPrincipal(telemetry.NewContext(context.Background(), outerInfo), &auth.Principal{KeyID: "key-outer"})
	inner := reqctx.New(outer, innerInfo)
	require.Same(t, innerInfo, telemetry.FromContext(inner))
	p, ok := auth.PrincipalFrom(inner)
	require.True(t, ok)
	require.Equal(t, "key-outer", p.KeyID, "a State without a principal asks its parent")
	require.Nil(t, reqctx.Claim(inner), "a State under a principal is not claimed")
	require.Nil(t, reqctx.Claim(outer), "a context without a State has none to claim")
	fresh := reqctx.New(context.Background(), innerInfo)
	require.Same(t, fresh, reqctx.Claim(fresh))
}
