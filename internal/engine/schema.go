package engine

import (
	sqlite3 "modernc.org/sqlite/lib"
)

// schemaRetries is how many more times a statement is compiled or stepped
// when SQLite reports SQLITE_SCHEMA: the schema changed (another
// connection created or dropped a table) between the moment this
// connection read it and the moment it used it. SQLite retries once by
// itself when compiling, and recompiles an expired statement when stepping
// it, but when the recompilation fails (a table the statement names does
// not exist) while the schema goes on changing, it gives up with
// SQLITE_SCHEMA and the message of the failed compilation ("no such table:
// X"). A statement that got SQLITE_SCHEMA never ran (it stops at its first
// opcode that checks the schema, before reading or writing), so running it
// again is safe. After the retries the error is what a quiet schema gives:
// "no such table" (see NoSuchTable), or SQLITE_SCHEMA itself, which maps to
// ErrBusy.
const schemaRetries = 20

// restep resets s (keeping its bindings) and steps it again.
func (c *Conn) restep(s *cstmt) int32 {
	sqlite3.Xsqlite3_reset(c.tls, s.p)
	return sqlite3.Xsqlite3_step(c.tls, s.p)
}
