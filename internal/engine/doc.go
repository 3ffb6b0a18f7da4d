// Package engine is snkv's thin SQL executor: it owns the SQLite connections
// (one writer, a pool of readers), caches prepared statements per connection,
// runs transactions and maps SQLite errors to snkv's sentinel errors.
//
// It calls SQLite through modernc.org/sqlite/lib (the pure-Go SQLite that
// the modernc.org/sqlite driver wraps) directly, skipping database/sql's pool
// and per-row copying, and opens connections without SQLite's
// per-connection mutex, since each is used by one goroutine at a time (see
// conn.go).
//
// It runs the SQL it is given and knows no table of snkv's by name, with
// one exception: the writes, point reads and scans below the SQL layer
// (fast.go) take a column family's objects (layout.Objects: its data
// table, TTL tables and triggers) and hand them to internal/btree, which
// writes and reads those tables' records as the SQL statements would, TTL
// index rows included. What a column family, a TTL or a catalog is, is
// decided by the packages above (internal/family, internal/expiry,
// internal/catalog).
package engine
