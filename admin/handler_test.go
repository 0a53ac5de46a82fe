package admin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/admin"
	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
)

var update = flag.Bool("update", false, "update the golden files under testdata")

const adminKey = "admin-secret-0123456789abcdef"

// bundle is the admin API on a memory store, behind a test server.
type bundle struct {
	keys *auth.MemoryKeyStore
	srv  *httptest.Server
}

func setup(t *testing.T, opts ...admin.Option) *bundle {
	t.Helper()
	b := &bundle{keys: auth.NewMemoryKeyStore()}
	mux := http.NewServeMux()
	opts = append([]admin.Option{admin.WithAdminKey(adminKey)}, opts...)
	admin.Register(mux, admin.NewHandler(b.keys, opts...))
	b.srv = httptest.NewServer(mux)
	t.Cleanup(b.srv.Close)
	return b
}

// do sends a request with the admin key (if auth is not "none": then
// with auth as the Authorization header, "" for none) and returns the
// status and the body.
func (b *bundle) do(t *testing.T, method, path, body string, auth ...string) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, b.srv.URL+path, rd)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if len(auth) == 0 {
		req.Header.Set("Authorization", "Bearer "+adminKey)
	} else if auth[0] != "" {
		req.Header.Set("Authorization", auth[0])
	}
	res, err := b.srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, res.Header, data
}

// apiError is the general error envelope.
type apiError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Code    string  `json:"code"`
		Param   *string `json:"param"`
	} `json:"error"`
}

func decodeError(t *testing.T, body []byte) apiError {
	t.Helper()
	var e apiError
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&e), "%s", body)
	require.NotEmpty(t, e.Error.Message, "%s", body)
	return e
}

