package auth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/auth/authtest"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

var update = flag.Bool("update", false, "update .golden files")

// testStart is the time at which a synctest bubble's clock starts: the
// tests whose keys expire or are rate-limited run in a bubble, where time
// moves only when they sleep.
var testStart = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// testKeys are the keys of every bundle, by id.
var testKeys = []auth.Key{
	{ID: "key_ok", Owner: "acme", Quota: auth.UnlimitedQuota(), AllowedModels: []string{"gpt-4o"}},
	{ID: "key_alt", Owner: "other", Quota: auth.UnlimitedQuota()},
	{ID: "key_quota", Owner: "acme", Quota: auth.LimitedQuota(100)},
	{ID: "key_broke", Owner: "acme", Quota: auth.LimitedQuota(0)},
	{ID: "key_spent", Owner: "acme", Quota: auth.Quota{Unlimited: true, BudgetUSD: 2, CostUSD: 2}},
	{ID: "key_expired", Owner: "acme", Quota: auth.UnlimitedQuota(), ExpiresAt: testStart},
	{ID: "key_expiring", Owner: "acme", Quota: auth.UnlimitedQuota(), ExpiresAt: testStart.Add(time.Second)},
	{ID: "key_disabled", Owner: "acme", Quota: auth.UnlimitedQuota(), Disabled: true},
	{ID: "key_rate", Owner: "acme", Quota: auth.UnlimitedQuota(), RateLimit: &auth.Limit{Requests: 2, Period: 2 * time.Second}},
	{ID: "key_norate", Owner: "acme", Quota: auth.UnlimitedQuota(), RateLimit: &auth.Limit{}},
}

type testBundle struct {
	keys    *auth.MemoryKeyStore
	secrets map[string]string // key id → secret
	logs    *bytes.Buffer     // debug-level JSON logs of the middleware
	handler http.Handler
}

