package admin_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gatewaykit/gatewaykit/admin"
	"github.com/gatewaykit/gatewaykit/auth"
)

// FuzzKeyBody feeds the key bodies of POST and PATCH, and the usage
// query, to the handler: it never panics, and answers a key object, a
// usage list or an error in the general envelope.
func FuzzKeyBody(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"owner":"a","quota":5,"rate_limit":"5/s","allowed_models":["m"],"expires_at":"2030-01-01T00:00:00Z","budget_usd":1.5}`,
		`{"quota":null,"rate_limit":null,"disabled":true}`, `{"quota":-1}`, `[]`, `null`, `{"budget_usd":1e309}`, `{"owner":"\u0000"}`,
	} {
		f.Add(seed, "group_by=model&from=2026-11-01")
	}
	keys := auth.NewMemoryKeyStore()
	h := admin.NewHandler(keys, admin.WithAdminKey("k"))
	f.Fuzz(func(t *testing.T, body, query string) {
		for _, method := range []string{http.MethodPost, http.MethodPatch} {
			path := "/admin/v1/keys"
			if method == http.MethodPatch {
				path += "/key_missing"
			}
			req := httptest.NewRequest(method, path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer k")
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			check(t, rec, http.StatusCreated)
		}
		req := httptest.NewRequest(http.MethodGet, "/admin/v1/usage", nil)
		req.URL.RawQuery = query
		req.Header.Set("Authorization", "Bearer k")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		check(t, rec, http.StatusOK)
	})
}

func check(t *testing.T, rec *httptest.ResponseRecorder, ok int) {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("status %d, not a JSON object: %q", rec.Code, rec.Body.String())
	}
	if rec.Code == ok {
		return
	}
	e, _ := v["error"].(map[string]any)
	if e == nil || e["message"] == "" || e["code"] == "" {
		t.Fatalf("status %d without the error envelope: %s", rec.Code, rec.Body.String())
	}
	if rec.Code >= 500 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
	}
}
