package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/auth/authtest"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// exampleSecret is a fixed key, so that the examples' output is stable;
// real keys come from auth.NewSecret.
const exampleSecret = "sk-example0123456789abcdefABCDEF"

func exampleStore(k auth.Key) *auth.MemoryKeyStore {
	keys := auth.NewMemoryKeyStore()
	if err := keys.Add(context.Background(), exampleSecret, k); err != nil {
		panic(err)
	}
	return keys
}

func exampleGet(h http.Handler, header ...string) *httptest.ResponseRecorder {
	return exampleDo(h, httptest.NewRequest(http.MethodGet, "/v1/models", nil), header...)
}

// examplePost sends a request that spends quota (auth.Spends).
func examplePost(h http.Handler, header ...string) *httptest.ResponseRecorder {
	return exampleDo(h, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil), header...)
}

func exampleDo(h http.Handler, r *http.Request, header ...string) *httptest.ResponseRecorder {
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func ExampleMiddleware() {
	keys := exampleStore(auth.Key{ID: "key_1", Owner: "acme", Quota: auth.UnlimitedQuota()})
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := auth.PrincipalFrom(r.Context())
		fmt.Fprintf(w, "hello %s (key %s, via %s)\n", p.Owner, p.KeyID, p.Credential)
	})
	h := auth.Middleware(keys)(hello)

	for _, header := range [][]string{
		{"Authorization", "Bearer " + exampleSecret},
		{"X-Goog-Api-Key", exampleSecret},
		{},
		{"Authorization", "Basic dXNlcjpwYXNz"},
		{"Authorization", "Bearer sk-unknown"},
	} {
		w := exampleGet(h, header...)
		fmt.Print(w.Code, " ", w.Body)
	}
	// Output:
	// 200 hello acme (key key_1, via bearer)
	// 200 hello acme (key key_1, via x-goog-api-key)
	// 401 {"error":{"message":"You didn't provide an API key. Send it in the Authorization header using the Bearer scheme: 'Authorization: Bearer sk-...'.","type":"invalid_request_error","param":null,"code":"missing_authorization"}}
	// 401 {"error":{"message":"The Authorization header must use the Bearer scheme: 'Authorization: Bearer sk-...'.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}
	// 401 {"error":{"message":"Incorrect API key provided. You can find your API key on the key page of the user centre.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}
}

func ExampleCharge() {
	keys := exampleStore(auth.Key{ID: "key_1", Quota: auth.LimitedQuota(1000)})
	generate := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// ... do the work, then charge what it used (tokens).
		q, err := auth.Charge(r.Context(), 600)
		if errors.Is(err, auth.ErrQuotaExceeded) {
			fmt.Println("charged 600: budget overrun, now", q.Remaining)
			return
		}
		fmt.Println("charged 600: remaining", q.Remaining)
	})
	h := auth.Middleware(keys)(generate)
	for range 3 {
		w := examplePost(h, "Authorization", "Bearer "+exampleSecret)
		if w.Code != http.StatusOK {
			fmt.Print(w.Code, " ", w.Body)
		}
	}
	// Output:
	// charged 600: remaining 400
	// charged 600: budget overrun, now 0
	// 403 {"error":{"message":"You exceeded the quota of this API key. Please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}
}

func ExampleReserve() {
	keys := exampleStore(auth.Key{ID: "key_1", Quota: auth.LimitedQuota(1000)})
	var inFlight []*auth.Reservation
	h := auth.Middleware(keys)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reserve an estimate before the work, so that concurrent
		// requests cannot all spend the same budget.
		res, err := auth.Reserve(r.Context(), 800)
		if errors.Is(err, auth.ErrQuotaExceeded) {
			fmt.Println("refused: all of the budget is reserved")
			return
		}
		fmt.Println("reserved", res.Amount())
		inFlight = append(inFlight, res) // settled when the work ends
	}))
	examplePost(h, "Authorization", "Bearer "+exampleSecret) // in flight
	examplePost(h, "Authorization", "Bearer "+exampleSecret) // finds 200 unreserved
	examplePost(h, "Authorization", "Bearer "+exampleSecret) // finds nothing unreserved

	// The first request ends: it used 300 of its 800.
	q, _ := inFlight[0].Settle(context.Background(), 300)
	fmt.Printf("remaining %d, reserved %d, used %d\n", q.Remaining, q.Reserved, q.Used)
	// Output:
	// reserved 800
	// reserved 800
	// refused: all of the budget is reserved
	// remaining 700, reserved 800, used 300
}