// setup returns a middleware over the test keys, a stopped clock and a
// next handler that answers 200 with the principal as JSON.
func setup(t *testing.T, opts ...auth.Option) *testBundle {
	t.Helper()
	b := &testBundle{
		keys:    auth.NewMemoryKeyStore(),
		secrets: make(map[string]string),
		logs:    new(bytes.Buffer),
	}
	for _, k := range testKeys {
		sd := authtest.NewSeed(t, k)
		require.NoError(t, b.keys.Add(context.Background(), sd.Secret, k))
		b.secrets[k.ID] = sd.Secret
	}
	logger := slog.New(slog.NewJSONHandler(&lockedWriter{w: b.logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts = append([]auth.Option{auth.WithLogger(logger)}, opts...)
	b.handler = auth.Middleware(b.keys, opts...)(http.HandlerFunc(echoPrincipal))
	return b
}

func echoPrincipal(w http.ResponseWriter, r *http.Request) {
	p, ok := auth.PrincipalFrom(r.Context())
	if !ok {
		http.Error(w, "no principal", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(p)
}

// expand replaces "{key_id}" with the secret of that key.
func (b *testBundle) expand(s string) string {
	for id, secret := range b.secrets {
		s = strings.ReplaceAll(s, "{"+id+"}", secret)
	}
	return s
}

func (b *testBundle) do(header map[string][]string, query string) *httptest.ResponseRecorder {
	target := "/v1/chat/completions"
	if query != "" {
		target += "?" + b.expand(query)
	}
	r := httptest.NewRequest(http.MethodPost, target, nil)
	for k, vs := range header {
		for _, v := range vs {
			r.Header.Add(k, b.expand(v))
		}
	}
	w := httptest.NewRecorder()
	b.handler.ServeHTTP(w, r)
	return w
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func bearer(id string) map[string][]string {
	return map[string][]string{"Authorization": {"Bearer {" + id + "}"}}
}

// middlewareCase is one request to a fresh bundle. An error case names
// its golden body, testdata/<golden>.json.
type middlewareCase struct {
	name       string
	header     map[string][]string
	query      string
	warmup     int // identical requests sent first
	wantStatus int
	golden     string
	wantHeader map[string]string // exact values; "" means absent
	wantKey    string            // for 200: the principal's key id
	wantCred   auth.CredentialKind
}

var middlewareCases = []middlewareCase{
	// §5.5 row 2: missing_authorization.
	{
		name:       "NoCredentials",
		wantStatus: 401,
		golden:     "missing_authorization",
		wantHeader: map[string]string{"WWW-Authenticate": "Bearer"},
	},
	{
		name:       "EmptyAuthorizationHeader",
		header:     map[string][]string{"Authorization": {""}},
		wantStatus: 401,
		golden:     "missing_authorization",
	},
	// §5.5 row 1: invalid_api_key, for every way a key can be wrong.
	{
		name:       "UnknownKey",
		header:     map[string][]string{"Authorization": {"Bearer sk-unknownkey0123456789"}},
		wantStatus: 401,
		golden:     "invalid_api_key_unknown",
		wantHeader: map[string]string{"WWW-Authenticate": `Bearer error="invalid_token"`},
	},
	{
		name:       "ExpiredKey",
		header:     bearer("key_expired"),
		wantStatus: 401,
		golden:     "invalid_api_key_expired",
	},
	{
		name:       "DisabledKey",
		header:     bearer("key_disabled"),
		wantStatus: 401,
		golden:     "invalid_api_key_disabled",
	},
	{
		name:       "BasicScheme",
		header:     map[string][]string{"Authorization": {"Basic dXNlcjpwYXNz"}},
		wantStatus: 401,
		golden:     "invalid_api_key_scheme",
	},
	{
		name:       "KeyWithoutScheme",
		header:     map[string][]string{"Authorization": {"{key_ok}"}},
		wantStatus: 401,
		golden:     "invalid_api_key_scheme",
	},
	{
		name:       "BearerWithoutKey",
		header:     map[string][]string{"Authorization": {"Bearer   "}},
		wantStatus: 401,
		golden:     "invalid_api_key_empty",
	},
	{
		name:       "KeyWithoutPrefix",
		header:     map[string][]string{"Authorization": {"Bearer pk-0123456789"}},
		wantStatus: 401,
		golden:     "invalid_api_key_malformed_bearer",
	},
	{
		name:       "KeyWithOddBytes",
		header:     map[string][]string{"Authorization": {"Bearer sk-abc\x01def"}},
		wantStatus: 401,
		golden:     "invalid_api_key_malformed_bearer",
	},
	{
		name:       "KeyWithNonASCII",
		header:     map[string][]string{"Authorization": {"Bearer sk-clé"}},
		wantStatus: 401,
		golden:     "invalid_api_key_malformed_bearer",
	},
	{
		name:       "KeyTooLong",
		header:     map[string][]string{"Authorization": {"Bearer sk-" + strings.Repeat("a", auth.MaxKeyLength-2)}},
		wantStatus: 401,
		golden:     "invalid_api_key_malformed_bearer",
	},
	{
		name:       "TwoAuthorizationHeaders",
		header:     map[string][]string{"Authorization": {"Bearer {key_ok}", "Bearer {key_alt}"}},
		wantStatus: 401,
		golden:     "invalid_api_key_duplicate",
	},
	{
		name:       "MalformedXAPIKey",
		header:     map[string][]string{"X-Api-Key": {"not-a-key"}},
		wantStatus: 401,
		golden:     "invalid_api_key_malformed_x_api_key",
	},
	{
		name:       "UnknownQueryKey",
		query:      "key=sk-unknownkey0123456789",
		wantStatus: 401,
		golden:     "invalid_api_key_unknown",
	},
	{
		name:       "InvalidAuthorizationDoesNotFallBackToXAPIKey",
		header:     map[string][]string{"Authorization": {"Basic dXNlcjpwYXNz"}, "X-Api-Key": {"{key_ok}"}},
		wantStatus: 401,
		golden:     "invalid_api_key_scheme",
	},
	// §5.5 row 3: insufficient_quota.
	{
		name:       "ExhaustedQuota",
		header:     bearer("key_broke"),
		wantStatus: 403,
		golden:     "insufficient_quota",
		wantHeader: map[string]string{"WWW-Authenticate": ""},
	},
	{
		name:       "BudgetInUSDReached",
		header:     bearer("key_spent"),
		wantStatus: 403,
		golden:     "insufficient_quota_budget",
		wantHeader: map[string]string{"WWW-Authenticate": ""},
	},
	// §7: rate_limit_exceeded.
	{
		name:       "OverTheRateLimit",
		header:     bearer("key_rate"),
		warmup:     2,
		wantStatus: 429,
		golden:     "rate_limit_exceeded",
		wantHeader: map[string]string{
			"Retry-After":                    "1",
			"Retry-After-Ms":                 "1000",
			"X-Ratelimit-Limit-Requests":     "2",
			"X-Ratelimit-Remaining-Requests": "0",
			"X-Ratelimit-Reset-Requests":     "2s",
			"WWW-Authenticate":               "",
		},
	},
	// Accepted credentials, and their precedence.
	{
		name:       "Bearer",
		header:     bearer("key_ok"),
		wantStatus: 200,
		wantKey:    "key_ok",
		wantCred:   auth.CredentialBearer,
		wantHeader: map[string]string{"X-Ratelimit-Limit-Requests": ""},
	},
	{
		name:       "LowerCaseBearer",
		header:     map[string][]string{"Authorization": {"bearer {key_ok}"}},
		wantStatus: 200,
		wantKey:    "key_ok",
		wantCred:   auth.CredentialBearer,
	},
	{
		name:       "XAPIKey",
		header:     map[string][]string{"X-Api-Key": {"{key_ok}"}, "Anthropic-Version": {"2023-06-01"}},
		wantStatus: 200,
		wantKey:    "key_ok",
		wantCred:   auth.CredentialXAPIKey,
	},
	{
		name:       "XGoogAPIKey",
		header:     map[string][]string{"X-Goog-Api-Key": {"{key_ok}"}},
		wantStatus: 200,
		wantKey:    "key_ok",
		wantCred:   auth.CredentialGoogAPIKey,
	},
	{
		name:       "QueryKey",
		query:      "key={key_ok}&alt=sse",
		wantStatus: 200,
		wantKey:    "key_ok",
		wantCred:   auth.CredentialQueryKey,
	},
	{
		name:       "BearerBeatsXAPIKey",
		header:     map[string][]string{"Authorization": {"Bearer {key_ok}"}, "X-Api-Key": {"{key_alt}"}},
		query:      "key={key_alt}",
		wantStatus: 200,
		wantKey:    "key_ok",
		wantCred:   auth.CredentialBearer,
	},
	{
		name:       "XAPIKeyBeatsXGoogAPIKey",
		header:     map[string][]string{"X-Api-Key": {"{key_alt}"}, "X-Goog-Api-Key": {"{key_ok}"}},
		wantStatus: 200,
		wantKey:    "key_alt",
		wantCred:   auth.CredentialXAPIKey,
	},
	{
		name:       "XGoogAPIKeyBeatsQueryKey",
		header:     map[string][]string{"X-Goog-Api-Key": {"{key_ok}"}},
		query:      "key={key_alt}",
		wantStatus: 200,
		wantKey:    "key_ok",
		wantCred:   auth.CredentialGoogAPIKey,
	},
	{
		name:       "KeyBeforeItsExpiry",
		header:     bearer("key_expiring"),
		wantStatus: 200,
		wantKey:    "key_expiring",
		wantCred:   auth.CredentialBearer,
	},
	{
		name:       "KeyWithQuotaLeft",
		header:     bearer("key_quota"),
		wantStatus: 200,
		wantKey:    "key_quota",
		wantCred:   auth.CredentialBearer,
	},
	{
		name:       "WithinTheRateLimit",
		header:     bearer("key_rate"),
		warmup:     1,
		wantStatus: 200,
		wantKey:    "key_rate",
		wantCred:   auth.CredentialBearer,
		wantHeader: map[string]string{
			"X-Ratelimit-Limit-Requests":     "2",
			"X-Ratelimit-Remaining-Requests": "0",
			"X-Ratelimit-Reset-Requests":     "2s",
			"Retry-After":                    "",
		},
	},
}

func TestMiddleware(t *testing.T) {
	t.Parallel()
	for _, tc := range middlewareCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b := setup(t)
				for range tc.warmup {
					require.Equal(t, http.StatusOK, b.do(tc.header, tc.query).Code, "warm-up request")
				}
				w := b.do(tc.header, tc.query)
				require.Equal(t, tc.wantStatus, w.Code, "body: %s", w.Body)
				for k, want := range tc.wantHeader {
					require.Equal(t, want, w.Header().Get(k), "header %s", k)
				}
				for _, secret := range b.secrets {
					require.NotContains(t, w.Body.String(), secret, "the body echoes a secret")
				}
				if tc.wantStatus != http.StatusOK {
					require.Equal(t, "application/json", w.Header().Get("Content-Type"))
					checkGolden(t, tc.golden, w.Body.Bytes())
					return
				}
				var got auth.Principal
				require.NoError(t, json.Unmarshal(w.Body.Bytes(), &got))
				k := keyByID(tc.wantKey)
				want := auth.Principal{
					KeyID:         k.ID,
					Owner:         k.Owner,
					AllowedModels: k.AllowedModels,
					Credential:    tc.wantCred,
					Quota:         k.Quota,
				}
				if k.RateLimit != nil {
					want.RateLimit = *k.RateLimit
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("principal mismatch (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func keyByID(id string) auth.Key {
	for _, k := range testKeys {
		if k.ID == id {
			return k
		}
	}
	panic("no test key " + id)
}

// checkGolden compares body with testdata/<name>.json as decoded JSON.
// go test ./auth -update rewrites the file.
func checkGolden(t *testing.T, name string, body []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".json")
	if *update {
		var v any
		require.NoError(t, json.Unmarshal(body, &v))
		out, err := json.MarshalIndent(v, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, append(out, '\n'), 0o644))
	}
	golden, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./auth -update to create it")
	var want, got any
	require.NoError(t, json.Unmarshal(golden, &want))
	require.NoError(t, json.Unmarshal(body, &got))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("body mismatch with %s (-want +got):\n%s", path, diff)
	}
}

func TestMiddlewareRateLimit(t *testing.T) {
	t.Parallel()

	type step struct {
		advance    time.Duration
		wantStatus int
		remaining  string
		reset      string
		retryAfter string
	}
	tests := []struct {
		name  string
		key   string
		opts  []auth.Option
		steps []step
	}{
		{
			name: "KeyLimitCountsDownThenRefusesThenRefills",
			key:  "key_rate", // 2 per 2s
			steps: []step{
				{wantStatus: 200, remaining: "1", reset: "1s"},
				{wantStatus: 200, remaining: "0", reset: "2s"},
				{wantStatus: 429, remaining: "0", reset: "2s", retryAfter: "1"},
				{advance: 250 * time.Millisecond, wantStatus: 429, remaining: "0", reset: "1.75s", retryAfter: "1"},
				{advance: 750 * time.Millisecond, wantStatus: 200, remaining: "0", reset: "2s"},
				{advance: 2 * time.Second, wantStatus: 200, remaining: "1", reset: "1s"},
			},
		},
		{
			name: "DefaultLimitAppliesToKeysWithoutTheirOwn",
			key:  "key_ok",
			opts: []auth.Option{auth.WithDefaultRateLimit(auth.PerMinute(1))},
			steps: []step{
				{wantStatus: 200, remaining: "0", reset: "1m0s"},
				{advance: 30 * time.Second, wantStatus: 429, remaining: "0", reset: "30s", retryAfter: "30"},
				{advance: 30 * time.Second, wantStatus: 200, remaining: "0", reset: "1m0s"},
			},
		},
		{
			name: "KeyLimitOverridesTheDefault",
			key:  "key_rate",
			opts: []auth.Option{auth.WithDefaultRateLimit(auth.PerMinute(1))},
			steps: []step{
				{wantStatus: 200, remaining: "1", reset: "1s"},
				{wantStatus: 200, remaining: "0", reset: "2s"},
			},
		},
		{
			name: "KeyCanOptOutOfTheDefault",
			key:  "key_norate",
			opts: []auth.Option{auth.WithDefaultRateLimit(auth.PerMinute(1))},
			steps: []step{
				{wantStatus: 200}, {wantStatus: 200}, {wantStatus: 200},
			},
		},
		{
			name:  "NoLimitByDefault",
			key:   "key_ok",
			steps: []step{{wantStatus: 200}, {wantStatus: 200}, {wantStatus: 200}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b := setup(t, tc.opts...)
				for i, s := range tc.steps {
					time.Sleep(s.advance)
					w := b.do(bearer(tc.key), "")
					require.Equal(t, s.wantStatus, w.Code, "step %d: %s", i, w.Body)
					h := w.Header()
					limited := s.remaining != ""
					require.Equal(t, limited, h.Get(auth.HeaderLimitRequests) != "", "step %d: x-ratelimit-limit-requests present", i)
					require.Equal(t, s.remaining, h.Get(auth.HeaderRemainingRequests), "step %d: remaining", i)
					require.Equal(t, s.reset, h.Get(auth.HeaderResetRequests), "step %d: reset", i)
					require.Equal(t, s.retryAfter, h.Get("Retry-After"), "step %d: Retry-After", i)
				}
			})
		})
	}
}

func TestFormatReset(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   time.Duration
		want string
	}{
		{0, "0s"},
		{-time.Second, "0s"},
		{time.Nanosecond, "1ms"},
		{12 * time.Millisecond, "12ms"},
		{time.Second, "1s"},
		{8640 * time.Millisecond, "8.64s"},
		{8640*time.Millisecond + 1, "8.641s"},
		{6 * time.Minute, "6m0s"},
		{time.Hour + 30*time.Second, "1h0m30s"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			got := auth.FormatReset(tc.in)
			require.Equal(t, tc.want, got)
			d, err := time.ParseDuration(got)
			require.NoError(t, err)
			require.GreaterOrEqual(t, d, tc.in, "rounds up")
		})
	}
}

// sessionAuth accepts the cookie session=good, refuses session=expired,
// and fails on session=broken.
var sessionAuth = auth.SessionAuthenticatorFunc(func(r *http.Request) (*auth.Principal, error) {
	c, err := r.Cookie("session")
	if err != nil {
		return nil, nil
	}
	switch c.Value {
	case "good":
		return &auth.Principal{KeyID: "user_1", Owner: "acme", Quota: auth.UnlimitedQuota()}, nil
	case "limited":
		return &auth.Principal{KeyID: "user_2", Owner: "acme", RateLimit: auth.Limit{Requests: 1, Period: time.Second}}, nil
	case "expired":
		return nil, apierrors.InvalidAPIKey("The session has expired. Sign in again.")
	default:
		return nil, errors.New("session store down")
	}
})

func TestMiddlewareSession(t *testing.T) {
	t.Parallel()
	cookie := func(v string) map[string][]string { return map[string][]string{"Cookie": {"session=" + v}} }
	tests := []struct {
		name        string
		opts        []auth.Option
		header      map[string][]string
		repeat      int
		wantStatus  int
		wantCode    string
		wantMessage string
		wantKey     string
		wantCred    auth.CredentialKind
		wantLimit   string
	}{
		{
			name:       "SessionAcceptedWithoutAPIKey",
			opts:       []auth.Option{auth.WithSessionAuthenticator(sessionAuth)},
			header:     cookie("good"),
			wantStatus: 200, wantKey: "user_1", wantCred: auth.CredentialSession,
		},
		{
			name:       "APIKeyPreferredToSession",
			opts:       []auth.Option{auth.WithSessionAuthenticator(sessionAuth)},
			header:     map[string][]string{"Cookie": {"session=good"}, "Authorization": {"Bearer {key_ok}"}},
			wantStatus: 200, wantKey: "key_ok", wantCred: auth.CredentialBearer,
		},
		{
			name:       "InvalidAPIKeyDoesNotFallBackToSession",
			opts:       []auth.Option{auth.WithSessionAuthenticator(sessionAuth)},
			header:     map[string][]string{"Cookie": {"session=good"}, "Authorization": {"Bearer sk-unknown"}},
			wantStatus: 401, wantCode: "invalid_api_key",
			wantMessage: "Incorrect API key provided. You can find your API key on the key page of the user centre.",
		},
		{
			name:       "NoSessionIsMissingAuthorization",
			opts:       []auth.Option{auth.WithSessionAuthenticator(sessionAuth)},
			wantStatus: 401, wantCode: "missing_authorization",
		},
		{
			name:       "RefusedSessionIsRenderedAsReturned",
			opts:       []auth.Option{auth.WithSessionAuthenticator(sessionAuth)},
			header:     cookie("expired"),
			wantStatus: 401, wantCode: "invalid_api_key", wantMessage: "The session has expired. Sign in again.",
		},
		{
			name:       "FailingSessionAuthenticatorIsAnOutage",
			opts:       []auth.Option{auth.WithSessionAuthenticator(sessionAuth)},
			header:     cookie("broken"),
			wantStatus: 503, wantCode: "service_unavailable",
		},
		{
			name:       "SessionIgnoredWithoutTheOption",
			header:     cookie("good"),
			wantStatus: 401, wantCode: "missing_authorization",
		},
		{
			name:       "DefaultLimitAppliesToSessions",
			opts:       []auth.Option{auth.WithSessionAuthenticator(sessionAuth), auth.WithDefaultRateLimit(auth.PerMinute(1))},
			header:     cookie("good"),
			repeat:     1,
			wantStatus: 429, wantCode: "rate_limit_exceeded",
			wantMessage: "Rate limit reached for requests: limit 1 per 1m0s. Please try again in 1m0s.",
		},
		{
			name:       "SessionLimitOverridesTheDefault",
			opts:       []auth.Option{auth.WithSessionAuthenticator(sessionAuth), auth.WithDefaultRateLimit(auth.PerMinute(100))},
			header:     cookie("limited"),
			wantStatus: 200, wantKey: "user_2", wantCred: auth.CredentialSession, wantLimit: "1",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b := setup(t, tc.opts...)
				for range tc.repeat {
					require.Equal(t, 200, b.do(tc.header, "").Code)
				}
				w := b.do(tc.header, "")
				require.Equal(t, tc.wantStatus, w.Code, "body: %s", w.Body)
				if tc.wantStatus != 200 {
					var body apierrors.Body
					require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
					require.Equal(t, tc.wantCode, body.Error.Code)
					if tc.wantMessage != "" {
						require.Equal(t, tc.wantMessage, body.Error.Message)
					}
					return
				}
				var p auth.Principal
				require.NoError(t, json.Unmarshal(w.Body.Bytes(), &p))
				require.Equal(t, tc.wantKey, p.KeyID)
				require.Equal(t, tc.wantCred, p.Credential)
				require.Equal(t, tc.wantLimit, w.Header().Get(auth.HeaderLimitRequests))
			})
		})
	}
}

