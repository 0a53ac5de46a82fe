package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
)

// File is the JSON configuration of the example programs (their -config
// flag):
//
//	{
//	  "keys": [{"secret": "sk-…", "id": "team-a", "owner": "a", "quota": 100000}],
//	  "models": [{"id": "demo-chat", "supported_endpoint_types": ["compat"]}]
//	}
//
// Models take the form documented in package models. Unknown fields are
// an error, so that a typo does not go unnoticed.
type File struct {
	Keys   []KeyConfig    `json:"keys"`
	Models []models.Model `json:"models"`
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