func ExampleWithDefaultRateLimit() {
	keys := exampleStore(auth.Key{ID: "key_1", Quota: auth.UnlimitedQuota()})
	clock := authtest.NewClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	h := auth.Middleware(keys,
		auth.WithDefaultRateLimit(auth.PerMinute(2)),
		auth.WithLimiter(auth.NewMemoryLimiter(&auth.MemoryLimiterOptions{Now: clock.Now})),
	)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))

	for range 3 {
		w := exampleGet(h, "Authorization", "Bearer "+exampleSecret)
		fmt.Printf("%d limit=%s remaining=%s reset=%s retry-after=%q\n", w.Code,
			w.Header().Get("x-ratelimit-limit-requests"),
			w.Header().Get("x-ratelimit-remaining-requests"),
			w.Header().Get("x-ratelimit-reset-requests"),
			w.Header().Get("Retry-After"))
	}
	clock.Advance(30 * time.Second)
	fmt.Println(exampleGet(h, "Authorization", "Bearer "+exampleSecret).Code)
	// Output:
	// 200 limit=2 remaining=1 reset=30s retry-after=""
	// 200 limit=2 remaining=0 reset=1m0s retry-after=""
	// 429 limit=2 remaining=0 reset=1m0s retry-after="30"
	// 200
}

func ExampleWithSessionAuthenticator() {
	keys := exampleStore(auth.Key{ID: "key_1", Quota: auth.UnlimitedQuota()})
	// The admin console's session cookie, checked by the embedder.
	sessions := auth.SessionAuthenticatorFunc(func(r *http.Request) (*auth.Principal, error) {
		c, err := r.Cookie("console_session")
		if err != nil || c.Value != "valid" {
			return nil, nil // no session: 401 missing_authorization
		}
		return &auth.Principal{KeyID: "user_42", Owner: "acme", Quota: auth.UnlimitedQuota()}, nil
	})
	content := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := auth.PrincipalFrom(r.Context())
		fmt.Fprintf(w, "video for %s via %s\n", p.KeyID, p.Credential)
	})
	// A separate middleware for the content route only.
	mux := http.NewServeMux()
	mux.Handle("GET /v1/videos/{task_id}/content",
		auth.Middleware(keys, auth.WithSessionAuthenticator(sessions))(content))

	for _, header := range [][]string{
		{"Cookie", "console_session=valid"},
		{"Authorization", "Bearer " + exampleSecret},
		{"Cookie", "console_session=forged"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/v1/videos/task_1/content", nil)
		r.Header.Set(header[0], header[1])
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		fmt.Print(w.Code, " ", strings.SplitAfter(w.Body.String(), "\n")[0])
	}
	// Output:
	// 200 video for user_42 via session
	// 200 video for key_1 via bearer
	// 401 {"error":{"message":"You didn't provide an API key. Send it in the Authorization header using the Bearer scheme: 'Authorization: Bearer sk-...'.","type":"invalid_request_error","param":null,"code":"missing_authorization"}}
}

func ExampleParseCredential() {
	r := httptest.NewRequest(http.MethodGet, "/v1beta/models?key="+exampleSecret, nil)
	r.Header.Set("X-Api-Key", exampleSecret)
	c, err := auth.ParseCredential(r)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Kind, c.Secret == exampleSecret)
	fmt.Println(c) // a Credential redacts its secret
	// Output:
	// x-api-key true
	// x-api-key [REDACTED]
}

func ExampleNewSecret() {
	secret, err := auth.NewSecret()
	if err != nil {
		panic(err)
	}
	fmt.Println(secret[:3], len(secret), auth.ValidSecret(secret))
	// Output: sk- 46 true
}

func ExampleMemoryKeyStore() {
	ctx := context.Background()
	keys := auth.NewMemoryKeyStore()
	secret, _ := auth.NewSecret()
	_ = keys.Add(ctx, secret, auth.Key{
		ID:            "key_1",
		Owner:         "acme",
		Quota:         auth.LimitedQuota(50_000), // tokens
		RateLimit:     &auth.Limit{Requests: 60, Period: time.Minute},
		AllowedModels: []string{"gpt-4o-mini"},
	})
	_ = keys.Reserve(ctx, "key_1", 2_000) // a request's estimate
	q, _ := keys.Settle(ctx, auth.SettleParams{KeyID: "key_1", Reserved: 2_000, Used: 1_200})
	fmt.Println(q.Remaining, q.Reserved, q.Used)

	_ = keys.Disable(ctx, "key_1")
	k, _ := keys.Lookup(ctx, secret)
	fmt.Println(k.ID, k.Disabled)
	// Output:
	// 48800 0 1200
	// key_1 true
}