func TestMiddlewarePanicsOnNilKeyStore(t *testing.T) {
	t.Parallel()
	require.PanicsWithValue(t, "auth: Middleware: nil KeyStore", func() { auth.Middleware(nil) })
}

// failingStore fails every call with an error that, carelessly, contains
// the secret.
type failingStore struct{ err error }

func (s failingStore) Lookup(_ context.Context, secret string) (*auth.Key, error) {
	return nil, fmt.Errorf("lookup %q: %w", secret, s.err)
}

func (s failingStore) Reserve(context.Context, string, int64) error { return s.err }

func (s failingStore) Settle(context.Context, auth.SettleParams) (auth.Quota, error) {
	return auth.Quota{}, s.err
}

type failingLimiter struct{}

func (failingLimiter) Allow(context.Context, string, auth.Limit) (auth.Decision, error) {
	return auth.Decision{}, errors.New("limiter down")
}

// TestMiddlewareDependencyFailures: a KeyStore that cannot be reached is an
// outage, a 503 with Retry-After in the error shape of the request's
// family, whose cause is logged (scrubbed of the secret) and never sent;
// only the request's own deadline is a 504.
func TestMiddlewareDependencyFailures(t *testing.T) {
	t.Parallel()
	secret := authtest.NewSeed(t, auth.Key{}).Secret
	tests := []struct {
		name       string
		store      auth.KeyStore
		opts       []auth.Option
		path       string
		deadline   bool // the request's own deadline has passed
		wantStatus int
		wantCode   string // of the general shape
		wantBody   string // a fragment of another shape
		wantRetry  string
	}{
		{name: "KeyStoreErrorIsUnavailable", store: failingStore{errors.New("db down")}, wantStatus: 503, wantCode: "service_unavailable", wantRetry: "2"},
		{name: "KeyStoresOwnTimeoutIsUnavailable", store: failingStore{fmt.Errorf("connect: %w", context.DeadlineExceeded)}, wantStatus: 503, wantCode: "service_unavailable", wantRetry: "2"},
		{name: "RequestDeadlineIsTimeout", store: failingStore{context.DeadlineExceeded}, deadline: true, wantStatus: 504, wantCode: "gateway_timeout"},
		{
			name: "MessagesShape", store: failingStore{errors.New("db down")}, path: "/v1/messages",
			opts:       []auth.Option{auth.WithErrorShape(apierrors.ShapeFor)},
			wantStatus: 503, wantBody: `{"type":"error","error":{"type":"api_error"`, wantRetry: "2",
		},
		{
			name: "GoogleShape", store: failingStore{errors.New("db down")}, path: "/v1beta/models/m:generateContent",
			opts:       []auth.Option{auth.WithErrorShape(apierrors.ShapeFor)},
			wantStatus: 503, wantBody: `"status":"UNAVAILABLE"`, wantRetry: "2",
		},
		{
			name:       "LimiterErrorFailingClosedIsUnavailable",
			store:      storeWith(t, secret, auth.Key{ID: "key_1", Quota: auth.UnlimitedQuota()}),
			opts:       []auth.Option{auth.WithLimiter(failingLimiter{}), auth.WithDefaultRateLimit(auth.PerMinute(10)), auth.WithLimiterFailure(auth.FailClosed)},
			wantStatus: 503, wantCode: "service_unavailable", wantRetry: "2",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			h := auth.Middleware(tc.store, append(tc.opts, auth.WithLogger(logger))...)(http.HandlerFunc(echoPrincipal))
			ctx := context.Background()
			if tc.deadline {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, time.Unix(0, 0))
				defer cancel()
			}
			path := cmpOr(tc.path, "/v1/models")
			r := httptest.NewRequestWithContext(ctx, http.MethodPost, path, nil)
			r.Header.Set("Authorization", "Bearer "+secret)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			require.Equal(t, tc.wantStatus, w.Code)
			require.Equal(t, tc.wantRetry, w.Header().Get("Retry-After"))
			if tc.wantBody != "" {
				require.Contains(t, w.Body.String(), tc.wantBody)
			} else {
				var body apierrors.Body
				require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
				require.Equal(t, tc.wantCode, body.Error.Code)
			}
			require.NotContains(t, w.Body.String(), "down", "the cause must not reach the client")
			require.NotEmpty(t, logs.String())
			require.NotContains(t, logs.String(), secret)
			if _, ok := tc.store.(failingStore); ok {
				require.Contains(t, logs.String(), "[REDACTED]", "the store's error is logged, scrubbed")
			}
		})
	}
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// TestMiddlewareLimiterFailsOpen: by default a Limiter that fails lets the
// request through, without rate-limit headers; the failure is observed
// every time and logged at most once per interval, with a count.
func TestMiddlewareLimiterFailsOpen(t *testing.T) {
	t.Parallel()
	var observed atomic.Int64
	synctest.Test(t, func(t *testing.T) {
		b := setup(t, auth.WithLimiter(failingLimiter{}), auth.WithDefaultRateLimit(auth.PerMinute(10)),
			auth.WithLimiterErrorObserver(func(ctx context.Context, err error) {
				require.EqualError(t, err, "limiter down")
				_, ok := auth.PrincipalFrom(ctx)
				require.False(t, ok, "observed before the principal is in the context")
				observed.Add(1)
			}))
		lines := func() int { return strings.Count(b.logs.String(), "the rate limiter failed") }

		for range 3 {
			w := b.do(bearer("key_ok"), "")
			require.Equal(t, 200, w.Code, "body: %s", w.Body)
			var p auth.Principal
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &p))
			require.Equal(t, "key_ok", p.KeyID)
			require.Empty(t, w.Header().Get(auth.HeaderLimitRequests), "no decision, no headers")
		}
		require.EqualValues(t, 3, observed.Load())
		require.Equal(t, 1, lines(), "logged once per interval")
		require.Contains(t, b.logs.String(), `"failures":1`)

		time.Sleep(10 * time.Second)
		require.Equal(t, 200, b.do(bearer("key_ok"), "").Code)
		require.Equal(t, 2, lines(), "and again after the interval")
		require.Contains(t, b.logs.String(), `"failures":3`, "with the failures since the last line")
		require.Contains(t, b.logs.String(), `"level":"ERROR"`)
	})
}

