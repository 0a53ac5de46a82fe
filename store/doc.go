// Package store is the module of gatewaykit's durable state: the
// implementations of the kit's storage interfaces (auth.KeyStore,
// auth.Limiter, responses.Store, videos.TaskStore, videos.ContentStore)
// over real databases, each passing the interface's conformance suite.
//
// It is a module of its own, github.com/gatewaykit/gatewaykit/store, so
// that importing the kit's handlers never brings a database driver into
// an embedder's build or go.sum. Its packages:
//
//   - store/sqlite: every store over one SQLite database file, in pure Go
//     (no cgo): the embedded default of the example server.
//   - store/postgres: every store over PostgreSQL (pgx), shared by many
//     replicas.
//   - store/redis: a rate limiter whose limits hold across replicas.
package store
