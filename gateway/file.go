package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
)

// File is the JSON configuration of the example programs (their -config
// flag):
//
//	{
//	  "rate_limit": "20/s",
//	  "keys": [
//	    {"secret": "sk-…", "id": "team-a", "owner": "a", "quota": 100000},
//	    {"secret": "sk-…", "id": "ci", "quota": null, "rate_limit": "5/s",
//	     "allowed_models": ["demo-chat"], "expires_at": "2027-01-01T00:00:00Z"},
//	    {"secret": "sk-…", "id": "batch", "rate_limit": "unlimited", "disabled": true}
//	  ],
//	  "models": [
//	    {"id": "demo-chat", "supported_endpoint_types": ["compat", "compat-response"]},
//	    {"id": "gpt-4o-mini", "supported_endpoint_types": ["compat", "compat-response"]}
//	  ],
//	  "routes": [
//	    {"model": "gpt-4o-mini", "upstreams": [
//	      {"base_url": "https://api.openai.com/v1", "key_env": "OPENAI_API_KEY"}
//	    ]}
//	  ]
//	}
//
// Rate limits are text, "<requests>/<period>" ([auth.ParseLimit]): "5/s",
// "600/m", "100/10s", or "unlimited". The top-level rate_limit applies to
// every key without one of its own; absent, such keys are not rate
// limited. Models take the form documented in package models. Routes
// relay models to upstreams (see [File.Relay]); a routed model must also
// be listed in models, which says what it serves.
//
// [LoadFile] refuses, naming the field: unknown fields (so that a typo
// does not go unnoticed), a member given twice in one object, a
// malformed rate limit or expires_at, a malformed secret, a secret or
// key id used twice, a negative quota, an allowed model that is not in
// models, a route of an unlisted model, routed twice or without
// upstreams, an upstream base_url that is not an http(s) URL ending in
// /v1 (for "api": "gemini", in /v1beta or /v1: Google's API is at
// https://generativelanguage.googleapis.com/v1beta), and an upstream with
// neither key nor key_env (or both).
type File struct {
	// RateLimit is the rate limit of keys that have none of their own;
	// the zero Limit means none.
	RateLimit auth.Limit     `json:"rate_limit,omitzero"`
	Keys      []KeyConfig    `json:"keys"`
	Models    []models.Model `json:"models"`
	Routes    []RouteConfig  `json:"routes,omitempty"`
}

// RouteConfig relays one model of a [File] to its upstreams, in failover
// order (see [relay.Route]).
type RouteConfig struct {
	Model     string           `json:"model"`
	Upstreams []UpstreamConfig `json:"upstreams"`
}

// UpstreamConfig is one upstream of a [RouteConfig] (see [relay.Upstream]).
type UpstreamConfig struct {
	// Name names the upstream in logs; empty means the host of BaseURL.
	Name string `json:"name,omitempty"`
	// BaseURL is the upstream's API base, ending in /v1; for API
	// "gemini", ending in /v1beta (Google's own API) or /v1 (a gateway
	// that serves the Gemini style under /v1beta beside its /v1).
	BaseURL string `json:"base_url"`
	// Key is the upstream's API key. Prefer KeyEnv, which keeps the
	// secret out of the file.
	Key string `json:"key,omitempty"`
	// KeyEnv names the environment variable that holds the key; it is
	// read by [File.Relay].
	KeyEnv string `json:"key_env,omitempty"`
	// Model is the upstream's name of the model; empty means the public
	// one.
	Model string `json:"model,omitempty"`
	// API is the wire format the upstream speaks: "openai" (the default),
	// "anthropic" or "gemini" (see [relay.Upstream]).
	API relay.API `json:"api,omitempty"`
}

// Relay returns a relay for the routes of f, or nil when f has none. An
// upstream's KeyEnv is read from the environment now; a variable that is
// not set is an error.
func (f File) Relay(opts ...relay.Option) (*relay.Relay, error) {
	if len(f.Routes) == 0 {
		return nil, nil
	}
	routes := make([]relay.Route, len(f.Routes))
	for i, rc := range f.Routes {
		routes[i].Model = rc.Model
		for _, uc := range rc.Upstreams {
			key := uc.Key
			if uc.KeyEnv != "" {
				v, ok := os.LookupEnv(uc.KeyEnv)
				if !ok {
					return nil, fmt.Errorf("gateway: route %s: the environment variable %s (key_env) is not set", rc.Model, uc.KeyEnv)
				}
				key = v
			}
			routes[i].Upstreams = append(routes[i].Upstreams, relay.Upstream{Name: uc.Name, BaseURL: uc.BaseURL, Key: key, Model: uc.Model, API: uc.API})
		}
	}
	return relay.New(routes, opts...)
}