func TestLimiterFailureText(t *testing.T) {
	t.Parallel()
	for _, f := range []auth.LimiterFailure{auth.FailOpen, auth.FailClosed} {
		text, err := f.MarshalText()
		require.NoError(t, err)
		var back auth.LimiterFailure
		require.NoError(t, back.UnmarshalText(text))
		require.Equal(t, f, back)
	}
	require.Equal(t, "open", auth.LimiterFailure(0).String(), "the zero value fails open")
	var f auth.LimiterFailure
	require.EqualError(t, f.UnmarshalText([]byte("shut")), `auth: limiter failure "shut": want open or closed`)
}

// TestMiddlewareQuotaRefusesOnlySpending: a key that has spent its quota,
// or its budget in money, is refused on the requests that spend, and may
// still read and delete what it owns.
func TestMiddlewareQuotaRefusesOnlySpending(t *testing.T) {
	t.Parallel()
	readsSpend := auth.WithSpending(func(r *http.Request) bool { return r.URL.Path == "/v1/priced-read" })
	tests := []struct {
		name, key, method, path string
		opts                    []auth.Option
		wantStatus              int
		wantMessage             string
	}{
		{"ExhaustedKeyCreates", "key_broke", "POST", "/v1/videos", nil, 403, "You exceeded the quota of this API key. Please check your plan and billing details."},
		{"SpentBudgetCreates", "key_spent", "POST", "/v1/videos", nil, 403, "You exceeded the budget of this API key (its cost in US dollars reached its budget_usd). Please check your plan and billing details."},
		{"ExhaustedKeyPolls", "key_broke", "GET", "/v1/videos/task_1", nil, 200, ""},
		{"ExhaustedKeyDownloads", "key_broke", "HEAD", "/v1/videos/task_1/content", nil, 200, ""},
		{"ExhaustedKeyDeletes", "key_broke", "DELETE", "/v1/responses/resp_1", nil, 200, ""},
		{"ExhaustedKeyPreflights", "key_broke", "OPTIONS", "/v1/models", nil, 200, ""},
		{"SpentBudgetReads", "key_spent", "GET", "/v1/models", nil, 200, ""},
		{"PolicyChosenByTheEmbedder", "key_broke", "GET", "/v1/priced-read", []auth.Option{readsSpend}, 403, ""},
		{"PolicyLetsThePostThrough", "key_broke", "POST", "/v1/free-create", []auth.Option{readsSpend}, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				b := setup(t, tc.opts...)
				r := httptest.NewRequest(tc.method, tc.path, nil)
				r.Header.Set("Authorization", "Bearer "+b.secrets[tc.key])
				w := httptest.NewRecorder()
				b.handler.ServeHTTP(w, r)
				require.Equal(t, tc.wantStatus, w.Code, "body: %s", w.Body)
				if tc.wantStatus == 403 {
					var body apierrors.Body
					require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
					require.Equal(t, "insufficient_quota", body.Error.Code)
					if tc.wantMessage != "" {
						require.Equal(t, tc.wantMessage, body.Error.Message)
					}
					return
				}
				if tc.method == http.MethodHead {
					return
				}
				var p auth.Principal
				require.NoError(t, json.Unmarshal(w.Body.Bytes(), &p))
				require.Equal(t, tc.key, p.KeyID)
				require.True(t, p.Quota.Exhausted(), "the principal carries the spent quota")
			})
		})
	}
}

