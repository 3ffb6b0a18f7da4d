// Package changelog records the committed changes of feed-enabled column
// families in one hidden table, __snkv_changelog, inside the write
// transaction that makes them (docs/format.md, "The change log").
//
// A change is numbered when it is recorded: the first change of a write
// transaction reads the highest sequence in the table and numbers its
// changes from the next one. SQLite has one writer at a time and the
// transaction holds the write lock until it ends, so sequences are in
// commit order with no gap; a rollback takes its rows, and so its numbers,
// with it. The transaction's id is the sequence of its first change.
//
// Row 0 is the header: its key holds the store's epoch, 16 random bytes
// written when the table is created and replaced when the history is
// reset (NewEpoch), so that a position taken in one history is never read
// as a position in another. The header is never trimmed.
package changelog

import (
	"context"
	"crypto/rand"
	"database/sql/driver"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/snkv-go/snkv/internal/btree"
	"github.com/snkv-go/snkv/internal/engine"
)

// Table is the name of the hidden table that holds the change log.
const Table = "__snkv_changelog"

// EpochLen is the length in bytes of a store's epoch.
const EpochLen = 16

// Op is the kind of a change. Its values are stored in the file.
type Op int64

// The kinds of change. Their numbers are part of the file format.
const (
	OpHeader      Op = 0 // row 0 only: the epoch
	OpPut         Op = 1 // key, value (nil when the feed keeps no values), expiry_ms or NULL
	OpDelete      Op = 2 // key
	OpDeleteRange Op = 3 // key is the range's start, value its end (exclusive; NULL: no end)
	OpSetTTL      Op = 4 // key, expiry_ms
	OpClearTTL    Op = 5 // key
	OpExpired     Op = 6 // key removed by expiry; expiry_ms is its deadline, at_ms when it was removed
	OpCreateCF    Op = 7 // the column family was created (key NULL)
	OpDropCF      Op = 8 // the column family was dropped (key NULL)
	// OpSealedPut is a put whose kept value is sealed (an encrypted store):
	// value is the data key's generation parity (one byte), then the
	// sealed value (internal/seal: nonce, ciphertext, tag), bound to the
	// column family and the key (SealTable). Readers see it as OpPut with
	// the value opened (Feeds.OpenValues).
	OpSealedPut Op = 9
)

// String names the op as the feed's JSON lines do.
func (o Op) String() string {
	switch o {
	case OpHeader:
		return "header"
	case OpPut:
		return "put"
	case OpDelete:
		return "delete"
	case OpDeleteRange:
		return "delete_range"
	case OpSetTTL:
		return "set_ttl"
	case OpClearTTL:
		return "clear_ttl"
	case OpExpired:
		return "expired"
	case OpCreateCF:
		return "create_cf"
	case OpDropCF:
		return "drop_cf"
	case OpSealedPut:
		return "sealed_put"
	}
	return fmt.Sprintf("op(%d)", int64(o))
}

// NoExpiry is Change.ExpiryMs of a change without a deadline.
const NoExpiry int64 = -1

// Change is one recorded change.
type Change struct {
	Seq      int64  // position in the log, from 1, in commit order, no gap
	Tx       int64  // the transaction's id: the sequence of its first change
	AtMs     int64  // when the transaction recorded its first change (Unix ms)
	CF       string // the column family
	Op       Op
	Key      []byte
	Value    []byte // the value of a put (if kept), the end of a range delete
	ExpiryMs int64  // the deadline (Unix ms) of a put with TTL, set_ttl or expired; else NoExpiry
}

// The DDL of the table. seq is the rowid, so the log is one B-tree in
// sequence order and "the highest sequence" is a seek to its last row.
const createSQL = `CREATE TABLE IF NOT EXISTS "__snkv_changelog" (
	seq INTEGER PRIMARY KEY,
	tx INTEGER NOT NULL,
	at_ms INTEGER NOT NULL,
	cf TEXT NOT NULL,
	op INTEGER NOT NULL,
	key BLOB,
	value BLOB,
	expiry_ms INTEGER
)`

