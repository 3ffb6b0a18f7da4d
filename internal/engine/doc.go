// Package engine is snkv's thin SQL executor: it owns the SQLite connections
// (one writer, a pool of readers), caches prepared statements per connection,
// runs transactions and maps SQLite errors to snkv's sentinel errors.
//
// It calls SQLite through modernc.org/sqlite/lib (the pure-Go SQLite that
// the modernc.org/sqlite driver wraps) directly, skipping database/sql's pool
// and per-row copying, and opens connections without SQLite's
// per-connection mutex, since each is used by one goroutine at a time (see
// conn.go). Nothing here knows about column families or TTL; the packages
// above build those on it.
package engine
