package authtest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gatewaykit/gatewaykit/auth"
)

// A Field is a field of auth.Key that a store may not keep. A store that
// drops some says so with [WithoutFields]; every other field is part of
// the contract.
type Field string

// The fields a store may leave out.
const (
	// ExpiresAt is auth.Key.ExpiresAt: a store without it returns keys
	// that never expire.
	ExpiresAt Field = "ExpiresAt"
	// RateLimit is auth.Key.RateLimit: a store without it returns nil,
	// the middleware's default rate limit.
	RateLimit Field = "RateLimit"
	// BudgetUSD is the budget in money, auth.Quota.BudgetUSD, and the
	// cost recorded against it, auth.Quota.CostUSD.
	BudgetUSD Field = "BudgetUSD"
	// Granted is auth.Key.Granted, the budget a key was given, which the
	// admin API reports (it falls back on auth.Key.GrantedQuota).
	Granted Field = "Granted"
)

// An Option adapts a suite to the store under test.
type Option func(*options)

// WithoutFields tells the suites ([TestKeyStore], [TestKeyPutter],
// [TestKeyAdmin]) that the store does not keep fields: the cases that
// need one of them are skipped, naming it, and keys are compared without
// them. Without it, a store that drops a field fails the cases that
// read it (never with a panic of the suite).
func WithoutFields(fields ...Field) Option {
	return func(o *options) {
		for _, f := range fields {
			o.without[f] = true
		}
	}
}

type options struct {
	without map[Field]bool
}

func newOptions(opts []Option) options {
	o := options{without: make(map[Field]bool)}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// keeps reports whether the store keeps f.
func (o options) keeps(f Field) bool { return !o.without[f] }

// need skips t unless the store keeps every one of fields.
func (o options) need(t *testing.T, fields ...Field) {
	t.Helper()
	for _, f := range fields {
		if o.without[f] {
			t.Skipf("the store does not keep %s (authtest.WithoutFields)", f)
		}
	}
}

// keyOpts compare keys as stored: a store may return an empty slice for
// nil, and times in another location; CreatedAt is the store's, and the
// fields that the store does not keep are left out.
func (o options) keyOpts() cmp.Options {
	opts := cmp.Options{cmpopts.EquateEmpty(), cmpopts.IgnoreFields(auth.Key{}, "CreatedAt")}
	for _, f := range []Field{ExpiresAt, RateLimit, Granted} {
		if o.without[f] {
			opts = append(opts, cmpopts.IgnoreFields(auth.Key{}, string(f)))
		}
	}
	if o.without[BudgetUSD] {
		opts = append(opts, cmpopts.IgnoreFields(auth.Quota{}, "BudgetUSD", "CostUSD"))
	}
	return opts
}

// quotaOpts compare quotas without the fields that the store does not
// keep.
func (o options) quotaOpts() cmp.Options {
	if o.without[BudgetUSD] {
		return cmp.Options{cmpopts.IgnoreFields(auth.Quota{}, "BudgetUSD", "CostUSD")}
	}
	return nil
}