func TestSpends(t *testing.T) {
	t.Parallel()
	for method, want := range map[string]bool{
		"GET": false, "HEAD": false, "OPTIONS": false, "DELETE": false,
		"POST": true, "PUT": true, "PATCH": true,
	} {
		require.Equal(t, want, auth.Spends(httptest.NewRequest(method, "/v1/x", nil)), method)
	}
}

func TestMiddlewareSendsNothingWhenTheClientHasGone(t *testing.T) {
	t.Parallel()
	h := auth.Middleware(failingStore{context.Canceled})(http.HandlerFunc(echoPrincipal))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/v1/models", nil)
	r.Header.Set("Authorization", "Bearer sk-abc")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	require.Empty(t, w.Body.String())
}

func storeWith(t *testing.T, secret string, keys ...auth.Key) *auth.MemoryKeyStore {
	t.Helper()
	s := auth.NewMemoryKeyStore()
	for _, k := range keys {
		require.NoError(t, s.Add(context.Background(), secret, k))
	}
	return s
}

// TestMiddlewareNeverLogsSecrets sends every case of the table, logging at
// debug level, and looks for the secrets in the log.
func TestMiddlewareNeverLogsSecrets(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setup(t, auth.WithDefaultRateLimit(auth.PerMinute(1000)))
		for _, tc := range middlewareCases {
			for range tc.warmup + 1 {
				b.do(tc.header, tc.query)
			}
		}
		logs := b.logs.String()
		require.Contains(t, logs, `"key_id":"key_ok"`, "successful requests are logged by key id")
		require.Contains(t, logs, "invalid_api_key", "refusals are logged")
		for id, secret := range b.secrets {
			require.NotContains(t, logs, secret, "the log contains the secret of %s", id)
			require.NotContains(t, logs, secret[len(auth.KeyPrefix):], "the log contains the secret of %s", id)
		}
	})
}