// A limit in the text form of configuration files and flags.
func ExampleParseLimit() {
	l, err := auth.ParseLimit("5/s")
	if err != nil {
		panic(err)
	}
	fmt.Println(l.Requests, l.Period, l)
	l, _ = auth.ParseLimit("unlimited")
	fmt.Println(l.Unlimited(), l)
	// Output:
	// 5 1s 5/1s
	// true unlimited
}

// An access log around the middleware names the key of every request,
// also of those it refuses before any handler runs.
func ExampleWithKeyObserver() {
	keys := exampleStore(auth.Key{ID: "key_1", Quota: auth.UnlimitedQuota(), RateLimit: &auth.Limit{Requests: 1, Period: time.Hour}})
	// keyIDs maps each request to the key it named; an access log would
	// keep it in the ResponseWriter it wraps.
	keyIDs := make(map[*http.Request]string)
	h := auth.Middleware(keys, auth.WithKeyObserver(func(w http.ResponseWriter, r *http.Request, keyID string) {
		keyIDs[r] = keyID
	}))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))

	for _, secret := range []string{exampleSecret, exampleSecret, "sk-unknown"} {
		r := httptest.NewRequest(http.MethodGet, "/v1/models", nil)
		r.Header.Set("Authorization", "Bearer "+secret)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Printf("%d key_id=%q\n", w.Code, keyIDs[r])
	}
	// Output:
	// 200 key_id="key_1"
	// 429 key_id="key_1"
	// 401 key_id=""
}

// A Limit is a JSON string in configuration files.
func ExampleLimit_UnmarshalText() {
	var key struct {
		RateLimit *auth.Limit `json:"rate_limit"`
	}
	if err := json.Unmarshal([]byte(`{"rate_limit":"600/m"}`), &key); err != nil {
		panic(err)
	}
	fmt.Println(key.RateLimit.Requests, key.RateLimit.Window())
	b, _ := json.Marshal(key)
	fmt.Println(string(b))
	// Output:
	// 600 1m0s
	// {"rate_limit":"600/1m0s"}
}

// Each settlement with a model is one usage row; a key with a budget in
// US dollars is refused once its cost reaches it.
func ExampleMemoryKeyStore_Usage() {
	ctx := context.Background()
	keys := auth.NewMemoryKeyStore()
	_ = keys.Add(ctx, exampleSecret, auth.Key{ID: "key_1", Quota: auth.Quota{Unlimited: true, BudgetUSD: 0.01}})
	day := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	for _, model := range []string{"demo-chat", "demo-reasoner", "demo-chat"} {
		_, _ = keys.Settle(ctx, auth.SettleParams{KeyID: "key_1", Used: 40,
			Model: model, InputTokens: 10, OutputTokens: 30, CostUSD: 0.004, Time: day})
	}
	rows, _ := keys.Usage(ctx, auth.UsageParams{KeyID: "key_1", GroupBy: auth.GroupByModel})
	for _, r := range rows {
		fmt.Printf("%s: %d requests, %d+%d tokens, %.3f USD\n", r.Model, r.Requests, r.InputTokens, r.OutputTokens, r.CostUSD)
	}
	err := keys.Reserve(ctx, "key_1", 100)
	fmt.Println(errors.Is(err, auth.ErrQuotaExceeded))
	// Output:
	// demo-chat: 2 requests, 20+60 tokens, 0.008 USD
	// demo-reasoner: 1 requests, 10+30 tokens, 0.004 USD
	// true
}

// downLimiter is a shared limiter whose Redis cannot be reached.
type downLimiter struct{}

func (downLimiter) Allow(context.Context, string, auth.Limit) (auth.Decision, error) {
	return auth.Decision{}, errors.New("redis: connection refused")
}

