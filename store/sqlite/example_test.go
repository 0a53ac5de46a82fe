package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/store/sqlite"
)

// Open a database file, write a key into it as a gateway does with the
// keys of its configuration at start, spend some of its quota, and see
// that the usage outlives the process: reopening the file and putting
// the key again with the same budget keeps what it spent.
func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "gatewaykit")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "gatewaykit.db")
	key := auth.Key{ID: "key_team", Owner: "team", Quota: auth.LimitedQuota(1000)}

	db, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := db.Keys().PutKey(ctx, "sk-team-secret", key); err != nil {
		log.Fatal(err)
	}
	// Serve lookups from memory, seeing changes within 5 seconds.
	keys := auth.NewCachedKeyStore(db.Keys(), 5*time.Second)
	if err := keys.Reserve(ctx, key.ID, 300); err != nil {
		log.Fatal(err)
	}
	q, err := keys.Settle(ctx, auth.SettleParams{KeyID: key.ID, Reserved: 300, Used: 250})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("after one request: remaining %d, used %d\n", q.Remaining, q.Used)
	db.Close()

	db, err = sqlite.Open(ctx, path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := db.Keys().PutKey(ctx, "sk-team-secret", key); err != nil {
		log.Fatal(err)
	}
	k, err := db.Keys().Lookup(ctx, "sk-team-secret")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("after a restart: remaining %d, used %d\n", k.Quota.Remaining, k.Quota.Used)
	// Output:
	// after one request: remaining 750, used 250
	// after a restart: remaining 750, used 250
}
