package postgres_test

import (
	"context"
	"fmt"
	"os"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/store/postgres"
)

// ExampleOpen opens the stores on the database named by DATABASE_URL and
// puts a key in it. It needs a PostgreSQL server, so it is compiled but
// not run by go test; the package's tests run every store against one.
func ExampleOpen() {
	ctx := context.Background()
	db, err := postgres.Open(ctx, os.Getenv("DATABASE_URL"), &postgres.Options{Schema: "gatewaykit"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	secret, _ := auth.NewSecret()
	if err := db.Keys().PutKey(ctx, secret, auth.Key{ID: "key_1", Owner: "acme", Quota: auth.LimitedQuota(100_000)}); err != nil {
		fmt.Println(err)
		return
	}
	k, _ := db.Keys().Lookup(ctx, secret)
	fmt.Println(k.ID, k.Quota.Remaining)
}

// ExampleKeyStore_Flush settles a request's usage, which returns once
// queued, then flushes the queue so that every replica's reads see it
// (this KeyStore's own reads wait for it by themselves). Like ExampleOpen,
// it is compiled but not run.
func ExampleKeyStore_Flush() {
	ctx := context.Background()
	db, err := postgres.Open(ctx, os.Getenv("DATABASE_URL"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close() // commits what is still queued
	keys := db.Keys()
	if _, err := keys.Settle(ctx, auth.SettleParams{KeyID: "key_1", Used: 42, Model: "gpt-4o-mini", InputTokens: 30, OutputTokens: 12}); err != nil {
		fmt.Println(err)
		return
	}
	if err := keys.Flush(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("committed: every replica sees the 42 tokens")
}