// golden compares body, with the fields of normalize replaced, with
// testdata/name.json.
func golden(t *testing.T, name string, body []byte, normalize func(v map[string]any)) {
	t.Helper()
	var got map[string]any
	require.NoError(t, json.Unmarshal(body, &got), "%s", body)
	if normalize != nil {
		normalize(got)
	}
	path := filepath.Join("testdata", name+".json")
	if *update {
		b, err := json.MarshalIndent(got, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./admin -update to create it")
	var wantV map[string]any
	require.NoError(t, json.Unmarshal(want, &wantV))
	if diff := cmp.Diff(wantV, got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// normalizeKey replaces the random and time fields of a key object.
func normalizeKey(v map[string]any) {
	if _, ok := v["id"]; ok {
		v["id"] = "key_ID"
	}
	if c, ok := v["created_at"].(float64); ok && c > 0 {
		v["created_at"] = 1.0
	}
	if _, ok := v["secret"]; ok {
		v["secret"] = "sk-SECRET"
	}
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tc := range []struct {
		name, auth, code string
	}{
		{"NoAuthorization", "", "missing_authorization"},
		{"WrongKey", "Bearer not-the-admin-key", "invalid_api_key"},
		{"APrefixOfTheKey", "Bearer " + adminKey[:10], "invalid_api_key"},
		{"BasicScheme", "Basic " + adminKey, "invalid_api_key"},
		{"NoToken", "Bearer", "invalid_api_key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status, hdr, body := b.do(t, http.MethodGet, "/admin/v1/keys", "", tc.auth)
			require.Equal(t, http.StatusUnauthorized, status, "%s", body)
			e := decodeError(t, body)
			require.Equal(t, tc.code, e.Error.Code)
			require.Nil(t, e.Error.Param)
			require.NotEmpty(t, hdr.Get("WWW-Authenticate"))
			require.Equal(t, "*", hdr.Get("Access-Control-Allow-Origin"), "errors carry CORS too, so a console can read them")
			require.NotContains(t, string(body), adminKey)
		})
	}
	t.Run("AcceptsTheKey", func(t *testing.T) {
		t.Parallel()
		status, _, body := b.do(t, http.MethodGet, "/admin/v1/keys", "")
		require.Equal(t, http.StatusOK, status, "%s", body)
	})
}

func TestCORSPreflight(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, path := range []string{"/admin/v1/keys", "/admin/v1/keys/key_x", "/admin/v1/usage"} {
		req, err := http.NewRequest(http.MethodOptions, b.srv.URL+path, nil)
		require.NoError(t, err)
		req.Header.Set("Origin", "http://127.0.0.1:8080")
		req.Header.Set("Access-Control-Request-Method", "PATCH")
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
		res, err := b.srv.Client().Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusNoContent, res.StatusCode, "a preflight needs no admin key")
		require.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"))
		require.Contains(t, res.Header.Get("Access-Control-Allow-Methods"), "PATCH")
		require.Contains(t, res.Header.Get("Access-Control-Allow-Headers"), "Authorization")
		require.Contains(t, res.Header.Get("Access-Control-Allow-Headers"), "Content-Type")
	}
}

func TestNewHandlerPanicsOnProgrammerError(t *testing.T) {
	t.Parallel()
	require.PanicsWithValue(t, "admin: NewHandler: nil Store", func() { admin.NewHandler(nil, admin.WithAdminKey("k")) })
	require.PanicsWithValue(t, "admin: NewHandler: no admin key (WithAdminKey)", func() { admin.NewHandler(auth.NewMemoryKeyStore()) })
}

func TestKeyValidation(t *testing.T) {
	t.Parallel()
	b := setup(t, admin.WithCatalog(models.NewMemoryCatalog(demo.TextModels()...)))
	for _, tc := range []struct {
		name, method, body, param string
	}{
		{"NotJSON", http.MethodPost, `{"owner":`, ""},
		{"NotAnObject", http.MethodPost, `[1]`, ""},
		{"Null", http.MethodPost, `null`, ""},
		{"UnknownField", http.MethodPost, `{"owner":"a","secret":"sk-mine"}`, "secret"},
		{"OwnerTwice", http.MethodPost, `{"owner":"a","owner":"b"}`, "owner"},
		{"PatchDisabledTwice", http.MethodPatch, `{"disabled":false,"disabled":true}`, "disabled"},
		{"DisabledOnCreate", http.MethodPost, `{"disabled":true}`, "disabled"},
		{"OwnerNotAString", http.MethodPost, `{"owner":5}`, "owner"},
		{"NegativeQuota", http.MethodPost, `{"quota":-1}`, "quota"},
		{"FractionalQuota", http.MethodPost, `{"quota":1.5}`, "quota"},
		{"QuotaAsAString", http.MethodPost, `{"quota":"100"}`, "quota"},
		{"BadRateLimit", http.MethodPost, `{"rate_limit":"5 per second"}`, "rate_limit"},
		{"ZeroRateLimit", http.MethodPost, `{"rate_limit":"0/s"}`, "rate_limit"},
		{"RateLimitAsANumber", http.MethodPost, `{"rate_limit":5}`, "rate_limit"},
		{"ModelsNotAnArray", http.MethodPost, `{"allowed_models":"demo-chat"}`, "allowed_models"},
		{"EmptyModelID", http.MethodPost, `{"allowed_models":["demo-chat",""]}`, "allowed_models[1]"},
		{"UnknownModel", http.MethodPost, `{"allowed_models":["demo-chat","gpt-9"]}`, "allowed_models[1]"},
		{"BadExpiry", http.MethodPost, `{"expires_at":"tomorrow"}`, "expires_at"},
		{"ExpiryWithoutZone", http.MethodPost, `{"expires_at":"2027-01-01T00:00:00"}`, "expires_at"},
		{"ZeroBudget", http.MethodPost, `{"budget_usd":0}`, "budget_usd"},
		{"NegativeBudget", http.MethodPost, `{"budget_usd":-5}`, "budget_usd"},
		{"BudgetAsAString", http.MethodPost, `{"budget_usd":"5"}`, "budget_usd"},
		{"PatchUnknownField", http.MethodPatch, `{"id":"other"}`, "id"},
		{"PatchDisabledNotABool", http.MethodPatch, `{"disabled":"yes"}`, "disabled"},
		{"PatchNullDisabled", http.MethodPatch, `{"disabled":null}`, "disabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := "/admin/v1/keys"
			if tc.method == http.MethodPatch {
				path += "/key_any"
			}
			status, _, body := b.do(t, tc.method, path, tc.body)
			require.Equal(t, http.StatusBadRequest, status, "%s", body)
			e := decodeError(t, body)
			require.Equal(t, "invalid_request_error", e.Error.Code)
			require.Equal(t, "invalid_request_error", e.Error.Type)
			if tc.param == "" {
				require.Nil(t, e.Error.Param, "%s", body)
			} else {
				require.NotNil(t, e.Error.Param, "%s", body)
				require.Equal(t, tc.param, *e.Error.Param)
			}
		})
	}
	keys, err := b.keys.ListKeys(context.Background(), auth.ListKeysParams{})
	require.NoError(t, err)
	require.Empty(t, keys, "no invalid request created a key")
}

func TestRoutingErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tc := range []struct {
		name, method, path string
		status             int
		code               string
	}{
		{"UnknownPath", http.MethodGet, "/admin/v1/nothing", http.StatusNotFound, "not_found"},
		{"UnknownKey", http.MethodGet, "/admin/v1/keys/key_nope", http.StatusNotFound, "not_found"},
		{"DeleteUnknownKey", http.MethodDelete, "/admin/v1/keys/key_nope", http.StatusNotFound, "not_found"},
		{"PatchUnknownKey", http.MethodPatch, "/admin/v1/keys/key_nope", http.StatusNotFound, "not_found"},
		{"PutKeys", http.MethodPut, "/admin/v1/keys", http.StatusMethodNotAllowed, "method_not_allowed"},
		{"PostKey", http.MethodPost, "/admin/v1/keys/key_x", http.StatusMethodNotAllowed, "method_not_allowed"},
		{"PostUsage", http.MethodPost, "/admin/v1/usage", http.StatusMethodNotAllowed, "method_not_allowed"},
		{"BadLimit", http.MethodGet, "/admin/v1/keys?limit=0", http.StatusBadRequest, "invalid_request_error"},
		{"LimitTooLarge", http.MethodGet, "/admin/v1/keys?limit=101", http.StatusBadRequest, "invalid_request_error"},
		{"BadGroupBy", http.MethodGet, "/admin/v1/usage?group_by=week", http.StatusBadRequest, "invalid_request_error"},
		{"BadFrom", http.MethodGet, "/admin/v1/usage?from=yesterday", http.StatusBadRequest, "invalid_request_error"},
		{"ToBeforeFrom", http.MethodGet, "/admin/v1/usage?from=2026-11-02&to=2026-11-01", http.StatusBadRequest, "invalid_request_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := ""
			if tc.method == http.MethodPatch {
				body = `{"owner":"x"}`
			}
			status, hdr, data := b.do(t, tc.method, tc.path, body)
			require.Equal(t, tc.status, status, "%s", data)
			require.Equal(t, tc.code, decodeError(t, data).Error.Code)
			if tc.status == http.StatusMethodNotAllowed {
				require.NotEmpty(t, hdr.Get("Allow"))
			}
		})
	}
}

