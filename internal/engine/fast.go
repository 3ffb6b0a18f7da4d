package engine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/snkv-go/snkv/internal/layout"

	"github.com/snkv-go/snkv/internal/btree"
	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// FastPath reports whether writes can go below the SQL layer in this
// build (package btree): false in a build with the tag snkv_nofast.
const FastPath = btree.Enabled

// fastWrites counts the writes that went through the fast path.
var fastWrites atomic.Uint64

// FastWrites returns how many writes of the process went through the fast
// path, for tests that say which path runs.
func FastWrites() uint64 { return fastWrites.Load() }

// fastOff turns the fast path off for the whole process (SetFastPath).
var fastOff atomic.Bool

// SetFastPath turns the fast path on or off for every connection of the
// process and returns whether it was on. It is for tests and benchmarks
// that compare the two paths; a build with the tag snkv_nofast has none to
// turn on.
func SetFastPath(on bool) (was bool) { return !fastOff.Swap(!on) && FastPath }

// Upsert writes the row (key, value, crc) of t's data table straight into
// its B-tree when it can, as
//
//	INSERT INTO data (key, value[, crc]) VALUES (…)
//	  ON CONFLICT (key) DO UPDATE SET value = excluded.value[, crc = excluded.crc]
//
// would, with the effect of the column family's TTL triggers (the key's
// TTL rows removed). ok is false when it cannot (not in a write
// transaction, a schema another connection changed since this one parsed
// it, a trigger the fast path does not account for, a build without the
// fast path): nothing was written and the caller runs its SQL statement.
// A failure part way through rolls the whole transaction back, as SQLite
// does after an I/O error, and the connection refuses every later
// statement of the transaction (Aborted).
func (c *Conn) Upsert(t *layout.Objects, key, value []byte, crc int64) (ok bool, err error) {
	if !c.fastOn() {
		return false, nil
	}
	ok, err = c.fast.Upsert(t, key, value, crc)
	return ok, c.fastDone(ok, err)
}

// Delete removes the row of key from t's data table straight from its
// B-tree when it can, as DELETE FROM data WHERE key = ? would (TTL
// triggers included), and reports whether there was one. A column family
// with TTL tables goes below SQL only with withTTL set. ok and err are as
// Upsert's.
func (c *Conn) Delete(t *layout.Objects, key []byte, withTTL bool) (ok, found bool, err error) {
	if !c.fastOn() {
		return false, false, nil
	}
	ok, found, err = c.fast.Delete(t, key, withTTL)
	return ok, found, c.fastDone(ok, err)
}

// AppendChange writes the change log's row r at sequence seq into the
// rowid table named table straight into its B-tree when it can, as the
// change log's INSERT would (btree.Conn.AppendChange). ok and err are as
// Upsert's.
func (c *Conn) AppendChange(table string, seq int64, r *btree.ChangeRow) (ok bool, err error) {
	if !c.fastOn() {
		return false, nil
	}
	ok, err = c.fast.AppendChange(table, seq, r)
	return ok, c.fastDone(ok, err)
}

// PutTTL writes the data row (key, value, crc) and the key's TTL rows
// (expiry exp, 8 bytes; key index checksum keyCrc) straight into the three
// B-trees when it can, as the data upsert followed by the key and expiry
// index INSERT OR REPLACE statements would. The TTL tables must exist. ok
// and err are as Upsert's.
func (c *Conn) PutTTL(t *layout.Objects, key, value []byte, crc int64, exp []byte, keyCrc int64) (ok bool, err error) {
	if !c.fastOn() {
		return false, nil
	}
	ok, err = c.fast.PutTTL(t, key, value, crc, exp, keyCrc)
	return ok, c.fastDone(ok, err)
}

// SetExpiry gives key a new expiry below SQL when it can (btree.Conn.SetExpiry):
// exp nil removes it; flip is XORed into the data row's checksum. ok and
// err are as Upsert's; found is false for a missing row.
func (c *Conn) SetExpiry(t *layout.Objects, key, exp []byte, keyCrc, flip int64) (ok, found bool, err error) {
	if !c.fastOn() {
		return false, false, nil
	}
	ok, found, err = c.fast.SetExpiry(t, key, exp, keyCrc, flip)
	return ok, found, c.fastDone(ok, err)
}

