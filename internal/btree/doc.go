// Package btree writes column family rows straight into SQLite's B-tree,
// below the SQL layer, as the C store snkv's design comes from does: no
// statement, no virtual machine, no statement journal. It is the only
// package that knows SQLite's internals (struct layouts and unexported
// functions of modernc.org/sqlite/lib, reached with go:linkname), and it
// is built only where that works: the build tag snkv_nofast, or a target
// modernc.org/sqlite does not generate, compiles the fallback, whose
// every call reports that the caller must run its SQL statement instead.
//
// A write goes through the fast path only when it provably writes what
// the SQL statement would: inside a write transaction, on a schema that is
// current (the schema cookie of the file matches the connection's parsed
// schema), into a WITHOUT ROWID table of the expected columns with no
// trigger but snkv's checksum trigger (which an insert never fires), and
// never while a savepoint would need the page copies a statement makes.
// Anything else returns ok=false and the caller runs SQL, which also
// reloads a stale schema. The record bytes are SQLite's own record format
// (PutRecord), byte for byte what INSERT writes for the same values.
package btree