func TestCredentialRedactsItself(t *testing.T) {
	t.Parallel()
	c := auth.Credential{Kind: auth.CredentialXAPIKey, Secret: "sk-supersecret"}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("x", "cred", c)
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s", c, c, c, c), logs.String()} {
		require.NotContains(t, s, "supersecret")
	}
	require.Contains(t, logs.String(), "x-api-key")
}

func TestCharge(t *testing.T) {
	t.Parallel()

	t.Run("RecordsUsageAgainstTheKey", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			b := setup(t)
			var got auth.Quota
			var err error
			h := auth.Middleware(b.keys)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, err = auth.Charge(r.Context(), 40)
			}))
			r := httptest.NewRequest(http.MethodPost, "/", nil)
			r.Header.Set("Authorization", "Bearer "+b.secrets["key_quota"])
			h.ServeHTTP(httptest.NewRecorder(), r)
			require.NoError(t, err)
			require.Equal(t, auth.Quota{Remaining: 60, Used: 40}, got)
		})
	})

	t.Run("ChargesEvenWhenTheClientHasGone", func(t *testing.T) {
		t.Parallel()
		rec := &recordingStore{KeyStore: storeWith(t, "sk-abc", auth.Key{ID: "key_1", Quota: auth.LimitedQuota(10)})}
		h := auth.Middleware(rec)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithCancel(r.Context())
			cancel()
			_, err := auth.Charge(ctx, 3)
			require.NoError(t, err)
		}))
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Header.Set("Authorization", "Bearer sk-abc")
		h.ServeHTTP(httptest.NewRecorder(), r)
		require.Equal(t, []error{nil}, rec.ctxErrs)
	})

	t.Run("ReturnsErrNoPrincipalOutsideTheMiddleware", func(t *testing.T) {
		t.Parallel()
		_, err := auth.Charge(context.Background(), 1)
		require.ErrorIs(t, err, auth.ErrNoPrincipal)
	})

	t.Run("RecordsNothingForAPrincipalWithoutAStore", func(t *testing.T) {
		t.Parallel()
		p := &auth.Principal{KeyID: "k", Quota: auth.LimitedQuota(5)}
		q, err := auth.Charge(auth.WithPrincipal(context.Background(), p), 100)
		require.NoError(t, err)
		require.Equal(t, auth.LimitedQuota(5), q)
	})

	t.Run("RefusesANegativeAmount", func(t *testing.T) {
		t.Parallel()
		p := &auth.Principal{KeyID: "k"}
		_, err := auth.Charge(auth.WithPrincipal(context.Background(), p), -1)
		require.Error(t, err)
	})

	t.Run("ConcurrentRequestsNeverOverdrawUnnoticed", func(t *testing.T) {
		t.Parallel()
		// 150 requests charge 1 each against a budget of 100: each
		// request is either refused with 403 up front, or charged; exactly
		// 100 charges succeed, and the rest are reported.
		const requests = 150
		synctest.Test(t, func(t *testing.T) {
			b := setup(t)
			var charged, exceeded, refused atomic.Int64
			h := auth.Middleware(b.keys)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, err := auth.Charge(r.Context(), 1)
				switch {
				case err == nil:
					charged.Add(1)
				case errors.Is(err, auth.ErrQuotaExceeded):
					exceeded.Add(1)
				default:
					t.Errorf("Charge: %v", err)
				}
			}))
			var wg sync.WaitGroup
			for range requests {
				wg.Go(func() {
					r := httptest.NewRequest(http.MethodPost, "/", nil)
					r.Header.Set("Authorization", "Bearer "+b.secrets["key_quota"])
					w := httptest.NewRecorder()
					h.ServeHTTP(w, r)
					if w.Code == http.StatusForbidden {
						refused.Add(1)
					}
				})
			}
			wg.Wait()
			require.Equal(t, int64(100), charged.Load())
			require.Equal(t, int64(requests-100), exceeded.Load()+refused.Load())
			k, err := b.keys.Lookup(context.Background(), b.secrets["key_quota"])
			require.NoError(t, err)
			require.Equal(t, auth.Quota{Remaining: 0, Used: 100 + exceeded.Load()}, k.Quota)
		})
	})
}

