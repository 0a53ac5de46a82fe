package authtest_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/auth/authtest"
)

// forgetful is a key store that keeps no expiry, rate limit, budget in
// money or granted quota: a MemoryKeyStore that drops them from the keys
// it is given and from those it returns.
type forgetful struct{ m *auth.MemoryKeyStore }

func forget(k *auth.Key) {
	k.ExpiresAt, k.RateLimit, k.Granted = time.Time{}, nil, 0
	k.Quota.BudgetUSD, k.Quota.CostUSD = 0, 0
}

func (f forgetful) Add(ctx context.Context, secret string, k auth.Key) error {
	forget(&k)
	return f.m.Add(ctx, secret, k)
}

func (f forgetful) PutKey(ctx context.Context, secret string, k auth.Key) error {
	forget(&k)
	return f.m.PutKey(ctx, secret, k)
}

func (f forgetful) Lookup(ctx context.Context, secret string) (*auth.Key, error) {
	return f.keyOf(f.m.Lookup(ctx, secret))
}

func (f forgetful) Reserve(ctx context.Context, keyID string, amount int64) error {
	return f.m.Reserve(ctx, keyID, amount)
}

func (f forgetful) Settle(ctx context.Context, p auth.SettleParams) (auth.Quota, error) {
	p.CostUSD = 0
	q, err := f.m.Settle(ctx, p)
	q.BudgetUSD, q.CostUSD = 0, 0
	return q, err
}

func (f forgetful) GetKey(ctx context.Context, id string) (*auth.Key, error) {
	return f.keyOf(f.m.GetKey(ctx, id))
}

func (f forgetful) LookupID(ctx context.Context, id string) (*auth.Key, error) {
	return f.keyOf(f.m.LookupID(ctx, id))
}

func (f forgetful) ListKeys(ctx context.Context, p auth.ListKeysParams) ([]*auth.Key, error) {
	keys, err := f.m.ListKeys(ctx, p)
	for _, k := range keys {
		forget(k)
	}
	return keys, err
}

func (f forgetful) UpdateKey(ctx context.Context, id string, fn func(*auth.Key) error) (*auth.Key, error) {
	return f.keyOf(f.m.UpdateKey(ctx, id, func(k *auth.Key) error {
		if err := fn(k); err != nil {
			return err
		}
		forget(k)
		return nil
	}))
}

func (f forgetful) DeleteKey(ctx context.Context, id string) error { return f.m.DeleteKey(ctx, id) }

func (forgetful) keyOf(k *auth.Key, err error) (*auth.Key, error) {
	if k != nil {
		forget(k)
	}
	return k, err
}

func newForgetful() forgetful { return forgetful{auth.NewMemoryKeyStore()} }

// runSuites runs the key suites on a forgetful store with opts.
func runSuites(t *testing.T, opts ...authtest.Option) {
	t.Run("KeyStore", func(t *testing.T) {
		authtest.TestKeyStore(t, func(t *testing.T, seeds []authtest.Seed) auth.KeyStore {
			s := newForgetful()
			for _, sd := range seeds {
				require.NoError(t, s.Add(t.Context(), sd.Secret, sd.Key))
			}
			return s
		}, opts...)
	})
	t.Run("KeyPutter", func(t *testing.T) {
		authtest.TestKeyPutter(t, func(t *testing.T) authtest.PutStore { return newForgetful() }, opts...)
	})
	t.Run("IDLookup", func(t *testing.T) {
		authtest.TestIDLookup(t, func(t *testing.T) authtest.IDStore { return newForgetful() }, opts...)
	})
	t.Run("KeyAdmin", func(t *testing.T) {
		authtest.TestKeyAdmin(t, func(t *testing.T) authtest.AdminStore { return newForgetful() }, opts...)
	})
}

// TestSuitesSkipWhatAStoreDoesNotKeep: a store that keeps no expiry,
// rate limits, budgets in money or granted quotas passes the suites
// once it says so.
func TestSuitesSkipWhatAStoreDoesNotKeep(t *testing.T) {
	runSuites(t, authtest.WithoutFields(authtest.ExpiresAt, authtest.RateLimit, authtest.BudgetUSD, authtest.Granted))
}

// TestSuitesFailRatherThanPanic: the same store, when it does not say
// so, fails the suites' cases that read those fields; the suites do not
// panic (which would end the test binary, and every other test with it).
// The suites run in a child process, whose failure is the expected
// outcome.
func TestSuitesFailRatherThanPanic(t *testing.T) {
	if os.Getenv("AUTHTEST_FORGETFUL_CHILD") == "1" {
		runSuites(t)
		return
	}
	t.Parallel()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestSuitesFailRatherThanPanic$", "-test.count=1")
	cmd.Env = append(os.Environ(), "AUTHTEST_FORGETFUL_CHILD=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the suites pass on a store that drops fields:\n%s", out)
	require.NotContains(t, string(out), "panic:", "the suites panicked")
	for _, failed := range []string{
		"KeyStore/ReturnsAKeyThatTheCallerMayModify", // its RateLimit
		"KeyStore/ReturnsAnExpiredKeyWithItsExpiry",
		"KeyStore/LookupReturnsTheBudgetInMoney",
		"KeyPutter/PutsANewKeyThatLookupFinds",
		"IDLookup/FindsAKeyWithoutASecretByItsID",
		"KeyAdmin/GrantedOutlivesAnOverdraft",
	} {
		require.Contains(t, string(out), "--- FAIL: TestSuitesFailRatherThanPanic/"+failed+" ", "%s", out)
	}
	require.Contains(t, string(out), "authtest.WithoutFields(authtest.RateLimit)", "the failure says how to declare the gap")
}