// KeyConfig is one API key of a [File]: the fields of [auth.Key], and
// the secret.
type KeyConfig struct {
	// Secret is the key as clients send it: "sk-" followed by letters,
	// digits, '-' and '_' ([auth.ValidSecret]).
	Secret string `json:"secret"`
	// ID names the key in logs and usage; empty means the first 12
	// characters of the secret's hash.
	ID string `json:"id"`
	// Owner is the account the key belongs to.
	Owner string `json:"owner"`
	// Quota is the key's token quota; null or absent means unlimited, 0
	// means none (every request is refused with 403).
	Quota *int64 `json:"quota"`
	// RateLimit is the key's own request rate limit, such as "5/s"; nil
	// (absent) means the file's default, and "unlimited" means none even
	// when there is a default.
	RateLimit *auth.Limit `json:"rate_limit,omitempty"`
	// AllowedModels lists the models the key may use; empty means all.
	AllowedModels []string `json:"allowed_models,omitempty"`
	// ExpiresAt is when the key stops working (RFC 3339); absent means
	// never.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// Disabled keys are refused with 401.
	Disabled bool `json:"disabled,omitempty"`
	// BudgetUSD is the key's budget in US dollars (auth.Quota.BudgetUSD):
	// once the cost of its requests, at the prices of the models'
	// pricing, reaches it, the key is refused with 403
	// insufficient_quota. Absent or 0 means none.
	BudgetUSD float64 `json:"budget_usd,omitempty"`
}

// DemoFile returns the built-in configuration of the example programs:
// the keys of [DemoKeys], the demo text models (demo-instruct, for legacy
// completions only, among them), the demo video models and the demo
// models of the other access points (demo.AccessModels), priced by
// [DemoPricing]. It sets no default rate limit.
func DemoFile() File {
	ms := demo.TextModels()
	ms = append(ms, demo.VideoModels()...)
	ms = append(ms, demo.AccessModels()...)
	for i := range ms {
		ms[i].Pricing = DemoPricing(ms[i].ID)
	}
	return File{Keys: DemoKeys(), Models: ms}
}

// DemoPricing returns the example price of the demo model id in
// [DemoFile], so that the usage of the example server shows a cost (in
// US dollars): demo-chat 0.15 per million input tokens and 0.60 per
// million output tokens, demo-reasoner 1.10 and 4.40, demo-instruct 0.50
// and 1.50, demo-embedding 0.02 and demo-rerank 0.05 per million input
// tokens, and 0.10 a second of video for the video models. It is an
// example, not anyone's price list; nil for another id.
func DemoPricing(id string) *models.Pricing {
	switch id {
	case demo.ChatModel:
		return &models.Pricing{InputPerMillion: 0.15, OutputPerMillion: 0.60}
	case demo.ReasonerModel:
		return &models.Pricing{InputPerMillion: 1.10, OutputPerMillion: 4.40}
	case demo.InstructModel:
		return &models.Pricing{InputPerMillion: 0.50, OutputPerMillion: 1.50}
	case demo.EmbeddingModel:
		return &models.Pricing{InputPerMillion: 0.02}
	case demo.RerankModel:
		return &models.Pricing{InputPerMillion: 0.05}
	}
	for _, m := range demo.VideoModels() {
		if m.ID == id {
			return &models.Pricing{PerSecond: 0.10}
		}
	}
	return nil
}

// DemoKeys returns the demo keys of [DemoFile]: sk-demo (unlimited quota,
// no rate limit), sk-demo-empty (zero quota, to see the 403) and
// sk-demo-limited (unlimited quota, 5 requests a minute, to see the 429:
// a burst of five, then one every twelve seconds, so the sixth of a quick
// series is refused however slow the client).
func DemoKeys() []KeyConfig {
	zero := int64(0)
	return []KeyConfig{
		{Secret: "sk-demo", ID: "key-demo", Owner: "demo"},
		{Secret: "sk-demo-empty", ID: "key-demo-empty", Owner: "demo", Quota: &zero},
		{Secret: "sk-demo-limited", ID: "key-demo-limited", Owner: "demo", RateLimit: &auth.Limit{Requests: 5, Period: time.Minute}},
	}
}