// recordingStore records the context error seen by each Settle.
type recordingStore struct {
	auth.KeyStore
	mu      sync.Mutex
	ctxErrs []error
}

func (s *recordingStore) Settle(ctx context.Context, p auth.SettleParams) (auth.Quota, error) {
	s.mu.Lock()
	s.ctxErrs = append(s.ctxErrs, ctx.Err())
	s.mu.Unlock()
	return s.KeyStore.Settle(ctx, p)
}

func TestPrincipalFrom(t *testing.T) {
	t.Parallel()
	_, ok := auth.PrincipalFrom(context.Background())
	require.False(t, ok)
	p := &auth.Principal{KeyID: "k"}
	got, ok := auth.PrincipalFrom(auth.WithPrincipal(context.Background(), p))
	require.True(t, ok)
	require.Same(t, p, got)
	_, ok = auth.PrincipalFrom(auth.WithPrincipal(context.Background(), nil))
	require.False(t, ok)
}

func TestPrincipalAllowsModel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		allowed []string
		model   string
		want    bool
	}{
		{"EmptyListAllowsAll", nil, "gpt-4o", true},
		{"ListedModel", []string{"gpt-4o", "sora-2"}, "sora-2", true},
		{"UnlistedModel", []string{"gpt-4o"}, "gpt-4o-mini", false},
		{"ExactMatchOnly", []string{"gpt-4o"}, "GPT-4O", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := &auth.Principal{AllowedModels: tc.allowed}
			require.Equal(t, tc.want, p.AllowsModel(tc.model))
		})
	}
}

