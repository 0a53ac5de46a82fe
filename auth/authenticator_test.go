package auth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/auth/authtest"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// sessionHeader carries the sessions of the embedder of these tests:
// "s-<name>" is the session of the user whose key id is "user_<name>".
const sessionHeader = "X-Acme-Session"

// identityKeys are the keys without a secret of the identity tests.
var identityKeys = []auth.Key{
	{ID: "user_ada", Owner: "ada", Quota: auth.LimitedQuota(30), AllowedModels: []string{"demo-chat"}},
	{ID: "user_bob", Owner: "bob", Quota: auth.LimitedQuota(1000)},
	{ID: "user_off", Owner: "off", Quota: auth.UnlimitedQuota(), Disabled: true},
	{ID: "user_old", Owner: "old", Quota: auth.UnlimitedQuota(), ExpiresAt: time.Now().Add(-time.Hour)},
	{ID: "user_broke", Owner: "broke", Quota: auth.LimitedQuota(0)},
	{ID: "user_spent", Owner: "spent", Quota: auth.Quota{Unlimited: true, BudgetUSD: 1, CostUSD: 1}},
	{ID: "user_rate", Owner: "rate", Quota: auth.UnlimitedQuota(), RateLimit: &auth.Limit{Requests: 1, Period: time.Minute}},
	{ID: "user_norate", Owner: "norate", Quota: auth.UnlimitedQuota(), RateLimit: &auth.Limit{}},
}

// sessionUser is the embedder's identity: the key id of the session in
// the request's sessionHeader.
func sessionUser(r *http.Request) (string, error) {
	switch s := r.Header.Get(sessionHeader); {
	case s == "":
		return "", nil
	case s == "expired":
		return "", apierrors.InvalidAPIKey("Your session has expired. Sign in again.")
	case s == "down":
		return "", errors.New("the session store is down")
	case strings.HasPrefix(s, "s-"):
		return "user_" + strings.TrimPrefix(s, "s-"), nil
	}
	return "", apierrors.InvalidAPIKey("Malformed session.")
}

// identityBundle is a middleware that accepts the embedder's sessions
// before API keys, over one store that holds both, in front of a handler
// that charges each request 7 of its 10 reserved units and answers with
// its principal.
type identityBundle struct {
	keys     *auth.MemoryKeyStore
	secret   string // of key_ok
	logs     *bytes.Buffer
	observed []string
	handler  http.Handler
}

func setupIdentities(t *testing.T, opts ...auth.Option) *identityBundle {
	t.Helper()
	ctx := context.Background()
	b := &identityBundle{keys: auth.NewMemoryKeyStore(), logs: new(bytes.Buffer)}
	b.secret = authtest.NewSeed(t, auth.Key{}).Secret
	require.NoError(t, b.keys.Add(ctx, b.secret, auth.Key{ID: "key_ok", Owner: "acme", Quota: auth.LimitedQuota(1000)}))
	for _, k := range identityKeys {
		require.NoError(t, b.keys.Add(ctx, "", k))
	}
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: b.logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var mu sync.Mutex
	opts = append([]auth.Option{
		auth.WithLogger(logger),
		auth.WithAuthenticators(auth.Identities(b.keys, sessionUser), auth.APIKeys(b.keys)),
		auth.WithKeyObserver(func(_ http.ResponseWriter, _ *http.Request, keyID string) {
			mu.Lock()
			defer mu.Unlock()
			b.observed = append(b.observed, keyID)
		}),
	}, opts...)
	b.handler = auth.Middleware(b.keys, opts...)(http.HandlerFunc(chargeAndEcho))
	return b
}