func TestKeyLifecycle(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()

	status, _, body := b.do(t, http.MethodPost, "/admin/v1/keys", `{"owner":"acme","quota":100000,"rate_limit":"5/s",
		"allowed_models":["demo-chat"],"expires_at":"2030-01-02T03:04:05Z","budget_usd":10}`)
	require.Equal(t, http.StatusCreated, status, "%s", body)
	golden(t, "create.response", body, normalizeKey)
	var created struct {
		ID, Secret string
	}
	require.NoError(t, json.Unmarshal(body, &created))
	require.True(t, strings.HasPrefix(created.ID, admin.KeyIDPrefix), created.ID)
	require.True(t, auth.ValidSecret(created.Secret), "a well-formed secret")
	require.GreaterOrEqual(t, len(created.Secret), len("sk-")+22, "at least 128 random bits")

	k, err := b.keys.Lookup(ctx, created.Secret)
	require.NoError(t, err, "the secret authenticates")
	require.Equal(t, created.ID, k.ID)

	status, _, body = b.do(t, http.MethodGet, "/admin/v1/keys/"+created.ID, "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	golden(t, "key.response", body, normalizeKey)
	require.NotContains(t, string(body), created.Secret)
	require.NotContains(t, string(body), auth.HashSecret(created.Secret))

	// Usage is recorded against the key, and shows in its object.
	_, err = b.keys.Settle(ctx, auth.SettleParams{KeyID: created.ID, Used: 1234, Model: "demo-chat", InputTokens: 234, OutputTokens: 1000, CostUSD: 0.0123})
	require.NoError(t, err)

	status, _, body = b.do(t, http.MethodPatch, "/admin/v1/keys/"+created.ID, `{"quota":null,"rate_limit":null,
		"allowed_models":null,"expires_at":null,"budget_usd":null,"disabled":true,"owner":"acme-2"}`)
	require.Equal(t, http.StatusOK, status, "%s", body)
	golden(t, "patch.response", body, normalizeKey)

	status, _, body = b.do(t, http.MethodPatch, "/admin/v1/keys/"+created.ID, `{"quota":1000,"rate_limit":"unlimited","disabled":false}`)
	require.Equal(t, http.StatusOK, status, "%s", body)
	var patched map[string]any
	require.NoError(t, json.Unmarshal(body, &patched))
	require.Equal(t, 1234.0, patched["used"])
	require.Equal(t, 1000.0, patched["quota"], "the quota is what was set")
	require.Equal(t, 0.0, patched["remaining"], "a quota below what was used leaves nothing")
	require.Equal(t, "unlimited", patched["rate_limit"])
	require.Equal(t, "acme-2", patched["owner"], "fields not given are kept")
	k, err = b.keys.Lookup(ctx, created.Secret)
	require.NoError(t, err)
	require.Equal(t, auth.Quota{Remaining: 0, Used: 1234, CostUSD: 0.0123}, k.Quota, "a quota below what was used leaves nothing")
	require.Equal(t, &auth.Limit{}, k.RateLimit, "explicitly not rate-limited")

	status, _, body = b.do(t, http.MethodDelete, "/admin/v1/keys/"+created.ID, "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	require.JSONEq(t, fmt.Sprintf(`{"id":%q,"object":"api_key","deleted":true}`, created.ID), string(body))
	_, err = b.keys.Lookup(ctx, created.Secret)
	require.ErrorIs(t, err, auth.ErrKeyNotFound, "the secret is revoked")
	status, _, _ = b.do(t, http.MethodGet, "/admin/v1/keys/"+created.ID, "")
	require.Equal(t, http.StatusNotFound, status)
}

// TestQuotaIsWhatWasGranted: a key created with a quota of 1000 that
// one request charged 4000 (a video: the request that crosses a budget
// is served) reports its quota as 1000, what it used, and nothing left;
// not a quota of 4000, what was left plus what was used.
func TestQuotaIsWhatWasGranted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	status, _, body := b.do(t, http.MethodPost, "/admin/v1/keys", `{"quota":1000}`)
	require.Equal(t, http.StatusCreated, status, "%s", body)
	var got map[string]any
	require.NoError(t, json.Unmarshal(body, &got))
	require.Equal(t, 1000.0, got["quota"])
	require.Equal(t, 1000.0, got["remaining"])
	id, _ := got["id"].(string)

	_, err := b.keys.Settle(context.Background(), auth.SettleParams{KeyID: id, Used: 4000, Model: "demo-video"})
	require.ErrorIs(t, err, auth.ErrQuotaExceeded)
	status, _, body = b.do(t, http.MethodGet, "/admin/v1/keys/"+id, "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	require.NoError(t, json.Unmarshal(body, &got))
	require.Equal(t, 1000.0, got["quota"])
	require.Equal(t, 4000.0, got["used"])
	require.Equal(t, 0.0, got["remaining"])

	// Raised to 5000: 1000 left.
	status, _, body = b.do(t, http.MethodPatch, "/admin/v1/keys/"+id, `{"quota":5000}`)
	require.Equal(t, http.StatusOK, status, "%s", body)
	require.NoError(t, json.Unmarshal(body, &got))
	require.Equal(t, 5000.0, got["quota"])
	require.Equal(t, 1000.0, got["remaining"])
}

func TestCreateDefaults(t *testing.T) {
	t.Parallel()
	b := setup(t)
	status, _, body := b.do(t, http.MethodPost, "/admin/v1/keys", `{}`)
	require.Equal(t, http.StatusCreated, status, "%s", body)
	golden(t, "create_defaults.response", body, normalizeKey)
}

func TestListPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var want []string
	for i := range 5 {
		status, _, body := b.do(t, http.MethodPost, "/admin/v1/keys", fmt.Sprintf(`{"owner":"o%d"}`, i))
		require.Equal(t, http.StatusCreated, status, "%s", body)
		var k struct{ ID string }
		require.NoError(t, json.Unmarshal(body, &k))
		want = append(want, k.ID)
	}
	type page struct {
		Object  string
		Data    []map[string]any
		HasMore bool    `json:"has_more"`
		LastID  *string `json:"last_id"`
	}
	var got []string
	after := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 5, "the pages end")
		status, _, body := b.do(t, http.MethodGet, "/admin/v1/keys?limit=2&after="+after, "")
		require.Equal(t, http.StatusOK, status, "%s", body)
		var p page
		require.NoError(t, json.Unmarshal(body, &p))
		require.Equal(t, "list", p.Object)
		for _, k := range p.Data {
			require.NotContains(t, k, "secret")
			got = append(got, k["id"].(string))
		}
		if !p.HasMore {
			require.NotNil(t, p.LastID)
			break
		}
		require.Len(t, p.Data, 2)
		after = *p.LastID
	}
	require.ElementsMatch(t, want, got)
	require.IsIncreasing(t, got, "in order of id")

	status, _, body := b.do(t, http.MethodGet, "/admin/v1/keys?after="+got[4], "")
	require.Equal(t, http.StatusOK, status)
	require.JSONEq(t, `{"object":"list","data":[],"has_more":false,"last_id":null}`, string(body))
}