// LoadFile reads and checks the configuration file at path (see [File]
// for what is refused). Errors start with the path, and JSON syntax and
// type errors and duplicate members with the line and column:
// "gateway.json:3:14: …".
func LoadFile(path string) (File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return File{}, err
	}
	f, err := parseFile(b)
	if err != nil {
		var pe *posError
		if errors.As(err, &pe) {
			line, col := position(b, pe.offset)
			return File{}, fmt.Errorf("%s:%d:%d: %w", path, line, col, pe.err)
		}
		return File{}, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// parseFile decodes and checks a configuration file.
func parseFile(b []byte) (File, error) {
	var f File
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return File{}, &posError{offset: se.Offset - 1, err: err}
		case errors.Is(err, io.EOF):
			return File{}, errors.New("empty file: want a JSON object")
		}
		// The walk names the member of a bad rate limit or time, which
		// encoding/json does not.
		if werr := checkMembers(b, fileCheck); werr != nil {
			return File{}, werr
		}
		if errors.As(err, &te) {
			return File{}, &posError{offset: te.Offset - 1, err: err}
		}
		return File{}, err
	}
	if err := checkMembers(b, fileCheck); err != nil {
		return File{}, err
	}
	if err := f.check(); err != nil {
		return File{}, err
	}
	return f, nil
}

// fileCheck returns the check of the text value of a File's member by
// its name, or nil, so that errors name the member and its line.
func fileCheck(name string) valueCheck {
	switch name {
	case "rate_limit":
		return func(s string) error {
			_, err := auth.ParseLimit(s)
			return err
		}
	case "expires_at":
		return func(s string) error {
			if _, err := time.Parse(time.RFC3339, s); err != nil {
				return fmt.Errorf("%q is not an RFC 3339 time, such as 2027-01-01T00:00:00Z", s)
			}
			return nil
		}
	}
	return nil
}

// check refuses what a File must not hold (see [File]), naming the field
// by its JSON path.
func (f File) check() error {
	if err := models.ValidateModels(f.Models); err != nil {
		return err
	}
	listed := func(id string) bool {
		return slices.ContainsFunc(f.Models, func(m models.Model) bool { return m.ID == id })
	}
	ids := make(map[string]int, len(f.Keys))
	secrets := make(map[string]int, len(f.Keys)) // by hash
	for i, k := range f.Keys {
		at := fmt.Sprintf("keys[%d]", i)
		if !auth.ValidSecret(k.Secret) {
			return fmt.Errorf("%s.secret: not a well-formed key: want sk- followed by letters, digits, - and _ (at most %d bytes)", at, auth.MaxKeyLength)
		}
		h := auth.HashSecret(k.Secret)
		if j, dup := secrets[h]; dup {
			return fmt.Errorf("%s.secret: the same secret as keys[%d]", at, j)
		}
		secrets[h] = i
		if k.ID != "" {
			if j, dup := ids[k.ID]; dup {
				return fmt.Errorf("%s.id: %q is already the id of keys[%d]", at, k.ID, j)
			}
			ids[k.ID] = i
		}
		if k.Quota != nil && *k.Quota < 0 {
			return fmt.Errorf("%s.quota: %d is negative: give 0 for none, or null for unlimited", at, *k.Quota)
		}
		if k.BudgetUSD < 0 || math.IsNaN(k.BudgetUSD) || math.IsInf(k.BudgetUSD, 0) {
			return fmt.Errorf("%s.budget_usd: %v is not a budget: give a positive number of US dollars, or leave it out for none", at, k.BudgetUSD)
		}
		for j, m := range k.AllowedModels {
			if !listed(m) {
				return fmt.Errorf("%s.allowed_models[%d]: %q is not in models", at, j, m)
			}
		}
	}
	routed := make(map[string]int, len(f.Routes))
	for i, rc := range f.Routes {
		at := fmt.Sprintf("routes[%d]", i)
		if !listed(rc.Model) {
			return fmt.Errorf("%s.model: %q is not in models (which says what it serves)", at, rc.Model)
		}
		if j, dup := routed[rc.Model]; dup {
			return fmt.Errorf("%s.model: %q is already routed by routes[%d]", at, rc.Model, j)
		}
		routed[rc.Model] = i
		if len(rc.Upstreams) == 0 {
			return fmt.Errorf("%s.upstreams: route %q has no upstream", at, rc.Model)
		}
		for j, uc := range rc.Upstreams {
			at := fmt.Sprintf("%s.upstreams[%d]", at, j)
			u, err := url.Parse(uc.BaseURL)
			if err != nil {
				return fmt.Errorf("%s.base_url: not a URL", at)
			}
			// Redacted: a password in the URL stays out of the message.
			if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
				return fmt.Errorf("%s.base_url: %q is not an absolute http(s) URL without query", at, u.Redacted())
			}
			path := strings.TrimRight(u.Path, "/")
			switch {
			case uc.API == relay.APIGemini:
				// Google's own API is under /v1beta; a gateway's beside its /v1.
				if !strings.HasSuffix(path, "/v1") && !strings.HasSuffix(path, "/v1beta") {
					return fmt.Errorf("%s.base_url: %q must end in /v1beta or /v1, such as https://generativelanguage.googleapis.com/v1beta", at, u.Redacted())
				}
			case !strings.HasSuffix(path, "/v1"):
				return fmt.Errorf("%s.base_url: %q must end in /v1, such as https://api.openai.com/v1", at, u.Redacted())
			}
			switch uc.API {
			case "", relay.APIOpenAI, relay.APIAnthropic, relay.APIGemini:
			default:
				return fmt.Errorf("%s.api: unknown API %q: want %q (the default), %q or %q", at, uc.API, relay.APIOpenAI, relay.APIAnthropic, relay.APIGemini)
			}
			switch {
			case uc.Key != "" && uc.KeyEnv != "":
				return fmt.Errorf("%s: both key and key_env; give one", at)
			case uc.Key == "" && uc.KeyEnv == "":
				return fmt.Errorf("%s: no key: give key_env (the environment variable that holds the upstream's key) or key", at)
			}
		}
	}
	return nil
}

