package postgres_test

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
	"golang.org/x/sync/errgroup"

	"github.com/gatewaykit/gatewaykit/store/postgres"
	"github.com/gatewaykit/gatewaykit/store/postgres/pgtest"
)

// TestOpenCreatesAMissingDatabase: a connection string that names a
// database the server does not have (SQLSTATE 3D000), as the README's
// postgres://…/gateway on a fresh server, gets it created, once, by the
// replicas that start together.
func TestOpenCreatesAMissingDatabase(t *testing.T) {
	t.Parallel()
	base := os.Getenv(pgtest.EnvVar)
	if base == "" {
		t.Skip("needs PostgreSQL: set " + pgtest.EnvVar + "=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable (.ci/run does)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, base)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close(context.Background()) })
	name := "gk_created_" + strings.ToLower(rand.Text())
	t.Cleanup(func() {
		_, err := admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		require.NoError(t, err)
	})
	exists := func() bool {
		var n int
		require.NoError(t, admin.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n))
		return n == 1
	}
	require.False(t, exists())

	u, err := url.Parse(base)
	require.NoError(t, err)
	u.Path = "/" + name
	var g errgroup.Group
	dbs := make([]*postgres.DB, 2) // two replicas starting at once
	for i := range dbs {
		g.Go(func() (err error) {
			dbs[i], err = postgres.Open(ctx, u.String(), nil)
			return err
		})
	}
	require.NoError(t, g.Wait())
	require.True(t, exists())
	for _, db := range dbs {
		require.NoError(t, db.Ping(ctx))
		require.NoError(t, db.Close())
	}
}

// TestOpenSaysWhyItCannotCreateTheDatabase: a user without the right
// to create databases gets one error that names the database and says
// what to do.
func TestOpenSaysWhyItCannotCreateTheDatabase(t *testing.T) {
	t.Parallel()
	base := os.Getenv(pgtest.EnvVar)
	if base == "" {
		t.Skip("needs PostgreSQL: set " + pgtest.EnvVar + "=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable (.ci/run does)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, base)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close(context.Background()) })
	role := "gk_nocreate_" + strings.ToLower(rand.Text())
	_, err = admin.Exec(ctx, "CREATE ROLE "+role+" LOGIN NOCREATEDB")
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := admin.Exec(context.Background(), "DROP ROLE "+role)
		require.NoError(t, err)
	})

	u, err := url.Parse(base)
	require.NoError(t, err)
	u.User = url.User(role)
	u.Path = "/gk_missing_" + strings.ToLower(rand.Text())
	db, err := postgres.Open(ctx, u.String(), nil)
	require.Nil(t, db)
	require.ErrorContains(t, err, `postgres: the database "`+u.Path[1:]+`" does not exist, and creating it failed: `)
	require.ErrorContains(t, err, "permission denied to create database")
	require.ErrorContains(t, err, "create it (createdb "+u.Path[1:]+"), or connect as a user with the CREATEDB privilege")
}