// Purge removes, below SQL when it can, up to limit keys (limit <= 0: all)
// whose expiry index entry sorts below hi, as the set-based purge
// statements would: n data rows removed, more when the limit stopped it.
// ok and err are as Upsert's.
func (c *Conn) Purge(t *layout.Objects, hi []byte, limit int) (ok bool, n int, more bool, err error) {
	if !c.fastOn() {
		return false, 0, false, nil
	}
	ok, n, more, err = c.fast.Purge(t, hi, limit)
	return ok, n, more, c.fastDone(ok, err)
}

// Expired is an entry of a column family's expiry index: its expiry and
// the key it names.
type Expired = btree.Expired

// ExpiredHead reads below SQL, without deleting them, up to limit (<= 0:
// no limit) entries of t's expiry index that sort below hi, from its head,
// in the index's order (a bounded chunk: more reports that entries below hi were
// left). dst and buf are reused. ok is false when the caller must use SQL.
func (c *Conn) ExpiredHead(t *layout.Objects, hi []byte, limit int, dst []Expired, buf []byte) (ok bool, ents []Expired, bufOut []byte, more bool, err error) {
	if !c.fastOn() {
		return false, dst[:0], buf[:0], false, nil
	}
	ok, ents, bufOut, more, err = c.fast.ExpiredHead(t, hi, limit, dst, buf)
	if err != nil {
		return ok, ents, bufOut, more, c.abort(c.fastErr(err))
	}
	return ok, ents, bufOut, more, nil
}

// PurgeKeys deletes below SQL, in the order given, each of ents whose
// expiry index row is still there and sorts below hi, with its key when
// the key index row agrees (as Purge would); the entries whose keys it
// deleted are returned in gone (reusing its array). ok and err are as
// Upsert's.
func (c *Conn) PurgeKeys(t *layout.Objects, hi []byte, ents, gone []Expired) (ok bool, n int, goneOut []Expired, err error) {
	if !c.fastOn() {
		return false, 0, gone[:0], nil
	}
	ok, n, goneOut, err = c.fast.PurgeKeys(t, hi, ents, gone)
	return ok, n, goneOut, c.fastDone(ok, err)
}

// BigTxRows is the number of rows a transaction writes below SQL after
// which the writer keeps up to Config.SpillPages changed pages in memory
// instead of spilling them to the WAL once its cache is full: a bulk load
// that changes thousands of pages then never writes one twice nor reads it
// back from the WAL (a random load of 200k keys ran twice as fast), while
// ordinary transactions (a batch of 1,000) keep SQLite's rule and its
// memory. The transaction's end restores the rule; the pages above the
// cache size are freed then.
const BigTxRows = 4096

// fastDone counts a fast-path write and turns its failure into the
// transaction's abort.
func (c *Conn) fastDone(ok bool, err error) error {
	if err == nil {
		if ok {
			fastWrites.Add(1)
			c.txRows++
			if c.txRows == BigTxRows && c.spillBig > 0 {
				c.setSpill(c.spillBig)
			}
		}
		return nil
	}
	return c.abort(c.fastErr(err))
}

// fastOn reports whether the connection may take the fast path now.
func (c *Conn) fastOn() bool { return c.fast != nil && !fastOff.Load() }

// setSpill sets the connection's spill size (PRAGMA cache_spill); a
// failure only leaves SQLite's rule in place.
func (c *Conn) setSpill(pages int64) {
	if c.ExecScript(context.Background(), fmt.Sprintf("PRAGMA cache_spill = %d", pages)) == nil {
		c.spillRaised = pages != c.spillBase
	}
}

// endTx resets what a transaction changed of the connection's settings:
// Begin and the transaction's end call it.
func (c *Conn) endTx() {
	c.txRows = 0
	if c.spillRaised {
		c.setSpill(c.spillBase)
	}
}

