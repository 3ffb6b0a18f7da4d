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
// again is safe. A compilation still refused after the retries is made once
// more inside a read transaction (see compilePinned), where the schema
// cannot change, so it ends as a quiet schema would: compiled, or "no such
// table" (see NoSuchTable). A step still refused after the retries reports
// SQLITE_SCHEMA itself, which maps to ErrBusy.
const schemaRetries = 20

// compilePinned runs compile (one sqlite3_prepare_v3) inside a read
// transaction opened for it, when the connection is in autocommit mode:
// the transaction pins one snapshot, so the schema SQLite loads for the
// compilation is the one it checks against, and another connection's
// CREATE or DROP cannot make it report SQLITE_SCHEMA. Reading the schema
// cookie starts the snapshot; the read-only transaction then ends with
// nothing to commit. It returns compile's result and, when that is not
// SQLITE_OK, its error, taken before the transaction ends overwrites the
// connection's message. Inside a caller's transaction (whose snapshot it
// must not end) it reports SQLITE_SCHEMA as it stands.
func (c *Conn) compilePinned(compile func() int32) (int32, error) {
	if c.inTx() {
		return sqlite3.SQLITE_SCHEMA, c.errFor(sqlite3.SQLITE_SCHEMA)
	}
	if rc := c.rawExec("BEGIN; PRAGMA schema_version"); rc != sqlite3.SQLITE_OK {
		err := c.errFor(rc)
		c.endPinned()
		return rc, err
	}
	rc := compile()
	var err error
	if rc != sqlite3.SQLITE_OK {
		err = c.errFor(rc)
	}
	c.endPinned()
	return rc, err
}

// endPinned ends the read transaction compilePinned opened, if it is open.
func (c *Conn) endPinned() {
	if !c.inTx() {
		return
	}
	if c.rawExec("COMMIT") != sqlite3.SQLITE_OK && c.inTx() {
		c.rawExec("ROLLBACK")
	}
}

// rawExec runs a fixed SQL text with sqlite3_exec, outside the statement
// cache, and returns SQLite's result code.
func (c *Conn) rawExec(query string) int32 {
	z, err := c.cString(query)
	if err != nil {
		return sqlite3.SQLITE_NOMEM
	}
	defer sqlite3.Xsqlite3_free(c.tls, z)
	return sqlite3.Xsqlite3_exec(c.tls, c.db, z, 0, 0, 0)
}

// restep resets s (keeping its bindings) and steps it again.
func (c *Conn) restep(s *cstmt) int32 {
	sqlite3.Xsqlite3_reset(c.tls, s.p)
	return sqlite3.Xsqlite3_step(c.tls, s.p)
}