const (
	headerSQL = `INSERT OR IGNORE INTO "__snkv_changelog" (seq, tx, at_ms, cf, op, key) VALUES (0, 0, ?, '', 0, ?)`
	epochSQL  = `SELECT key FROM "__snkv_changelog" WHERE seq = 0`
	newEpoch  = `UPDATE "__snkv_changelog" SET key = ?, at_ms = ? WHERE seq = 0`
	lastSQL   = `SELECT max(seq) FROM "__snkv_changelog"`
	insertSQL = `INSERT INTO "__snkv_changelog" (seq, tx, at_ms, cf, op, key, value, expiry_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	// No LIMIT: SQLite plans with a LIMIT's bound value and recompiles
	// the statement whenever it changes (a refresh's count changes every
	// time); Read stops stepping at its limit instead.
	readSQL  = `SELECT seq, tx, at_ms, cf, op, key, value, ifnull(expiry_ms, -1) FROM "__snkv_changelog" WHERE seq >= ? ORDER BY seq`
	resetSQL = `DELETE FROM "__snkv_changelog" WHERE seq > 0`
)

// Ensure creates the table and its header, with a fresh epoch, if they
// do not exist, inside the write transaction on c.
func Ensure(ctx context.Context, c *engine.Conn, nowMs int64) error {
	if err := c.ExecScript(ctx, createSQL); err != nil {
		return fmt.Errorf("changelog: create: %w", err)
	}
	ep, err := randomEpoch()
	if err != nil {
		return err
	}
	if _, err := c.Exec(ctx, headerSQL, nowMs, ep); err != nil {
		return fmt.Errorf("changelog: header: %w", err)
	}
	return nil
}

// Epoch reads the store's epoch. It fails with engine.ErrNotFound when
// the store has no change log.
func Epoch(ctx context.Context, c *engine.Conn) ([]byte, error) {
	dest := make([]driver.Value, 1)
	if err := c.QueryRow(ctx, epochSQL, dest); err != nil {
		if engine.NoSuchTable(err) {
			return nil, engine.ErrNotFound
		}
		return nil, err
	}
	b, ok := dest[0].([]byte)
	if !ok || len(b) != EpochLen {
		return nil, fmt.Errorf("changelog: header row: %w", engine.ErrCorrupt)
	}
	return b, nil
}

// Reset forgets the whole history and gives the store a new epoch, inside
// the write transaction on c: what a restore from a backup or a reset of
// the feed does, so that positions of the old history are refused.
func Reset(ctx context.Context, c *engine.Conn, nowMs int64) error {
	ep, err := randomEpoch()
	if err != nil {
		return err
	}
	if _, err := c.Exec(ctx, resetSQL); err != nil {
		return fmt.Errorf("changelog: reset: %w", err)
	}
	if _, err := c.Exec(ctx, newEpoch, ep, nowMs); err != nil {
		return fmt.Errorf("changelog: new epoch: %w", err)
	}
	return nil
}

func randomEpoch() ([]byte, error) {
	ep := make([]byte, EpochLen)
	if _, err := rand.Read(ep); err != nil {
		return nil, fmt.Errorf("changelog: epoch: %w", err)
	}
	return ep, nil
}

// Recorder numbers and writes changes. One Recorder serves a store: it
// keeps, for each write transaction that has recorded a change, the next
// sequence, the transaction's id and time, and forgets them when the
// transaction ends.
type Recorder struct {
	// Now gives the current time in Unix milliseconds (the store's
	// injectable clock). Nil: the wall clock.
	Now func() int64
	// SQLOnly writes every change through the SQL INSERT, never below
	// SQL: for tests that compare the rows the two paths write.
	SQLOnly bool

	mu  sync.Mutex
	txs map[*engine.Tx]*txState
	// spare is the state of a transaction that ended, for the next to
	// reuse (under mu): a state per transaction was a tenth of what a
	// lone Put with a feed allocated.
	spare *txState
	// last is the transaction that recorded last, with its state: a
	// change after the first of a transaction reads it here, without the
	// lock and the map.
	last atomic.Pointer[txState]
}

type txState struct {
	tx             *engine.Tx
	next, id, atMs int64
	// idArg, atArg are id and atMs boxed once, on the first change
	// written through SQL, so that binding them to every change costs no
	// allocation.
	idArg, atArg any
	// end is the transaction's end hook (Recorder.state), made once per
	// state.
	end func()
	// row is the row the fast path writes, reused so that it does not
	// escape for each change.
	row btree.ChangeRow
}

func (r *Recorder) now() int64 {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now().UnixMilli()
}

// state returns tx's numbering, starting it on the transaction's first
// change: the sequence after the highest in the table.
func (r *Recorder) state(ctx context.Context, tx *engine.Tx) (*txState, error) {
	if st := r.last.Load(); st != nil && st.tx == tx {
		return st, nil
	}
	r.mu.Lock()
	st := r.txs[tx]
	r.mu.Unlock()
	if st != nil {
		r.last.Store(st)
		return st, nil
	}
	var dest [1]driver.Value
	if err := tx.Conn().QueryRow(ctx, lastSQL, dest[:]); err != nil {
		return nil, fmt.Errorf("changelog: last sequence: %w", err)
	}
	last, _ := dest[0].(int64) // NULL: no table rows at all; sequences start at 1
	r.mu.Lock()
	st, r.spare = r.spare, nil
	if st == nil {
		st = new(txState)
		st.end = func() { r.ended(st) }
	}
	st.tx, st.next, st.id, st.atMs = tx, last+1, last+1, r.now()
	if r.txs == nil {
		r.txs = make(map[*engine.Tx]*txState)
	}
	r.txs[tx] = st
	r.mu.Unlock()
	r.last.Store(st)
	tx.OnEnd(st.end)
	return st, nil
}

// ended forgets st, whose transaction has ended, and keeps it for the
// next transaction to reuse.
func (r *Recorder) ended(st *txState) {
	// Cleared first: a later transaction at the same address would take
	// the state for its own.
	r.last.CompareAndSwap(st, nil)
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.txs, st.tx)
	// st.tx stays until the state is reused (under mu): the next
	// writer may be comparing it with its own (state's first line).
	st.idArg, st.atArg = nil, nil
	r.spare = st
}

// Record writes one change of column family cf inside the write
// transaction tx and returns its sequence. value is nil when there is
// none to keep; expiryMs is NoExpiry when the change has no deadline.
func (r *Recorder) Record(ctx context.Context, tx *engine.Tx, cf string, op Op, key, value []byte, expiryMs int64) (int64, error) {
	if tx == nil || !tx.Writable() || op == OpHeader {
		return 0, fmt.Errorf("changelog: record %v: %w", op, engine.ErrInvalidArgument)
	}
	st, err := r.state(ctx, tx)
	if err != nil {
		return 0, err
	}
	seq := st.next
	if err := r.write(ctx, tx.Conn(), st, seq, cf, op, key, value, expiryMs); err != nil {
		return 0, fmt.Errorf("changelog: record %v: %w", op, err)
	}
	st.next++
	return seq, nil
}

// write writes the row of a change on c: below SQL when the connection
// can (engine.Conn.AppendChange, the same row), through the INSERT
// otherwise, or always with SQLOnly set.
func (r *Recorder) write(ctx context.Context, c *engine.Conn, st *txState, seq int64, cf string, op Op, key, value []byte, expiryMs int64) error {
	if !r.SQLOnly {
		row := &st.row
		*row = btree.ChangeRow{Tx: st.id, AtMs: st.atMs, CF: cf, Op: int64(op), Key: key, Value: value,
			Expiry: expiryMs, HasExpiry: expiryMs != NoExpiry}
		ok, err := c.AppendChange(Table, seq, row)
		row.Key, row.Value = nil, nil // not kept past the call
		if ok || err != nil {
			return err
		}
	}
	var exp any
	if expiryMs != NoExpiry {
		exp = expiryMs
	}
	var k, v any
	if key != nil {
		k = key
	}
	if value != nil {
		v = value
	}
	if st.idArg == nil {
		st.idArg, st.atArg = st.id, st.atMs
	}
	_, err := c.Exec(ctx, insertSQL, seq, st.idArg, st.atArg, cf, int64(op), k, v, exp)
	return err
}

// Read returns up to limit changes from sequence from on, in order, read
// on c (in a read or write transaction).
func Read(ctx context.Context, c *engine.Conn, from int64, limit int) ([]Change, error) {
	out, _, err := read(ctx, c, from, limit)
	return out, err
}

// read is Read, and reports whether its statement was compiled again.
func read(ctx context.Context, c *engine.Conn, from int64, limit int) ([]Change, bool, error) {
	if from < 1 {
		from = 1
	}
	rows, err := c.Query(ctx, readSQL, from)
	if err != nil {
		return nil, false, fmt.Errorf("changelog: read: %w", err)
	}
	return collect(rows, limit)
}

// collect returns up to limit changes of rows (the columns of readSQL and
// filteredSQL), closing it, and whether its statement was compiled again.
// It stops stepping at limit: a bound LIMIT that changes from one read to
// the next would have SQLite compile the statement again each time.
func collect(rows *engine.Rows, limit int) ([]Change, bool, error) {
	var out []Change
	for len(out) < limit && rows.Next() {
		out = append(out, Change{
			Seq: rows.Int(0), Tx: rows.Int(1), AtMs: rows.Int(2),
			CF: string(rows.Bytes(3)), Op: Op(rows.Int(4)),
			Key: rows.Bytes(5), Value: rows.Bytes(6), ExpiryMs: rows.Int(7),
		})
	}
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, false, fmt.Errorf("changelog: read: %w", err)
	}
	return out, rows.SchemaChanged(), nil
}