// chargeAndEcho reserves 10 units of a spending request, settles 7 of
// them with a model, and answers with the principal.
func chargeAndEcho(w http.ResponseWriter, r *http.Request) {
	if auth.Spends(r) {
		rsv, err := auth.Reserve(r.Context(), 10)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if _, err := rsv.SettleUsage(r.Context(), auth.SettleParams{Used: 7, Model: "demo-chat", InputTokens: 3, OutputTokens: 4}); err != nil &&
			!errors.Is(err, auth.ErrQuotaExceeded) {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	echoPrincipal(w, r)
}

func (b *identityBundle) do(method string, header map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "/v1/chat/completions", nil)
	for k, v := range header {
		r.Header.Set(k, strings.ReplaceAll(v, "{key_ok}", b.secret))
	}
	w := httptest.NewRecorder()
	b.handler.ServeHTTP(w, r)
	return w
}

func session(name string) map[string]string { return map[string]string{sessionHeader: name} }

// TestIdentities: an embedder's own identity (a session header naming a
// key without a secret) and API keys on one middleware: each request is
// authenticated by the first authenticator that finds its credential,
// and refused, limited and charged as an API key is.
func TestIdentities(t *testing.T) {
	t.Parallel()
	apiKey := map[string]string{"Authorization": "Bearer {key_ok}"}
	tests := []struct {
		name         string
		opts         []auth.Option
		method       string // POST unless set
		header       map[string]string
		warmup       int
		wantStatus   int
		wantCode     string // of an error
		wantMessage  string // of an error, if set
		wantKey      string // of a 200
		wantCred     auth.CredentialKind
		wantLimit    string // x-ratelimit-limit-requests
		wantObserved []string
		wantLog      string
	}{
		{name: "SessionUser", header: session("s-ada"), wantStatus: 200, wantKey: "user_ada", wantCred: auth.CredentialIdentity, wantObserved: []string{"user_ada"}},
		{name: "APIKey", header: apiKey, wantStatus: 200, wantKey: "key_ok", wantCred: auth.CredentialBearer, wantObserved: []string{"key_ok"}},
		{
			name: "TheFirstAuthenticatorThatFindsACredentialWins", wantStatus: 200, wantKey: "user_bob", wantCred: auth.CredentialIdentity,
			header: map[string]string{sessionHeader: "s-bob", "Authorization": "Bearer {key_ok}"},
		},
		{name: "NeitherIsMissingAuthorization", wantStatus: 401, wantCode: "missing_authorization",
			wantMessage: "You didn't provide an API key. Send it in the Authorization header using the Bearer scheme: 'Authorization: Bearer sk-...'."},
		{name: "UnknownAPIKey", header: map[string]string{"Authorization": "Bearer sk-unknownkey0123456789"}, wantStatus: 401, wantCode: "invalid_api_key",
			wantMessage: "Incorrect API key provided. You can find your API key on the key page of the user centre."},
		{name: "MalformedAPIKey", header: map[string]string{"Authorization": "Bearer pk-nope"}, wantStatus: 401, wantCode: "invalid_api_key"},
		{name: "IdentityWithoutAKey", header: session("s-ghost"), wantStatus: 401, wantCode: "invalid_api_key",
			wantMessage: "The identity of this request has no key at the gateway."},
		{name: "DisabledIdentity", header: session("s-off"), wantStatus: 401, wantCode: "invalid_api_key",
			wantMessage: "The key of this request's identity has been disabled.", wantObserved: []string{"user_off"}},
		{name: "ExpiredIdentity", header: session("s-old"), wantStatus: 401, wantCode: "invalid_api_key",
			wantMessage: "The key of this request's identity has expired.", wantObserved: []string{"user_old"}},
		{name: "SessionRefusedByTheEmbedder", header: session("expired"), wantStatus: 401, wantCode: "invalid_api_key",
			wantMessage: "Your session has expired. Sign in again."},
		{name: "IdentityProviderDownIsAnOutage", header: session("down"), wantStatus: 503, wantCode: "service_unavailable",
			wantLog: "auth: Identities: identifying the request: the session store is down"},
		{name: "SpentQuota", header: session("s-broke"), wantStatus: 403, wantCode: "insufficient_quota",
			wantMessage: "You exceeded the quota of this API key. Please check your plan and billing details.", wantObserved: []string{"user_broke"}},
		{name: "SpentQuotaStillReads", method: http.MethodGet, header: session("s-broke"), wantStatus: 200, wantKey: "user_broke", wantCred: auth.CredentialIdentity},
		{name: "SpentBudgetInUSD", header: session("s-spent"), wantStatus: 403, wantCode: "insufficient_quota",
			wantMessage: "You exceeded the budget of this API key (its cost in US dollars reached its budget_usd). Please check your plan and billing details."},
		{name: "OwnRateLimit", header: session("s-rate"), warmup: 1, wantStatus: 429, wantCode: "rate_limit_exceeded", wantLimit: "1"},
		{name: "DefaultRateLimit", opts: []auth.Option{auth.WithDefaultRateLimit(auth.PerMinute(1))}, header: session("s-bob"), warmup: 1,
			wantStatus: 429, wantCode: "rate_limit_exceeded", wantLimit: "1"},
		{name: "OptOutOfTheDefaultRateLimit", opts: []auth.Option{auth.WithDefaultRateLimit(auth.PerMinute(1))}, header: session("s-norate"), warmup: 2,
			wantStatus: 200, wantKey: "user_norate", wantCred: auth.CredentialIdentity},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupIdentities(t, tc.opts...)
			method := cmpOr(tc.method, http.MethodPost)
			for range tc.warmup {
				require.Equal(t, 200, b.do(method, tc.header).Code, "warm-up request")
			}
			b.observed = nil
			w := b.do(method, tc.header)
			require.Equal(t, tc.wantStatus, w.Code, "body: %s", w.Body)
			require.Equal(t, tc.wantLimit, w.Header().Get(auth.HeaderLimitRequests))
			if tc.wantObserved != nil {
				require.Equal(t, tc.wantObserved, b.observed)
			}
			require.Contains(t, b.logs.String(), tc.wantLog)
			if tc.wantStatus != 200 {
				var body apierrors.Body
				require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
				require.Equal(t, tc.wantCode, body.Error.Code)
				if tc.wantMessage != "" {
					require.Equal(t, tc.wantMessage, body.Error.Message)
				}
				require.NotContains(t, w.Body.String(), "user_", "refusals do not name the identity's key")
				require.NotContains(t, w.Body.String(), "down")
				return
			}
			var p auth.Principal
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &p))
			require.Equal(t, tc.wantKey, p.KeyID)
			require.Equal(t, tc.wantCred, p.Credential)
		})
	}
}

