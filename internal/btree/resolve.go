//go:build !snkv_nofast

package btree

import (
	"github.com/snkv-go/snkv/internal/layout"
	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// mainDb returns the main database's Btree* and Schema*.
func (c *Conn) mainDb() (bt, schema uintptr) {
	d := (*sqlite3.Tsqlite3)(cptr(c.db))
	main := (*sqlite3.TDb)(cptr(d.FaDb))
	return main.FpBt, main.FpSchema
}

// inTx reports whether the connection has a transaction of at least level
// (SQLITE_TXN_READ, SQLITE_TXN_WRITE) open on a parsed schema that is
// current, and returns the main Btree*. A schema changed by another
// connection since it was parsed, or not parsed yet, means no: the
// caller's SQL statement reloads it.
//
// Inside an explicit transaction (BEGIN), what it found holds until the
// connection's next SQL statement, which Release precedes: only a
// statement can end the transaction, change the schema or move the
// snapshot. So a run of calls checks once (held), where each call used to
// ask SQLite for the transaction state and the file's schema cookie again.
// A lone statement's transaction (a scan's holder in autocommit mode) ends
// when the statement is reset, with no SQL run, and is checked every time.
func (c *Conn) inTx(level int32) (uintptr, bool) {
	if level < txnWrite && len(c.pend.ents) > 0 {
		// A read below SQL sees the pending TTL rows (pending.go). On
		// failure the caller runs its statement, whose Release reports it.
		if rc := c.flushPending(); rc != sqlite3.SQLITE_OK {
			c.pend.failed = rc
			return 0, false
		}
	}
	if c.held >= level {
		return c.heldBt, true
	}
	bt, sp := c.mainDb()
	if bt == 0 || sp == 0 {
		return 0, false
	}
	state := btreeTxnState(c.tls, bt)
	if state < level {
		return 0, false
	}
	schema := (*sqlite3.TSchema)(cptr(sp))
	if schema.FschemaFlags&dbSchemaLoaded == 0 {
		return 0, false
	}
	btreeGetMeta(c.tls, bt, metaSchemaVer, c.out)
	if *(*int32)(cptr(c.out)) != schema.Fschema_cookie {
		return 0, false
	}
	if schema.FiGeneration != c.gen || schema.Fschema_cookie != c.cookie {
		c.Release()
		clear(c.tables)
		c.last = nil
		c.gen, c.cookie = schema.FiGeneration, schema.Fschema_cookie
	}
	if c.explicitTx() {
		c.held, c.heldBt = state, bt
	}
	return bt, true
}

// explicitTx reports whether the connection is inside a transaction begun
// with BEGIN (not a lone statement's, which commits on its own).
func (c *Conn) explicitTx() bool { return (*sqlite3.Tsqlite3)(cptr(c.db)).FautoCommit == 0 }

// writable is inTx for a write: the connection must be in a write
// transaction (never a lone statement, which commits on its own).
func (c *Conn) writable() (uintptr, bool) {
	if c.held < txnWrite && !c.explicitTx() {
		return 0, false
	}
	return c.inTx(txnWrite)
}

// findTable returns the Table* of name in the main schema, or 0.
func (c *Conn) findTable(name string) uintptr {
	z := cstr(c, name)
	zMain := cstr(c, "main")
	var p uintptr
	if z != 0 && zMain != 0 {
		p = findTable(c.tls, c.db, z, zMain)
	}
	sqlite3.Xsqlite3_free(c.tls, z)
	sqlite3.Xsqlite3_free(c.tls, zMain)
	return p
}

// cstr copies s to C memory with a terminating NUL (0 when out of memory).
func cstr(c *Conn, s string) uintptr {
	z := sqlite3.Xsqlite3_malloc64(c.tls, uint64(len(s)+1))
	if z == 0 {
		return 0
	}
	b := bytesAt(z, len(s)+1)
	copy(b, s)
	b[len(s)] = 0
	return z
}

// shape checks that Table* p is a WITHOUT ROWID table of cols columns and
// returns its root page (0: no), and its triggers' names.
func shape(p uintptr, cols int) (sqlite3.TPgno, []string) {
	if p == 0 {
		return 0, nil
	}
	tab := (*sqlite3.TTable)(cptr(p))
	if tab.FtabFlags&tfWithoutRowid == 0 || tab.FeTabType != tabTypNorm || int(tab.FnCol) != cols || tab.Ftnum <= 1 {
		return 0, nil
	}
	var trig []string
	for t := tab.FpTrigger; t != 0; t = (*sqlite3.TTrigger)(cptr(t)).FpNext {
		trig = append(trig, libc.GoString((*sqlite3.TTrigger)(cptr(t)).FzName))
	}
	return tab.Ftnum, trig
}

// resolve finds t's tables in the current schema (cached for it) and says
// whether the fast path may use them: the data table of the expected shape
// with no trigger but t's own, and either no TTL state at all or the whole
// format-2 TTL state (both tables, all three triggers).
func (c *Conn) resolve(t *layout.Objects) resolved {
	r, _ := c.resolveFresh(t)
	return r
}

// resolveFresh is resolve, and reports whether t was looked up in the
// schema now rather than found in the cache: its first use on the
// connection since the schema was (re)loaded or changed.
func (c *Conn) resolveFresh(t *layout.Objects) (resolved, bool) {
	if t == c.last && c.last != nil {
		return c.lastR, false
	}
	if r, ok := c.tables[t.Data]; ok {
		c.last, c.lastR = t, r
		return r, false
	}
	var r resolved
	cols := 2
	if t.Crc {
		cols = 3
	}
	dataTab := c.findTable(t.Data)
	root, trig := shape(dataTab, cols)
	withCopy := false
	if root == 0 && t.Crc && t.V2 {
		// A format-2 table with the expiry copy column.
		root, trig = shape(dataTab, cols+1)
		withCopy = root != 0
	}
	nTTL, nCopy, foreign := 0, 0, false
	for _, name := range trig {
		switch name {
		case t.CrcTrigger:
		case t.TTLTriggers[0], t.TTLTriggers[1], t.TTLTriggers[2]:
			nTTL++
		case t.CopyTriggers[layout.CopyDataInsert], t.CopyTriggers[layout.CopyDataUpdate]:
			nCopy++
		default:
			foreign = true
		}
	}
	keys, expiry := c.findTable(t.Keys), c.findTable(t.Expiry)
	switch {
	case root == 0 || foreign:
	case keys == 0 && expiry == 0 && nTTL == 0 && !withCopy && nCopy == 0:
		r = resolved{ok: true, data: root}
	case keys != 0 && expiry != 0 && nTTL == 3 && t.V2 && t.Crc:
		kroot, ktrig := shape(keys, 3)
		eroot, etrig := shape(expiry, 2)
		if kroot == 0 || eroot == 0 || len(etrig) != 0 {
			break
		}
		switch {
		case !withCopy && nCopy == 0 && len(ktrig) == 0:
			r = resolved{ok: true, ttl: true, data: root, keys: kroot, expiry: eroot}
		case withCopy && nCopy == 2 && copyKeyTriggers(t, ktrig):
			r = resolved{ok: true, ttl: true, copy: true, data: root, keys: kroot, expiry: eroot}
		}
	}
	if c.tables == nil {
		c.tables = make(map[string]resolved)
	}
	c.tables[t.Data] = r
	c.last, c.lastR = t, r
	return r, true
}

// copyKeyTriggers reports whether trig, the triggers of t's key index, are
// exactly the three that clear the expiry copy.
func copyKeyTriggers(t *layout.Objects, trig []string) bool {
	if len(trig) != 3 {
		return false
	}
	for _, name := range trig {
		switch name {
		case t.CopyTriggers[layout.CopyKeysInsert], t.CopyTriggers[layout.CopyKeysUpdate], t.CopyTriggers[layout.CopyKeysDelete]:
		default:
			return false
		}
	}
	return true
}

// begin checks that a write may go below SQL now and resolves t.
func (c *Conn) begin(t *layout.Objects) (uintptr, resolved, bool) {
	if !c.init() {
		return 0, resolved{}, false
	}
	bt, ok := c.writable()
	if !ok {
		return 0, resolved{}, false
	}
	r := c.resolve(t)
	return bt, r, r.ok
}
