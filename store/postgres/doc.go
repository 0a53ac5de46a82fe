// Package postgres keeps gatewaykit's state in PostgreSQL (through pgx
// and pgxpool), so that any number of gateway replicas can share it: API
// keys, their quota and usage ([KeyStore], an auth.KeyStore, auth.KeyPutter,
// auth.KeyAdmin and auth.UsageReader),
// stored responses ([ResponseStore], a responses.Store), conversations
// and their items ([ConversationStore], a conversations.Store), video
// tasks ([TaskStore], a videos.TaskStore with leases) and video content
// ([ContentStore], a videos.ContentStore). Each passes its interface's
// conformance suite.
//
//	db, err := postgres.Open(ctx, "postgres://gateway@db.internal/gateway", nil)
//	if err != nil { … }
//	defer db.Close()
//	g, err := gateway.New(gateway.Config{
//		Keys:              db.Keys(),
//		ResponseStore:     db.Responses(),
//		ConversationStore: db.Conversations(),
//		Tasks:             db.Tasks(),
//		Contents:          db.Contents(),
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
// on any replica, with previous_response_id or as a conversation of
// /v1/conversations (whose additions are serialised by the
// conversation's row lock).
//
//   - Quota: Reserve and Settle are one statement each, serialised per
//     key by its row lock, so the bound of package auth holds across the
//     fleet; the calls that arrive together share one transaction (group
//     commit), which does not wait for the disk. Settle does not wait
//     for it either: it is answered in memory and committed behind by a
//     writer goroutine, its reservation held in the database until then
//     (see [KeyStore] for what the other replicas see). [DB.Close]
//     writes what is queued; a crash of the process loses it (at most
//     the batch under way and the Settles queued behind it). While the
//     database cannot be reached, the writer keeps the queued Settles and
//     tries again, logging it once a minute; a full queue (4096 Settles)
//     refuses new requests ([ErrBacklog]).
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
// # Lost connections
//
// A restart of the server (or a failover, or an operator's
// pg_terminate_backend) breaks every connection of the pool at once, and
// the next call on each fails (SQLSTATE 57P01 admin_shutdown, 57P02,
// 57P03 cannot_connect_now, 57P05, class 08; a connection refused, reset
// or closed) although the server may answer a new connection a moment
// later. An operation whose connection is lost is tried once more, on a
// new connection (the pool is reset: pgxpool.Pool.Reset), when running
// it twice is safe; otherwise its error is returned (the gateway answers
// 503). A second failure is returned too: a server that is still down is
// an outage, reported as such. The decision, per operation:
//
//   - Reads are tried again: Lookup, GetKey, ListKeys, Usage, the Get and
//     List of responses and tasks, the reads of conversations and their
//     items, Open and each chunk that a content's reader reads, Ping.
//   - Writes that leave the same state when they run twice are tried
//     again: PutKey and Disable (one statement that sets the row), a
//     response's Put (an upsert), a conversation's Update (it sets the
//     metadata), a content's Put (it replaces the content, in a
//     transaction) and Delete, the heartbeat. So are a
//     task's Claim (a claim that committed without its answer reaching
//     the gateway holds its task until the lease runs out; the task is
//     then claimed again and the attempt counts, as if its worker had
//     died) and Update (progress, lease renewals, outcomes: the same
//     update gives the same task; run again after its COMMIT's answer was
//     lost, a Complete or Fail that finds the task finished that way by
//     the same attempt returns it).
//   - Writes that must not run twice are tried again only when they
//     certainly did not commit: their connection was lost before their
//     COMMIT was sent (a transaction is rolled back by the server when
//     its connection ends). These are Add, UpdateKey (fn runs again, on
//     the key read again), DeleteKey, a task's Create, the Delete of
//     responses and tasks, and a conversation's Create, Delete,
//     AppendItems and DeleteItem (each a transaction of its own, so that
//     the moment of its COMMIT is known: run again after it, a Create or
//     an AppendItems would fail as a duplicate, a Delete as not found).
//   - Reserve and Settle are not idempotent (each reserves, or charges,
//     once more) unless their batch's transaction is known not to have
//     committed. The group commit learns it (see [KeyStore]): a batch
//     whose connection is lost before its COMMIT is sent again at once,
//     on a new connection; one whose COMMIT's answer is lost is looked
//     up by its transaction id (txid_status): if it committed, its calls
//     have their results; if not, it is sent again. A Reserve, or a
//     Settle that waits for its commit, whose batch still fails returns
//     the error (whether it committed may then be unknown: a Reserve
//     that did keeps its amount reserved until this instance stops). A
//     Settle written behind is kept and tried again until it commits, or
//     its transaction is found to have committed: never written twice.
//
// # Readiness
//
// [DB.Ping] (a readiness check's: package gateway's Pinger; each store
// has it) fails while the database cannot be reached, and while it cannot
// be written: after a write of the quota writer or of the heartbeat
// failed (a full disk, a server that became a read-only standby), it
// writes the heartbeat itself, and fails until a write succeeds. Every
// store says that it is shared by the replicas (Shared, package
// gateway's SharedPinger): a readiness check reports the database when
// it fails, but the replica stays ready, since every replica would fail
// the same check at once.
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