// TestIdentitiesAreChargedLikeKeys: a session user and an API key on one
// middleware are each charged to their own key, with usage rows under
// their own ids; a 30-unit user is refused once it has spent them.
func TestIdentitiesAreChargedLikeKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupIdentities(t)
	var statuses []int
	for range 6 {
		statuses = append(statuses, b.do(http.MethodPost, session("s-ada")).Code)
	}
	require.Equal(t, []int{200, 200, 200, 200, 200, 403}, statuses,
		"7 units a request out of 30: the fifth is admitted on the 2 left, and overdraws them; the sixth finds none")
	require.Equal(t, 200, b.do(http.MethodPost, map[string]string{"Authorization": "Bearer {key_ok}"}).Code)
	require.Equal(t, 200, b.do(http.MethodGet, session("s-ada")).Code, "a spent user still reads")

	ada, err := b.keys.LookupID(ctx, "user_ada")
	require.NoError(t, err)
	require.Equal(t, auth.Quota{Remaining: 0, Used: 35}, ada.Quota)
	key, err := b.keys.GetKey(ctx, "key_ok")
	require.NoError(t, err)
	require.Equal(t, auth.Quota{Remaining: 993, Used: 7}, key.Quota)
	rows, err := b.keys.Usage(ctx, auth.UsageParams{GroupBy: auth.GroupByKey})
	require.NoError(t, err)
	want := []auth.UsageRow{
		{KeyID: "key_ok", Requests: 1, InputTokens: 3, OutputTokens: 4},
		{KeyID: "user_ada", Requests: 5, InputTokens: 15, OutputTokens: 20},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("usage mismatch (-want +got):\n%s", diff)
	}
}

