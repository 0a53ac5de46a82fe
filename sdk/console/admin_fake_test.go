package console_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// fakeAdmin is a small admin API after the contract the console codes
// against: keys (create, list, patch, delete) and usage by day and by
// model, behind an admin key, with CORS for the console's origin.
type fakeAdmin struct {
	url string

	mu      sync.Mutex
	keys    []map[string]any
	secrets map[string]string
	created map[string]any
	usage   map[string]string // group_by → the query string
	n       int
}

func newFakeAdmin(t *testing.T, adminKey string) *fakeAdmin {
	f := &fakeAdmin{
		secrets: map[string]string{},
		usage:   map[string]string{},
		keys: []map[string]any{{
			"object": "api_key", "id": "key-demo", "owner": "demo", "quota": nil, "used": 42, "remaining": nil,
			"rate_limit": nil, "allowed_models": []any{}, "expires_at": nil, "budget_usd": nil,
			"cost_usd": 0.12, "disabled": false, "created_at": 1764000000,
		}},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /admin/v1/keys", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			fail(w, http.StatusBadRequest, "invalid_request", err.Error())
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.n++
		k := map[string]any{"object": "api_key", "id": fmt.Sprintf("key_%d", f.n), "used": 0, "cost_usd": 0,
			"disabled": false, "created_at": time.Now().Unix(), "quota": nil, "remaining": nil, "rate_limit": nil,
			"allowed_models": []any{}, "expires_at": nil, "budget_usd": nil}
		for _, name := range []string{"owner", "quota", "rate_limit", "allowed_models", "expires_at", "budget_usd"} {
			if v, ok := in[name]; ok {
				k[name] = v
			}
		}
		k["remaining"] = k["quota"] // nothing used yet
		f.created = in
		f.keys = append(f.keys, k)
		secret := fmt.Sprintf("sk-new-secret-%d", f.n)
		f.secrets[k["id"].(string)] = secret
		out := map[string]any{"secret": secret}
		for n, v := range k {
			out[n] = v
		}
		reply(w, http.StatusCreated, out)
	})
	mux.HandleFunc("GET /admin/v1/keys", func(w http.ResponseWriter, r *http.Request) {
		limit, err := strconv.Atoi(r.URL.Query().Get("limit"))
		if err != nil || limit < 1 {
			fail(w, http.StatusBadRequest, "invalid_request", "limit must be a positive number")
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		page := f.keys
		if after := r.URL.Query().Get("after"); after != "" {
			i := slices.IndexFunc(page, func(k map[string]any) bool { return k["id"] == after })
			page = page[i+1:]
		}
		more := len(page) > limit
		page = page[:min(limit, len(page))]
		var last any
		if len(page) > 0 {
			last = page[len(page)-1]["id"]
		}
		reply(w, http.StatusOK, map[string]any{"object": "list", "data": page, "has_more": more, "last_id": last})
	})
	mux.HandleFunc("PATCH /admin/v1/keys/{id}", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			fail(w, http.StatusBadRequest, "invalid_request", err.Error())
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, k := range f.keys {
			if k["id"] == r.PathValue("id") {
				for n, v := range in {
					k[n] = v
				}
				reply(w, http.StatusOK, k)
				return
			}
		}
		fail(w, http.StatusNotFound, "not_found", "no such key")
	})
	mux.HandleFunc("DELETE /admin/v1/keys/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		i := slices.IndexFunc(f.keys, func(k map[string]any) bool { return k["id"] == r.PathValue("id") })
		if i < 0 {
			fail(w, http.StatusNotFound, "not_found", "no such key")
			return
		}
		f.keys = slices.Delete(f.keys, i, i+1)
		reply(w, http.StatusOK, map[string]any{"id": r.PathValue("id"), "object": "api_key.deleted", "deleted": true})
	})
	mux.HandleFunc("GET /admin/v1/usage", func(w http.ResponseWriter, r *http.Request) {
		g := r.URL.Query().Get("group_by")
		f.mu.Lock()
		f.usage[g] = r.URL.RawQuery
		f.mu.Unlock()
		var data []map[string]any
		switch g {
		case "day":
			data = []map[string]any{
				{"day": "2026-11-01", "requests": 10, "input_tokens": 1200, "output_tokens": 800, "cost_usd": 0.25},
				{"day": "2026-11-03", "requests": 30, "input_tokens": 5000, "output_tokens": 2500, "cost_usd": 1.5},
				{"day": "2026-11-06", "requests": 5, "input_tokens": 300, "output_tokens": 200, "cost_usd": 0.75},
			}
		case "model":
			data = []map[string]any{
				{"model": "demo-chat", "requests": 40, "input_tokens": 6200, "output_tokens": 3300, "cached_tokens": 4000, "reasoning_tokens": 900, "cost_usd": 0.5},
				{"model": "demo-video", "requests": 5, "input_tokens": 300, "output_tokens": 200, "cost_usd": 2},
			}
		default:
			fail(w, http.StatusBadRequest, "invalid_request", "group_by must be day, model or key")
			return
		}
		reply(w, http.StatusOK, map[string]any{"object": "list", "group_by": g, "data": data})
	})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions {
			w.Header().Set("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE")
			w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+adminKey {
			fail(w, http.StatusUnauthorized, "invalid_admin_key", "Incorrect admin key.")
			return
		}
		mux.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, code, message string) {
	reply(w, status, map[string]any{"error": map[string]any{"message": message, "type": "invalid_request_error", "code": code}})
}

// addKeys adds n keys, key_1 to key_n.
func (f *fakeAdmin) addKeys(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for range n {
		f.n++
		f.keys = append(f.keys, map[string]any{"object": "api_key", "id": fmt.Sprintf("key_%d", f.n), "owner": "team",
			"quota": 1000, "used": f.n, "remaining": 1000 - f.n, "rate_limit": "10/s", "allowed_models": []any{"demo-chat"}, "expires_at": nil,
			"budget_usd": 5, "cost_usd": 0.5, "disabled": false, "created_at": 1764000000})
	}
}

func (f *fakeAdmin) lastCreated() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.created
}

func (f *fakeAdmin) secretOf(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.secrets[id]
}

func (f *fakeAdmin) has(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.ContainsFunc(f.keys, func(k map[string]any) bool { return k["id"] == id })
}

func (f *fakeAdmin) usageQuery(groupBy string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.usage[groupBy]
}
