// Package engine is snkv's thin SQL executor: it owns the SQLite connections
// (one writer, a pool of readers), caches prepared statements per connection,
// runs transactions and maps driver errors to snkv's sentinel errors.
//
// It talks to modernc.org/sqlite through the database/sql/driver interfaces
// directly, skipping database/sql's pool and per-row copying. Nothing here
// knows about column families or TTL; the packages above build those on it.
package engine
