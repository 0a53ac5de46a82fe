// Package sqlite keeps every store of a gatewaykit gateway in one SQLite
// database file, in pure Go (modernc.org/sqlite, no cgo): API keys and
// their quotas and usage ([KeyStore], an auth.KeyStore, auth.KeyPutter,
// auth.KeyAdmin and auth.UsageReader), stored
// responses ([ResponseStore], a responses.Store), conversations and their
// items ([ConversationStore], a conversations.Store), video tasks with their
// leases ([TaskStore], a videos.TaskStore) and their videos and
// thumbnails ([ContentStore], a videos.ContentStore). Each passes its
// interface's conformance suite. It is the embedded default of the
// example server (-db sqlite:gatewaykit.db).
//
//	db, err := sqlite.Open(ctx, "gatewaykit.db", nil)
//	if err != nil { … }
//	defer db.Close()
//	g, err := gateway.New(gateway.Config{
//		Keys:              auth.NewCachedKeyStore(db.Keys(), auth.DefaultKeyCacheTTL),
//		ResponseStore:     db.Responses(),
//		ConversationStore: db.Conversations(),
//		Tasks:             db.Tasks(),
//		Contents:          db.Contents(),
//		…
//	})
//
// # One process per file
//
// A database file serves one gateway process at a time. [Open] relies on
// it to recover from a process that died (kill -9, a crash, a power cut):
// the quota reserved by the requests that were in flight is released
// (their reservations would otherwise be held forever, as nobody is left
// to settle them), keeping only what the still unfinished video tasks
// reserved; and the leases of the video tasks that were running are
// ended, so that the new process's runner resumes them at once (or fails
// them with a clear error once they have been claimed MaxAttempts times)
// instead of leaving them in_progress. Open makes sure of it with an
// advisory lock on PATH.lock, released when the DB is closed or its
// process ends: a second Open of the file fails with [ErrInUse].
// Gateways with several replicas share a PostgreSQL database instead.
//
// # Concurrency
//
// Every store is safe for concurrent use. SQLite lets one connection
// write at a time: a [DB] writes through a single connection, so writers
// queue in Go (fairly, and honouring their context) instead of failing
// with SQLITE_BUSY, and each write is one short BEGIN IMMEDIATE
// transaction. Reads go through a pool of read-only connections
// ([Options].MaxReaders); in WAL mode they never wait for the writer, and
// see every write committed before they start. Another process that
// opens the file (the sqlite3 shell, a backup) is waited for up to
// [Options].BusyTimeout.
//
// # Quota and group commits
//
// As one process uses the file, the [KeyStore] holds in memory the quota
// of every key that Reserve or Settle touched, as the authority, and
// Lookup reports it. Reserve changes memory only (reservations end with
// the process anyway). Settle changes memory and returns at once; a
// writer goroutine brings the file up to it in group commits, each
// carrying every Settle of the last [Options].CommitDelay (1ms), one row
// per key, and the usage rows of those Settles (one per request with a
// model: key, model, time, tokens, cost in US dollars; the usage table,
// read by [KeyStore.Usage]). [DB.Close] writes what is left: a clean shutdown loses no
// usage, and a crash loses at most the Settles of the last CommitDelay
// and of the commit under way (the handlers settle after the reply is
// sent, so no client ever waited for that write).
//
// A commit that fails (a full disk, a file made read-only) loses
// nothing: the writer keeps the usage in memory and tries again, waiting
// from 50 ms to 5 s between tries, and logs it ([Options].Logger) at the
// first failure, then once a minute while the failures last, and once
// when a commit goes through again. [KeyStore.PendingUsage] and
// [KeyStore.FailedUsageWrites] report it, for metrics. Memory is bounded:
// once [Options].MaxPendingUsage usage rows (100 000 by default, about
// 10 MB) wait, Reserve refuses new requests with [ErrBacklog] (the
// gateway answers 503), while the requests already admitted still settle
// (so at most that many plus the requests in flight are held); nothing is
// blocked and nothing is dropped.
//
// # Readiness
//
// [DB.Ping] (a readiness check's: package gateway's Pinger) fails while
// the file cannot be written, not only when it cannot be read: after a
// write failed for a reason of the file's, it tries a write of its own
// (the usage that waits, or a row of its own), and fails until one
// succeeds. The file is this replica's alone: a gateway whose file
// cannot be written is not ready.
// Keys are looked up in the file at each Lookup: serve them through
// auth.NewCachedKeyStore. Do not write the keys table from another
// process while the gateway runs; change keys through
// [KeyStore.PutKey] (gateway.PutKeys at start) or the admin API
// ([KeyStore.UpdateKey], [KeyStore.DeleteKey]).
//
// # Durability
//
// The database is in WAL mode with synchronous=NORMAL: a write is durable
// once its call returns, across a crash of the process; a power loss may
// lose the last transactions but never corrupts the file.
//
// # Schema
//
// The schema comes from the SQL files embedded from migrations/
// (0001_init.sql, …), applied in order by [Open]: each file runs once, in
// a transaction of its own that also records it in the table
// schema_migrations (version, name, applied_at). A database recorded at
// a version newer than the build knows is refused. To change the schema,
// add the next numbered file; never edit one that has shipped.
//
// Secrets are never stored: keys are found by the SHA-256 of their
// secret (auth.HashSecret). Responses, tasks and content are kept until
// they are deleted; nothing is evicted.
package sqlite