// TestIdentitiesSetTheTelemetry: the request's telemetry names the key of
// its identity, and a refusal for quota, as for an API key.
func TestIdentitiesSetTheTelemetry(t *testing.T) {
	t.Parallel()
	b := setupIdentities(t)
	for _, tc := range []struct {
		session, wantKey string
		wantRefusal      string
	}{
		{"s-bob", "user_bob", ""},
		{"s-broke", "user_broke", telemetry.RefusalQuota},
	} {
		info := new(telemetry.Info)
		r := httptest.NewRequestWithContext(telemetry.NewContext(context.Background(), info), http.MethodPost, "/v1/chat/completions", nil)
		r.Header.Set(sessionHeader, tc.session)
		b.handler.ServeHTTP(httptest.NewRecorder(), r)
		require.Equal(t, tc.wantKey, info.KeyID)
		require.Equal(t, tc.wantRefusal, info.Refusal)
	}
}

// TestAuthenticatorContract: what the middleware does with whatever an
// embedder's Authenticator returns.
func TestAuthenticatorContract(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name        string
		principal   func(keys auth.KeyStore) *auth.Principal
		err         error
		opts        []auth.Option
		warmup      int
		wantStatus  int
		wantCode    string
		wantMessage string
		wantLimit   string
		wantUsed    int64 // by the key "svc" after the request
		wantLog     string
	}{
		{
			name:       "APrincipalWithoutAStoreIsNeitherLimitedByQuotaNorCharged",
			principal:  func(auth.KeyStore) *auth.Principal { return &auth.Principal{KeyID: "svc", Quota: auth.LimitedQuota(0)} },
			wantStatus: 200,
		},
		{
			name: "APrincipalWithAStoreIsCharged",
			principal: func(keys auth.KeyStore) *auth.Principal {
				return &auth.Principal{KeyID: "svc", Quota: auth.LimitedQuota(100), Keys: keys}
			},
			wantStatus: 200, wantUsed: 7,
		},
		{
			name: "AndRefusedWhenItsSnapshotIsSpent",
			principal: func(keys auth.KeyStore) *auth.Principal {
				return &auth.Principal{KeyID: "svc", Quota: auth.LimitedQuota(0), Keys: keys}
			},
			wantStatus: 403, wantCode: "insufficient_quota",
		},
		{
			name:       "TheZeroRateLimitIsTheDefault",
			principal:  func(auth.KeyStore) *auth.Principal { return &auth.Principal{KeyID: "svc"} },
			opts:       []auth.Option{auth.WithDefaultRateLimit(auth.PerMinute(3))},
			wantStatus: 200, wantLimit: "3",
		},
		{
			name: "ANegativeRateLimitIsNone",
			principal: func(auth.KeyStore) *auth.Principal {
				return &auth.Principal{KeyID: "svc", RateLimit: auth.Limit{Requests: -1}}
			},
			opts:       []auth.Option{auth.WithDefaultRateLimit(auth.PerMinute(1))},
			warmup:     2,
			wantStatus: 200,
		},
		{
			name: "ItsOwnRateLimit",
			principal: func(auth.KeyStore) *auth.Principal {
				return &auth.Principal{KeyID: "svc", RateLimit: auth.PerMinute(1)}
			},
			opts:       []auth.Option{auth.WithDefaultRateLimit(auth.PerMinute(100))},
			warmup:     1,
			wantStatus: 429, wantCode: "rate_limit_exceeded", wantLimit: "1",
		},
		{
			name: "AnAPIErrorIsSentAsItIs", err: apierrors.InvalidAPIKey("Bad token."),
			wantStatus: 401, wantCode: "invalid_api_key", wantMessage: "Bad token.",
		},
		{
			name: "ErrKeyNotFound", err: fmt.Errorf("token of user 7: %w", auth.ErrKeyNotFound),
			wantStatus: 401, wantCode: "invalid_api_key", wantMessage: "Incorrect API key provided. You can find your API key on the key page of the user centre.",
		},
		{
			name: "ErrKeyDisabled", err: auth.ErrKeyDisabled,
			wantStatus: 401, wantCode: "invalid_api_key", wantMessage: "The API key provided has been disabled.",
		},
		{
			name: "ErrKeyExpired", err: auth.ErrKeyExpired,
			wantStatus: 401, wantCode: "invalid_api_key", wantMessage: "The API key provided has expired.",
		},
		{
			name: "AnyOtherErrorIsAnOutage", err: errors.New("jwks endpoint unreachable"),
			wantStatus: 503, wantCode: "service_unavailable", wantLog: "auth: Authenticator: jwks endpoint unreachable",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			keys := auth.NewMemoryKeyStore()
			require.NoError(t, keys.Add(ctx, "", auth.Key{ID: "svc", Quota: auth.LimitedQuota(100)}))
			var given *auth.Principal
			if tc.principal != nil {
				given = tc.principal(keys)
			}
			var logs bytes.Buffer
			a := auth.AuthenticatorFunc(func(*http.Request) (*auth.Principal, error) {
				if tc.err != nil {
					return nil, tc.err
				}
				return given, nil
			})
			opts := append([]auth.Option{auth.WithAuthenticators(a), auth.WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))}, tc.opts...)
			h := auth.Middleware(keys, opts...)(http.HandlerFunc(chargeAndEcho))
			var w *httptest.ResponseRecorder
			for i := 0; i <= tc.warmup; i++ {
				w = httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil))
				if i < tc.warmup {
					require.Equal(t, 200, w.Code, "warm-up request: %s", w.Body)
				}
			}
			require.Equal(t, tc.wantStatus, w.Code, "body: %s", w.Body)
			require.Equal(t, tc.wantLimit, w.Header().Get(auth.HeaderLimitRequests))
			if tc.wantStatus != 200 {
				var body apierrors.Body
				require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
				require.Equal(t, tc.wantCode, body.Error.Code)
				if tc.wantMessage != "" {
					require.Equal(t, tc.wantMessage, body.Error.Message)
				}
				require.NotContains(t, w.Body.String(), "jwks")
			}
			require.Contains(t, logs.String(), tc.wantLog)
			k, err := keys.LookupID(ctx, "svc")
			require.NoError(t, err)
			require.Equal(t, tc.wantUsed, k.Quota.Used)
			if given != nil {
				require.Equal(t, "svc", given.KeyID)
				require.Zero(t, given.Credential, "the middleware copies the principal, and never changes it")
			}
		})
	}
}