// QueryInt runs a query (a PRAGMA, a count) that returns one integer: the
// first column of its first row, 0 when it has none.
func (c *Conn) QueryInt(ctx context.Context, q string, args ...any) (int64, error) {
	rows, err := c.queryOne(ctx, q, args)
	if err != nil {
		return 0, err
	}
	var n int64
	if rows.Next() {
		n = rows.Int(0)
	}
	return n, c.closeOne(rows)
}

// releaseFast closes the cursors the fast path keeps open across its
// calls: every SQL statement the connection runs comes after it. If the
// fast path fails to finish its writes there, the transaction is rolled
// back (abort) and the statement must not run.
func (c *Conn) releaseFast() error {
	if c.fast != nil {
		if err := c.fast.Release(); err != nil {
			return c.abort(c.fastErr(err))
		}
	}
	return nil
}

// abort rolls back the connection's transaction after a write that failed
// part way with err and records why, for Aborted. A connection that cannot
// roll back is not used again.
func (c *Conn) abort(err *Error) error {
	c.aborted = fmt.Errorf("%w: it was rolled back after a write failed: %w", ErrTxDone, err)
	if rerr := c.ExecScript(context.Background(), "ROLLBACK"); rerr != nil && c.inTx() {
		c.MarkBroken()
	}
	return err
}

// Aborted returns the error that rolled back the connection's current
// transaction behind its owner's back (abort), or nil.
func (c *Conn) Aborted() error { return c.aborted }

// ScanSpec describes a column family scan that may be read straight from
// the table's B-trees (QueryScan): the column family's objects, the
// bounds, the order, and for each column of the SQL statement the column
// of the read view it reads (ViewKey …; -1: NULL). A column family with
// TTL tables is read below SQL, its key index merged with its data table
// as the view's join does, only when Fields reads ViewExpiry.
type ScanSpec struct {
	Objects        *layout.Objects
	Lo, Hi         []byte
	LoIncl, HiIncl bool
	Desc           bool
	Fields         []int
	// Holder, if set, is a statement naming the same table that returns
	// one row without reading it (SELECT EXISTS (SELECT 1 FROM … WHERE
	// 0)): it begins and holds the transaction and checks the schema in
	// place of the scan's own query, whose first step would descend the
	// B-tree comparing keys (reading the whole payload of every row it
	// compares that overflows) only for the fast path's cursor to descend
	// again. When the fast path declines, the query runs after all.
	Holder string
}

// QueryScan runs query as Query does and, when the fast path can read the
// same rows from spec's table (package btree), yields them from a B-tree
// cursor instead: the statement, stepped once, only keeps the transaction
// open and the schema checked until Close. The rows, their order, their
// columns and their bytes are the statement's. query's parameters are
// spec.Lo and spec.Hi.
func (c *Conn) QueryScan(ctx context.Context, query string, spec *ScanSpec) (*Rows, error) {
	held := spec.Holder != "" && c.fastOn()
	var r *Rows
	var err error
	if held {
		// No bounds to bind: boxing them as arguments would cost two
		// allocations a scan.
		r, err = c.Query(ctx, spec.Holder)
	} else {
		r, err = c.Query(ctx, query, spec.Lo, spec.Hi)
	}
	if err != nil || r.done || !c.fastOn() {
		return r, err
	}
	nf := 0
	for _, f := range spec.Fields {
		nf = max(nf, f+1)
	}
	sc, ok, err := c.fast.OpenScan(spec.Objects, spec.Lo, spec.LoIncl, spec.Hi, spec.HiIncl, spec.Desc, nf)
	if err != nil {
		return nil, errors.Join(c.fastErr(err), r.Close())
	}
	if ok {
		r.fast, r.cols, r.ahead, r.below = sc, spec.Fields, false, true
		fastScans.Add(1)
		return r, nil
	}
	if held {
		changed := r.SchemaChanged()
		if err := r.Close(); err != nil {
			return nil, err
		}
		if r, err = c.Query(ctx, query, spec.Lo, spec.Hi); err == nil && changed {
			r.changed = true
		}
		return r, err
	}
	return r, nil
}

// fastScans counts the scans read through the fast path.
var fastScans atomic.Uint64