// TestWithKeyObserver: the observer learns the key id of every request
// whose credential resolves to a key, refused or not, and of no other.
func TestWithKeyObserver(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, auth string
		status     int
		want       string // the key id observed; empty: not called
	}{
		{"allowed", "Bearer {key_ok}", 200, "key_ok"},
		{"no quota", "Bearer {key_broke}", 403, "key_broke"},
		{"disabled", "Bearer {key_disabled}", 401, "key_disabled"},
		{"expired", "Bearer {key_expired}", 401, "key_expired"},
		{"rate limited", "Bearer {key_rate}", 429, "key_rate"},
		{"unknown key", "Bearer sk-unknown", 401, ""},
		{"malformed", "Bearer nope", 401, ""},
		{"missing", "", 401, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var calls []string
			synctest.Test(t, func(t *testing.T) {
				b := setup(t, auth.WithKeyObserver(func(w http.ResponseWriter, r *http.Request, keyID string) {
					require.NotNil(t, w)
					require.NotNil(t, r)
					calls = append(calls, keyID)
				}))
				header := map[string][]string{}
				if tc.auth != "" {
					header["Authorization"] = []string{tc.auth}
				}
				var rec *httptest.ResponseRecorder
				for range 3 { // key_rate allows 2
					calls = nil
					rec = b.do(header, "")
					if rec.Code != 200 || tc.status == 200 {
						break
					}
				}
				require.Equal(t, tc.status, rec.Code, rec.Body.String())
				if tc.want == "" {
					require.Empty(t, calls)
					return
				}
				require.Equal(t, []string{tc.want}, calls, "called once, with the id")
			})
		})
	}
}