func TestUsage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	for _, id := range []string{"key_a", "key_b"} {
		sd, err := auth.NewSecret()
		require.NoError(t, err)
		require.NoError(t, b.keys.PutKey(ctx, sd, auth.Key{ID: id, Quota: auth.UnlimitedQuota()}))
	}
	at := func(day, hour int) time.Time { return time.Date(2026, 11, day, hour, 0, 0, 0, time.UTC) }
	for _, p := range []auth.SettleParams{
		{KeyID: "key_a", Model: "demo-chat", InputTokens: 10, OutputTokens: 30, CostUSD: 0.0004, Time: at(26, 9)},
		{KeyID: "key_a", Model: "demo-chat", InputTokens: 10, OutputTokens: 30, CostUSD: 0.0004, Time: at(26, 23)},
		{KeyID: "key_b", Model: "demo-reasoner", InputTokens: 10, OutputTokens: 30, CostUSD: 0.0004, Time: at(26, 12)},
		{KeyID: "key_a", Model: "demo-reasoner", InputTokens: 5, OutputTokens: 5, CostUSD: 0.1, Time: at(27, 0)},
	} {
		p.Used = p.InputTokens + p.OutputTokens
		_, err := b.keys.Settle(ctx, p)
		require.NoError(t, err)
	}
	for _, tc := range []struct{ name, query string }{
		{"usage_by_day", ""},
		{"usage_by_model", "?group_by=model"},
		{"usage_by_key", "?group_by=key"},
		{"usage_of_a_key_by_model", "?group_by=model&key_id=key_a"},
		{"usage_of_a_model_by_key", "?group_by=key&model=demo-chat"},
		{"usage_of_one_day", "?from=2026-11-26&to=2026-11-26"},
		{"usage_from_a_time", "?group_by=model&from=2026-11-26T12:00:00Z"},
		{"usage_to_a_time", "?group_by=model&to=2026-11-26T12:00:00%2B01:00"},
		{"usage_of_an_unknown_key", "?key_id=key_zzz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status, _, body := b.do(t, http.MethodGet, "/admin/v1/usage"+tc.query, "")
			require.Equal(t, http.StatusOK, status, "%s", body)
			golden(t, tc.name+".response", body, nil)
		})
	}
}