func ExampleWithLimiterFailure() {
	keys := exampleStore(auth.Key{ID: "key_1", Quota: auth.UnlimitedQuota()})
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "served") })
	for _, f := range []auth.LimiterFailure{auth.FailOpen, auth.FailClosed} {
		h := auth.Middleware(keys, auth.WithLimiter(downLimiter{}), auth.WithDefaultRateLimit(auth.PerMinute(60)),
			auth.WithLimiterFailure(f))(ok)
		w := exampleGet(h, "Authorization", "Bearer "+exampleSecret)
		fmt.Printf("%s: %d Retry-After=%q %s", f, w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	// Output:
	// open: 200 Retry-After="" served
	// closed: 503 Retry-After="2" {"error":{"message":"The gateway cannot reach a service it depends on (its database or rate limiter) right now. Please retry shortly.","type":"server_error","param":null,"code":"service_unavailable"}}
}

func ExampleWithSpending() {
	// A key whose quota is spent still reads what it owns.
	keys := exampleStore(auth.Key{ID: "key_1", Quota: auth.LimitedQuota(0)})
	h := auth.Middleware(keys)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "served")
	}))
	fmt.Print("GET: ", exampleGet(h, "Authorization", "Bearer "+exampleSecret).Body)
	fmt.Print("POST: ", examplePost(h, "Authorization", "Bearer "+exampleSecret).Body)
	// Output:
	// GET: served
	// POST: {"error":{"message":"You exceeded the quota of this API key. Please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}
}

// An embedder's own sign-in, charged like an API key: a company user is a
// key without a secret, which the embedder's session cookie names by id.
// Its quota is reserved and settled, and its usage recorded, as a key's.
func ExampleIdentities() {
	ctx := context.Background()
	keys := auth.NewMemoryKeyStore()
	// The user's key: 30 tokens, no secret (only its id finds it).
	_ = keys.Add(ctx, "", auth.Key{ID: "user_42", Owner: "user_42", Quota: auth.LimitedQuota(30)})
	// An API key, for the company's scripts.
	_ = keys.Add(ctx, exampleSecret, auth.Key{ID: "key_1", Owner: "acme", Quota: auth.UnlimitedQuota()})

	// The embedder's sessions, by cookie value: user ids.
	signedIn := map[string]string{"c0ffee": "user_42"}
	sessionUser := func(r *http.Request) (string, error) {
		c, err := r.Cookie("acme_session")
		if err != nil {
			return "", nil // no session: ask the next authenticator
		}
		id, ok := signedIn[c.Value]
		if !ok {
			return "", apierrors.InvalidAPIKey("Your session has expired. Please sign in again.")
		}
		return id, nil
	}
	// A handler that spends 12 tokens a request.
	chat := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rsv, err := auth.Reserve(r.Context(), 16)
		if err != nil {
			apierrors.Write(w, r, apierrors.InsufficientQuota("quota exceeded"))
			return
		}
		q, _ := rsv.SettleUsage(r.Context(), auth.SettleParams{Used: 12, Model: "demo-chat", InputTokens: 4, OutputTokens: 8})
		p, _ := auth.PrincipalFrom(r.Context())
		fmt.Fprintf(w, "%s via %s, %d left\n", p.KeyID, p.Credential, q.Remaining)
	})
	h := auth.Middleware(keys, auth.WithAuthenticators(auth.Identities(keys, sessionUser), auth.APIKeys(keys)))(chat)

	for _, header := range [][]string{
		{"Cookie", "acme_session=c0ffee"},
		{"Cookie", "acme_session=c0ffee"},
		{"Cookie", "acme_session=c0ffee"},
		{"Cookie", "acme_session=c0ffee"},
		{"Authorization", "Bearer " + exampleSecret},
		{"Cookie", "acme_session=stale"},
	} {
		w := examplePost(h, header...)
		fmt.Print(w.Code, " ", w.Body)
	}
	rows, _ := keys.Usage(ctx, auth.UsageParams{KeyID: "user_42", GroupBy: auth.GroupByKey})
	fmt.Printf("%s: %d requests, %d+%d tokens\n", rows[0].KeyID, rows[0].Requests, rows[0].InputTokens, rows[0].OutputTokens)
	// Output:
	// 200 user_42 via identity, 18 left
	// 200 user_42 via identity, 6 left
	// 200 user_42 via identity, 0 left
	// 403 {"error":{"message":"You exceeded the quota of this API key. Please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}
	// 200 key_1 via bearer, 0 left
	// 401 {"error":{"message":"Your session has expired. Please sign in again.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}
	// user_42: 3 requests, 12+24 tokens
}
