// Package pgtest gives tests a PostgreSQL database of their own, on the
// server named by the environment variable GATEWAYKIT_TEST_POSTGRES (a
// postgres:// URL such as
// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable). Without
// it, tests that ask for a database are skipped with a line that says
// how to run them.
package pgtest

import (
	"context"
	"crypto/rand"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// EnvVar is the environment variable that names the test server.
const EnvVar = "GATEWAYKIT_TEST_POSTGRES"

// NewDatabase creates an empty database gk_<random> on the test server,
// drops it when t ends, and returns its connection string. It skips t
// when EnvVar is unset.
func NewDatabase(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvVar)
	if base == "" {
		t.Skip("needs PostgreSQL: set " + EnvVar + "=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable (.ci/run does)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, base)
	require.NoError(t, err, "connecting to %s", EnvVar)
	defer admin.Close(context.Background())
	name := "gk_" + strings.ToLower(rand.Text())
	_, err = admin.Exec(ctx, "CREATE DATABASE "+name)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("dropping database %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("dropping database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	require.NoError(t, err, "%s must be a postgres:// URL", EnvVar)
	u.Path = "/" + name
	return u.String()
}