// TestUsageDetails: the cached, cache-write and reasoning tokens of the
// usage rows are summed apart (issue 26).
func TestUsageDetails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	sd, err := auth.NewSecret()
	require.NoError(t, err)
	require.NoError(t, b.keys.PutKey(ctx, sd, auth.Key{ID: "key_a", Quota: auth.UnlimitedQuota()}))
	at := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	for _, p := range []auth.SettleParams{
		{KeyID: "key_a", Model: "demo-reasoner", InputTokens: 1000, OutputTokens: 200, CachedTokens: 800, ReasoningTokens: 150, CostUSD: 0.001, Time: at},
		{KeyID: "key_a", Model: "demo-reasoner", InputTokens: 200, OutputTokens: 100, CachedTokens: 100, CacheWriteTokens: 50, ReasoningTokens: 40, CostUSD: 0.0002, Time: at},
		{KeyID: "key_a", Model: "demo-chat", InputTokens: 10, OutputTokens: 30, CostUSD: 0.0004, Time: at},
	} {
		p.Used = p.InputTokens + p.OutputTokens
		_, err := b.keys.Settle(ctx, p)
		require.NoError(t, err)
	}
	status, _, body := b.do(t, http.MethodGet, "/admin/v1/usage?group_by=model", "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	golden(t, "usage_details.response", body, nil)
}

