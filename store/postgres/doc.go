// Package postgres keeps gatewaykit's state in PostgreSQL (through pgx
// and pgxpool), so that any number of gateway replicas can share it: API
// keys, their quota and usage ([KeyStore], an auth.KeyStore, auth.KeyPutter,
// auth.KeyAdmin and auth.UsageReader),
// stored responses ([ResponseStore], a responses.Store), video tasks
// ([TaskStore], a videos.TaskStore with leases) and video content
// ([ContentStore], a videos.ContentStore). Each passes its interface's
// conformance suite.
//
//	db, err := postgres.Open(ctx, "postgres://gateway@db.internal/gateway", nil)
//	if err != nil { … }
//	defer db.Close()
//	g, err := gateway.New(gateway.Config{
//		Keys:          db.Keys(),
//		ResponseStore: db.Responses(),
//		Tasks:         db.Tasks(),
//		Contents:      db.Contents(),
//		…
//	})
//
// # Schema and migrations
//
// [Open] (or [New], over a pool of the caller's) creates the schema and
// brings it up to date from the migrations embedded in this package
// ([Migrate]): versioned SQL files applied in order, each in a
// transaction of its own with the row of the table gk_schema_migrations
// that records it, under a PostgreSQL advisory lock so that replicas
// starting together do not race. A schema newer than the binary is
// refused. Every table's name starts with gk_; [Options.Schema] puts
// them in a schema of their own. A database that does not exist yet
// (SQLSTATE 3D000) is created by [Open], connected to the server's
// maintenance database postgres as the same user, who needs the CREATEDB
// privilege for it; [New] creates none.
//
// # Replicas
//
// Nothing is kept in a replica's memory: a task created on one replica is
// polled, run and downloaded on any other, and a conversation continues
// on any replica with previous_response_id.
//
//   - Quota: Reserve and Settle are one statement each, serialised per
//     key by its row lock, so the bound of package auth holds across the
//     fleet; the calls that arrive together share one transaction (group
//     commit), which does not wait for the disk. Settle does not wait
//     for it either: it is answered in memory and committed behind by a
//     writer goroutine, its reservation held in the database until then
//     (see [KeyStore] for what the other replicas see). [DB.Close]
//     writes what is queued; a crash of the process loses it (at most
//     the batch under way and the Settles queued behind it).
//     Reservations are recorded per gateway instance and count
//     only while the instance's heartbeat is fresh: a replica that dies
//     with requests in flight blocks their quota for at most
//     [Options.ReservationTTL] (30 s by default). See [KeyStore].
//   - Video tasks are claimed with SELECT … FOR UPDATE SKIP LOCKED: two
//     runners never get the same task, and a task whose runner died is
//     claimed again by another once its lease has run out.
//   - Video content is stored in chunks ([Options.ChunkSize], 1 MiB by
//     default) and read a chunk at a time.
//
// Rate limits are not kept here: use package store/redis for limits
// shared by replicas.
//
// # Secrets
//
// Only the SHA-256 of each API key's secret is stored (auth.HashSecret);
// nothing in this package logs a secret, and an unparsable connection
// string is reported without its text, which may hold a password.
//
// # Tests
//
// The tests need a server: set GATEWAYKIT_TEST_POSTGRES to a postgres://
// URL of a user that may create databases (package pgtest); each test
// works in a database of its own, dropped afterwards. Without it they
// skip.
package postgres
