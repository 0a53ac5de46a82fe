// Package redistest gives tests a Redis client and a key prefix of their
// own, on the server named by GATEWAYKIT_TEST_REDIS. Without it, tests
// that ask for one are skipped with a line that says how to run them.
package redistest

import (
	"context"
	"crypto/rand"
	"os"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// EnvVar is the environment variable that names the Redis server of
// the tests, as a redis:// URL such as redis://127.0.0.1:6379/0.
const EnvVar = "GATEWAYKIT_TEST_REDIS"

// NewClient returns a client of the Redis server named by
// EnvVar and a key prefix of t's own, whose keys are deleted when t
// ends. It skips t when EnvVar is unset.
func NewClient(t testing.TB) (*goredis.Client, string) {
	t.Helper()
	u := os.Getenv(EnvVar)
	if u == "" {
		t.Skip("needs Redis: set " + EnvVar + "=redis://127.0.0.1:6379/0 (.ci/run does)")
	}
	opt, err := goredis.ParseURL(u)
	require.NoError(t, err, "%s must be a redis:// URL", EnvVar)
	c := goredis.NewClient(opt)
	prefix := "gktest:" + rand.Text() + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var keys []string
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("listing the keys of prefix %s: %v", prefix, err)
		}
		if len(keys) > 0 {
			if err := c.Del(ctx, keys...).Err(); err != nil {
				t.Errorf("deleting the keys of prefix %s: %v", prefix, err)
			}
		}
		_ = c.Close()
	})
	return c, prefix
}