// TestAuthenticatorRefusalNamesWhoWasRefused: a principal returned with
// an error is who was refused: the key observer and the telemetry learn
// its key id.
func TestAuthenticatorRefusalNamesWhoWasRefused(t *testing.T) {
	t.Parallel()
	a := auth.AuthenticatorFunc(func(*http.Request) (*auth.Principal, error) {
		return &auth.Principal{KeyID: "user_7"}, fmt.Errorf("user 7: %w", auth.ErrKeyDisabled)
	})
	var observed []string
	h := auth.Middleware(auth.NewMemoryKeyStore(), auth.WithAuthenticators(a),
		auth.WithKeyObserver(func(_ http.ResponseWriter, _ *http.Request, keyID string) { observed = append(observed, keyID) }),
	)(http.HandlerFunc(echoPrincipal))
	info := new(telemetry.Info)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequestWithContext(telemetry.NewContext(context.Background(), info), http.MethodPost, "/", nil))
	require.Equal(t, 401, w.Code)
	require.Equal(t, []string{"user_7"}, observed)
	require.Equal(t, "user_7", info.KeyID)
}

// TestAuthenticatorsAreAskedInOrder: nil means "not mine" and passes the
// request on; the first principal or error ends the search.
func TestAuthenticatorsAreAskedInOrder(t *testing.T) {
	t.Parallel()
	var asked []string
	named := func(name string, p *auth.Principal, err error) auth.Authenticator {
		return auth.AuthenticatorFunc(func(*http.Request) (*auth.Principal, error) {
			asked = append(asked, name)
			return p, err
		})
	}
	tests := []struct {
		name       string
		list       []auth.Authenticator
		wantAsked  []string
		wantStatus int
	}{
		{"NoneFindsACredential", []auth.Authenticator{named("a", nil, nil), named("b", nil, nil)}, []string{"a", "b"}, 401},
		{"TheSecondAuthenticates", []auth.Authenticator{named("a", nil, nil), named("b", &auth.Principal{KeyID: "b"}, nil), named("c", nil, nil)}, []string{"a", "b"}, 200},
		{"ARefusalEndsTheSearch", []auth.Authenticator{named("a", nil, apierrors.InvalidAPIKey("no")), named("b", &auth.Principal{KeyID: "b"}, nil)}, []string{"a"}, 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			asked = nil
			h := auth.Middleware(auth.NewMemoryKeyStore(), auth.WithAuthenticators(tc.list...))(http.HandlerFunc(echoPrincipal))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", nil))
			require.Equal(t, tc.wantStatus, w.Code)
			require.Equal(t, tc.wantAsked, asked)
		})
	}
}