// NewKeyStore returns an in-memory key store holding keys, with every
// field of [KeyConfig].
func NewKeyStore(ctx context.Context, keys []KeyConfig) (*auth.MemoryKeyStore, error) {
	s := auth.NewMemoryKeyStore()
	if err := PutKeys(ctx, s, keys); err != nil {
		return nil, err
	}
	return s, nil
}

// PutKeys writes keys into s ([auth.KeyPutter.PutKey]), as a gateway does
// at start with the keys of its configuration file: a key's limits,
// owner, expiry and models come from its KeyConfig, and a durable store
// keeps the usage it recorded before, so that a restart never refunds a
// spent quota (a key's quota is its whole budget). Only the secret's hash
// is stored. A secret or key id given twice in keys is an error, and so
// is a missing or malformed secret (every key of a file is an API key;
// keys without a secret, for auth.Identities, are put by the embedder);
// then nothing is written.
func PutKeys(ctx context.Context, s auth.KeyPutter, keys []KeyConfig) error {
	ids := make(map[string]bool, len(keys))
	secrets := make(map[string]bool, len(keys))
	for _, k := range keys {
		id := k.key().ID
		if !auth.ValidSecret(k.Secret) {
			return fmt.Errorf("gateway: key %s: %w", id, auth.ErrMalformedCredential)
		}
		if ids[id] || secrets[k.Secret] {
			return fmt.Errorf("gateway: key %s: %w: its id or secret is given twice", id, auth.ErrDuplicateKey)
		}
		ids[id], secrets[k.Secret] = true, true
	}
	for _, k := range keys {
		if err := s.PutKey(ctx, k.Secret, k.key()); err != nil {
			return fmt.Errorf("gateway: key %s: %w", k.key().ID, err)
		}
	}
	return nil
}

// key returns the auth.Key that k configures.
func (k KeyConfig) key() auth.Key {
	q := auth.UnlimitedQuota()
	if k.Quota != nil {
		q = auth.LimitedQuota(*k.Quota)
	}
	q.BudgetUSD = k.BudgetUSD
	id := k.ID
	if id == "" {
		id = auth.HashSecret(k.Secret)[:12]
	}
	return auth.Key{ID: id, Owner: k.Owner, Quota: q, RateLimit: k.RateLimit,
		AllowedModels: k.AllowedModels, ExpiresAt: k.ExpiresAt, Disabled: k.Disabled}
}