// lookupOnly is a key store that records no usage.
type noUsage struct{ admin.Store }

func TestUsageWithoutAUsageReader(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	admin.Register(mux, admin.NewHandler(noUsage{auth.NewMemoryKeyStore()}, admin.WithAdminKey(adminKey)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := &bundle{srv: srv}
	status, _, body := b.do(t, http.MethodGet, "/admin/v1/usage", "")
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, "not_found", decodeError(t, body).Error.Code)
}

// downStore is a key store whose database cannot be reached.
type downStore struct{ *auth.MemoryKeyStore }

var errDown = errors.New("dial tcp 10.0.0.5:5432: connect: connection refused")

func (downStore) PutKey(context.Context, string, auth.Key) error    { return errDown }
func (downStore) GetKey(context.Context, string) (*auth.Key, error) { return nil, errDown }
func (downStore) ListKeys(context.Context, auth.ListKeysParams) ([]*auth.Key, error) {
	return nil, errDown
}
func (downStore) UpdateKey(context.Context, string, func(*auth.Key) error) (*auth.Key, error) {
	return nil, errDown
}
func (downStore) DeleteKey(context.Context, string) error { return errDown }
func (downStore) Usage(context.Context, auth.UsageParams) ([]auth.UsageRow, error) {
	return nil, errDown
}

// TestAStoreOutageIsAnOutage: every route of the admin API answers 503
// service_unavailable with Retry-After while its key store cannot be
// reached, and never sends the store's error.
func TestAStoreOutageIsAnOutage(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	admin.Register(mux, admin.NewHandler(downStore{auth.NewMemoryKeyStore()}, admin.WithAdminKey(adminKey)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := &bundle{srv: srv}
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodPost, "/admin/v1/keys", `{"owner":"acme"}`},
		{http.MethodGet, "/admin/v1/keys", ""},
		{http.MethodGet, "/admin/v1/keys/key_1", ""},
		{http.MethodPatch, "/admin/v1/keys/key_1", `{"disabled":true}`},
		{http.MethodDelete, "/admin/v1/keys/key_1", ""},
		{http.MethodGet, "/admin/v1/usage", ""},
	} {
		status, header, body := b.do(t, tc.method, tc.path, tc.body)
		require.Equal(t, http.StatusServiceUnavailable, status, "%s %s: %s", tc.method, tc.path, body)
		require.Equal(t, "2", header.Get("Retry-After"), "%s %s", tc.method, tc.path)
		e := decodeError(t, body)
		require.Equal(t, "service_unavailable", e.Error.Code, "%s %s", tc.method, tc.path)
		require.NotContains(t, string(body), "10.0.0.5")
	}
}
