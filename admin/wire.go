package admin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
)

const objectKey = "api_key"

// keyObject is a key on the wire. It never carries a hash; Secret only
// in the reply to its creation.
type keyObject struct {
	Object        string   `json:"object"`
	ID            string   `json:"id"`
	Owner         string   `json:"owner"`
	Quota         *int64   `json:"quota"` // the budget granted; null: unlimited
	Used          int64    `json:"used"`
	Remaining     *int64   `json:"remaining"`  // what is left of the quota; null: unlimited
	RateLimit     *string  `json:"rate_limit"` // null: the gateway's default
	AllowedModels []string `json:"allowed_models"`
	ExpiresAt     *string  `json:"expires_at"`
	BudgetUSD     *float64 `json:"budget_usd"`
	CostUSD       float64  `json:"cost_usd"`
	Disabled      bool     `json:"disabled"`
	CreatedAt     int64    `json:"created_at"`
	Secret        string   `json:"secret,omitempty"`
}

type keyList struct {
	Object  string      `json:"object"`
	Data    []keyObject `json:"data"`
	HasMore bool        `json:"has_more"`
	LastID  *string     `json:"last_id"`
}

type deletedKey struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

type usageList struct {
	Object  string     `json:"object"`
	GroupBy string     `json:"group_by"`
	Data    []usageRow `json:"data"`
}

type usageRow struct {
	Day          string `json:"day,omitempty"`
	Model        string `json:"model,omitempty"`
	KeyID        string `json:"key_id,omitempty"`
	Requests     int64  `json:"requests"`
	InputTokens  int64  `json:"input_tokens"`
	OutputTokens int64  `json:"output_tokens"`
	// The parts of the input and output priced apart, when not 0.
	CachedTokens     int64   `json:"cached_tokens,omitempty"`
	CacheWriteTokens int64   `json:"cache_write_tokens,omitempty"`
	ReasoningTokens  int64   `json:"reasoning_tokens,omitempty"`
	CostUSD          float64 `json:"cost_usd"`
}

// roundUSD rounds a cost to 1e-10 USD, so that a sum of prices reads as
// 0.3 rather than 0.30000000000000004.
func roundUSD(v float64) float64 { return math.Round(v*1e10) / 1e10 }

// keyObjectOf returns the wire form of k. Its quota is the budget it was
// granted (auth.Key.GrantedQuota), its remaining what is left of it.
func keyObjectOf(k *auth.Key) keyObject {
	o := keyObject{Object: objectKey, ID: k.ID, Owner: k.Owner, Used: k.Quota.Used,
		AllowedModels: slices.Clone(k.AllowedModels), CostUSD: roundUSD(k.Quota.CostUSD), Disabled: k.Disabled}
	if o.AllowedModels == nil {
		o.AllowedModels = []string{}
	}
	if !k.Quota.Unlimited {
		q, rem := k.GrantedQuota(), k.Quota.Remaining
		o.Quota, o.Remaining = &q, &rem
	}
	if k.RateLimit != nil {
		s := formatLimit(*k.RateLimit)
		o.RateLimit = &s
	}
	if !k.ExpiresAt.IsZero() {
		s := k.ExpiresAt.UTC().Format(time.RFC3339)
		o.ExpiresAt = &s
	}
	if k.Quota.BudgetUSD > 0 {
		b := k.Quota.BudgetUSD
		o.BudgetUSD = &b
	}
	if !k.CreatedAt.IsZero() {
		o.CreatedAt = k.CreatedAt.Unix()
	}
	return o
}

// formatLimit writes l as a request sends it: "unlimited", "5/s", "600/m",
// "10/h", or with a Go duration ("100/10s").
func formatLimit(l auth.Limit) string {
	if l.Unlimited() {
		return "unlimited"
	}
	n := strconv.Itoa(l.Requests)
	switch l.Window() {
	case time.Second:
		return n + "/s"
	case time.Minute:
		return n + "/m"
	case time.Hour:
		return n + "/h"
	}
	return l.String()
}

// The fields of the bodies of POST and PATCH /admin/v1/keys.
var (
	createFields = []string{"owner", "quota", "rate_limit", "allowed_models", "expires_at", "budget_usd"}
	patchFields  = []string{"owner", "quota", "rate_limit", "allowed_models", "expires_at", "budget_usd", "disabled"}
)

// keyInput is a decoded body of POST or PATCH /admin/v1/keys: the fields
// it sets (has) and their values. null sets a field to its default:
// quota unlimited, rate_limit the gateway's default, allowed_models all,
// expires_at never, budget_usd none.
type keyInput struct {
	has           map[string]bool
	owner         string
	quota         *int64
	rateLimit     *auth.Limit
	allowedModels []string
	expiresAt     time.Time
	budgetUSD     float64
	disabled      bool
}