// FastScans returns how many scans of the process were read through the
// fast path, for tests that say which path runs.
func FastScans() uint64 { return fastScans.Load() }

// fastErr is the Error of a failed fast-path call, with SQLite's message
// for its result code (the connection's own message is the last
// statement's, not this call's).
func (c *Conn) fastErr(err error) *Error {
	rc := int32(sqlite3.SQLITE_ERROR)
	if e, isErr := err.(*btree.Error); isErr {
		rc = int32(e.Code)
	}
	return &Error{code: int(rc), msg: fmt.Sprintf("%s (%d)", libc.GoString(sqlite3.Xsqlite3_errstr(c.tls, rc)), rc)}
}

// nextFast is Next for rows read through the fast path.
func (r *Rows) nextFast() bool {
	if r.done {
		return false
	}
	var err error
	if r.ctx != nil && r.ctx.Done() != nil {
		err = r.ctx.Err()
	}
	if err == nil {
		var ok bool
		if ok, err = r.fast.Next(); ok {
			return true
		}
		if err != nil {
			err = r.conn.fastErr(err)
		}
	}
	r.done, r.err = true, err
	// The cursor goes before the statement that holds the transaction it
	// reads in; resetting the statement releases the read lock now rather
	// than at Close, as for rows read with SQL.
	r.fast.Close()
	r.conn.reset(r.s)
	return false
}

var nullField = btree.Field{Kind: KindNull}

// field returns the record field that column i of a fast row reads.
func (r *Rows) field(i int) *btree.Field {
	if i >= len(r.cols) || r.cols[i] < 0 {
		return &nullField
	}
	if r.rec != nil {
		return &r.rec[r.cols[i]]
	}
	return r.fast.Field(r.cols[i])
}

// fieldBytes returns column i of a fast row as raw does: the bytes of a
// BLOB or TEXT, nil for anything else.
func (r *Rows) fieldBytes(i int) []byte {
	f := r.field(i)
	if f.Kind != KindBlob && f.Kind != KindText {
		return nil
	}
	if f.Bytes == nil {
		return []byte{}
	}
	return f.Bytes
}

// FastRow returns the key and value of the current row of rows read
// through the fast path (QueryScan), with their storage classes, in one
// call, and kv, the key and the value as one slice when they lie one after
// the other (nil otherwise): ok is false for rows read with SQL, whose
// columns are read one by one. The row's other columns are read as usual
// (Int, IntKind).
func (r *Rows) FastRow() (key []byte, keyKind int, value []byte, valueKind int, kv []byte, ok bool) {
	if r.fast == nil {
		return nil, 0, nil, 0, nil, false
	}
	if k, v, kv, _, ok := r.fast.Row(); ok {
		return k, KindBlob, v, KindBlob, kv, true // stored nowhere (btree.Scan.Row)
	}
	k, v := r.fast.Field(0), r.fast.Field(1)
	return k.Bytes, k.Kind, v.Bytes, v.Kind, r.fast.KeyValue(), true
}

// FastKeyIndex reports whether rows read through the fast path read a key
// index beside the data table (a column family with TTL tables): without
// one, every row's expiry is NULL. It holds for the whole scan.
func (r *Rows) FastKeyIndex() bool { return r.fast != nil && r.fast.KeyIndex() }

// KeyExpiry returns, for a row read below SQL, its key index row's key and
// expiry as one slice, the key first (they lie one after the other in the
// record), so that the key index checksum is one pass over both; nil for
// rows read with SQL, a key without a key index row, or a row not of the
// usual form.
func (r *Rows) KeyExpiry() []byte {
	if r.fast != nil {
		return r.fast.KeyExpiry()
	}
	return nil
}

// FastCrc returns the third field of the current row of rows read through
// the fast path (a column family row's checksum) as IntKind would: its
// value and storage class. Only for rows FastRow reported.
func (r *Rows) FastCrc() (int64, int) {
	if _, _, _, crc, ok := r.fast.Row(); ok {
		return crc, KindInt
	}
	f := r.fast.Field(2)
	return f.Int, f.Kind
}