// TestWrappedAPIKeysAuthenticateAsTheDefault: APIKeys behind an
// embedder's wrapper (which the middleware can only call through
// Authenticate) answers every case of TestMiddleware as the default does.
func TestWrappedAPIKeysAuthenticateAsTheDefault(t *testing.T) {
	t.Parallel()
	for _, tc := range middlewareCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b := setup(t)
				keys := auth.APIKeys(b.keys)
				wrapped := auth.AuthenticatorFunc(func(r *http.Request) (*auth.Principal, error) { return keys.Authenticate(r) })
				b.handler = auth.Middleware(b.keys, auth.WithAuthenticators(wrapped))(http.HandlerFunc(echoPrincipal))
				for range tc.warmup {
					require.Equal(t, http.StatusOK, b.do(tc.header, tc.query).Code, "warm-up request")
				}
				w := b.do(tc.header, tc.query)
				require.Equal(t, tc.wantStatus, w.Code, "body: %s", w.Body)
				for k, want := range tc.wantHeader {
					require.Equal(t, want, w.Header().Get(k), "header %s", k)
				}
				if tc.wantStatus != http.StatusOK {
					checkGolden(t, tc.golden, w.Body.Bytes())
					return
				}
				var got auth.Principal
				require.NoError(t, json.Unmarshal(w.Body.Bytes(), &got))
				require.Equal(t, tc.wantKey, got.KeyID)
				require.Equal(t, tc.wantCred, got.Credential)
			})
		})
	}
}

func TestAuthenticatorConstructorsPanicOnProgrammerError(t *testing.T) {
	t.Parallel()
	mem := auth.NewMemoryKeyStore()
	tests := []struct {
		name, want string
		build      func()
	}{
		{"APIKeysOfNil", "auth: APIKeys: nil KeyStore", func() { auth.APIKeys(nil) }},
		{"ANilAuthenticator", "auth: WithAuthenticators: nil Authenticator", func() { auth.WithAuthenticators(auth.APIKeys(mem), nil) }},
		{"IdentitiesOfNil", "auth: Identities: nil KeyStore", func() { auth.Identities(nil, sessionUser) }},
		{"IdentitiesWithoutAFunction", "auth: Identities: nil identify function", func() { auth.Identities(mem, nil) }},
		{
			"IdentitiesOfAStoreThatCannotLookUpIDs",
			"auth: Identities: the KeyStore (auth_test.lookupOnly) cannot look keys up by id: it is no auth.IDLookup",
			func() { auth.Identities(lookupOnly{mem}, sessionUser) },
		},
		{
			"IdentitiesOfACacheInFrontOfSuchAStore",
			"auth: Identities: the KeyStore (*auth.CachedKeyStore) cannot look keys up by id: it is no auth.IDLookup",
			func() { auth.Identities(auth.NewCachedKeyStore(lookupOnly{mem}, time.Second), sessionUser) },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.PanicsWithValue(t, tc.want, tc.build)
		})
	}
	require.NotPanics(t, func() { auth.Identities(auth.NewCachedKeyStore(mem, time.Second), sessionUser) })
}