// apply sets the fields of in on k. The quota is the budget granted: what
// is left becomes it less what k used, never below 0.
func (in *keyInput) apply(k *auth.Key) {
	if in.has["owner"] {
		k.Owner = in.owner
	}
	if in.has["quota"] {
		if in.quota == nil {
			k.Quota.Unlimited = true
		} else {
			k.Quota.Unlimited = false
			k.Granted = *in.quota
			k.Quota.Remaining = max(*in.quota-k.Quota.Used, 0)
		}
	}
	if in.has["rate_limit"] {
		k.RateLimit = in.rateLimit
	}
	if in.has["allowed_models"] {
		k.AllowedModels = in.allowedModels
	}
	if in.has["expires_at"] {
		k.ExpiresAt = in.expiresAt
	}
	if in.has["budget_usd"] {
		k.Quota.BudgetUSD = in.budgetUSD
	}
	if in.has["disabled"] {
		k.Disabled = in.disabled
	}
}

// decodeKey reads and checks a body of POST or PATCH /admin/v1/keys that
// may set fields. Every problem is a 400 naming the field.
func (h *handler) decodeKey(w http.ResponseWriter, r *http.Request, fields []string) (*keyInput, error) {
	body, err := httpjson.ReadJSON(w, r, h.cfg.maxBytes)
	if err != nil {
		return nil, err
	}
	var members map[string]json.RawMessage
	if err := httpjson.Unmarshal(body, &members); err != nil {
		return nil, err
	}
	in := &keyInput{has: make(map[string]bool, len(members))}
	names := make([]string, 0, len(members))
	for name := range members {
		names = append(names, name)
	}
	slices.Sort(names) // report the first problem in a stable order
	for _, name := range names {
		raw := members[name]
		if !slices.Contains(fields, name) {
			return nil, apierrors.InvalidRequestf(name, "Unrecognized request argument supplied: %s. The fields are %s.", name, strings.Join(fields, ", "))
		}
		in.has[name] = true
		null := bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
		if err := in.decodeField(name, raw, null); err != nil {
			return nil, err
		}
	}
	if err := h.checkModels(r.Context(), in.allowedModels); err != nil {
		return nil, err
	}
	return in, nil
}

func (in *keyInput) decodeField(name string, raw json.RawMessage, null bool) error {
	bad := func(format string, args ...any) error {
		return apierrors.InvalidRequestf(name, "Invalid %s: %s", name, fmt.Sprintf(format, args...))
	}
	switch name {
	case "owner":
		if null || json.Unmarshal(raw, &in.owner) != nil {
			return bad("want a string.")
		}
	case "quota":
		if null {
			return nil
		}
		var n int64
		if err := json.Unmarshal(raw, &n); err != nil || n < 0 {
			return bad("want a whole number of tokens ≥ 0, or null for unlimited.")
		}
		in.quota = &n
	case "rate_limit":
		if null {
			return nil
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return bad(`want a string such as "5/s", "600/m" or "unlimited", or null for the gateway's default.`)
		}
		l, err := auth.ParseLimit(s)
		if err != nil {
			return bad(`%q: want <requests>/<period> such as "5/s" or "600/m", or "unlimited".`, s)
		}
		in.rateLimit = &l
	case "allowed_models":
		if null {
			return nil
		}
		if json.Unmarshal(raw, &in.allowedModels) != nil {
			return bad("want an array of model ids, or null for every model.")
		}
		for i, m := range in.allowedModels {
			if strings.TrimSpace(m) == "" {
				return apierrors.InvalidRequestf(fmt.Sprintf("allowed_models[%d]", i), "Invalid allowed_models[%d]: a model id must not be empty.", i)
			}
		}
	case "expires_at":
		if null {
			return nil
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return bad("want an RFC 3339 time such as \"2027-01-31T00:00:00Z\", or null for never.")
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return bad("%q is not an RFC 3339 time such as \"2027-01-31T00:00:00Z\".", s)
		}
		in.expiresAt = t
	case "budget_usd":
		if null {
			return nil
		}
		var v float64
		if err := json.Unmarshal(raw, &v); err != nil || !(v > 0) || math.IsInf(v, 0) {
			return bad("want a number of US dollars > 0, or null for no budget.")
		}
		in.budgetUSD = v
	case "disabled":
		if null || json.Unmarshal(raw, &in.disabled) != nil {
			return bad("want true or false.")
		}
	}
	return nil
}
