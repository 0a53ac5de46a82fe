package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
)

// File is the JSON configuration of the example programs (their -config
// flag):
//
//	{
//	  "keys": [{"secret": "sk-…", "id": "team-a", "owner": "a", "quota": 100000}],
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
// Models take the form documented in package models. Routes relay models
// to upstreams (see [File.Relay]); a routed model must also be listed in
// models, which says what it serves. Unknown fields are an error, so that
// a typo does not go unnoticed.
type File struct {
	Keys   []KeyConfig    `json:"keys"`
	Models []models.Model `json:"models"`
	Routes []RouteConfig  `json:"routes,omitempty"`
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
	// BaseURL is the upstream's API base, ending in /v1.
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
			routes[i].Upstreams = append(routes[i].Upstreams, relay.Upstream{Name: uc.Name, BaseURL: uc.BaseURL, Key: key, Model: uc.Model})
		}
	}
	return relay.New(routes, opts...)
}

// KeyConfig is one API key of a [File].
type KeyConfig struct {
	// Secret is the key as clients send it.
	Secret string `json:"secret"`
	// ID names the key in logs and usage; empty means the first 12
	// characters of the secret's hash.
	ID string `json:"id"`
	// Owner is the account the key belongs to.
	Owner string `json:"owner"`
	// Quota is the key's token quota; null or absent means unlimited.
	Quota *int64 `json:"quota"`
}

// DemoFile returns the built-in configuration of the example programs:
// the keys sk-demo (unlimited quota) and sk-demo-empty (zero quota, to
// see the 403), the demo text models, demo-instruct (legacy completions
// only), and the demo video models.
func DemoFile() File {
	ms := demo.TextModels()
	ms = append(ms, models.Model{ID: "demo-instruct", OwnedBy: "gatewaykit", Created: 1735689600,
		Description: "Deterministic demo model for legacy completions only.", EndpointTypes: []models.EndpointType{models.Compat}})
	ms = append(ms, demo.VideoModels()...)
	return File{Keys: DemoKeys(), Models: ms}
}

// DemoKeys returns the demo keys of [DemoFile]: sk-demo (unlimited) and
// sk-demo-empty (zero quota).
func DemoKeys() []KeyConfig {
	zero := int64(0)
	return []KeyConfig{
		{Secret: "sk-demo", ID: "key-demo", Owner: "demo"},
		{Secret: "sk-demo-empty", ID: "key-demo-empty", Owner: "demo", Quota: &zero},
	}
}

// LoadFile reads and checks the configuration file at path.
func LoadFile(path string) (File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return File{}, err
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return File{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := models.ValidateModels(f.Models); err != nil {
		return File{}, fmt.Errorf("%s: %w", path, err)
	}
	for _, rc := range f.Routes {
		if !slices.ContainsFunc(f.Models, func(m models.Model) bool { return m.ID == rc.Model }) {
			return File{}, fmt.Errorf("%s: route %q: the model is not in models (which says what it serves)", path, rc.Model)
		}
		for _, uc := range rc.Upstreams {
			if uc.Key != "" && uc.KeyEnv != "" {
				return File{}, fmt.Errorf("%s: route %q: an upstream has both key and key_env; give one", path, rc.Model)
			}
		}
	}
	return f, nil
}

// NewKeyStore returns an in-memory key store holding keys.
func NewKeyStore(ctx context.Context, keys []KeyConfig) (*auth.MemoryKeyStore, error) {
	s := auth.NewMemoryKeyStore()
	for _, k := range keys {
		q := auth.UnlimitedQuota()
		if k.Quota != nil {
			q = auth.LimitedQuota(*k.Quota)
		}
		id := k.ID
		if id == "" {
			id = auth.HashSecret(k.Secret)[:12]
		}
		if err := s.Add(ctx, k.Secret, auth.Key{ID: id, Owner: k.Owner, Quota: q}); err != nil {
			return nil, fmt.Errorf("gateway: key %s: %w", id, err)
		}
	}
	return s, nil
}
