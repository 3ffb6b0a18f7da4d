package columnfamily

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"sync"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/internal/rowcodec"
	"github.com/snkv-go/snkv/internal/scan"
	"github.com/snkv-go/snkv/internal/seal"
	"github.com/snkv-go/snkv/iterator"
)

// maxDeferredExpired bounds how many expired keys one iteration remembers
// for deletion after it ends; the rest are left for PurgeExpired.
const maxDeferredExpired = 1024

// Cursor opens an explicit cursor limited by opts. Outside a transaction the
// cursor holds a read connection until Close, and takes its snapshot when
// it is first positioned (First, Last or Seek), not when Cursor returns:
// writes committed in between are seen, and every later read of the cursor,
// repositioned or not, sees that one snapshot until Close. On a handle bound
// to a transaction it reads inside the transaction; in a write transaction
// a repositioning reads the transaction's current state. Expired keys are
// skipped.
func (cf *ColumnFamily) Cursor(opts iterator.Options) (*iterator.Cursor, error) {
	src, spec, err := cf.openScan(opts)
	if err != nil {
		return nil, err
	}
	return scan.NewIteratorCursor(src, spec).(*iterator.Cursor), nil
}

// openScan returns the source of an iteration limited by opts, and opts in
// the terms of package scan.
func (cf *ColumnFamily) openScan(opts iterator.Options) (*source, scan.Spec, error) {
	src, err := cf.newSource()
	if err != nil {
		return nil, scan.Spec{}, err
	}
	// Borrowed rows point into the statement, which a write in the same
	// transaction closes (see Detach): a write transaction always copies.
	src.borrow = opts.Borrow && (cf.tx == nil || !cf.tx.Writable())
	return src, scan.Spec(opts), nil
}

// Scan iterates the keys selected by opts. Each step yields an Entry and a
// nil error; a failure is yielded as the last step's error, so the loop
// never ends silently:
//
//	for e, err := range cf.Scan(iterator.Options{Prefix: p}) {
//		if err != nil {
//			return err
//		}
//		use(e.Key, e.Value)
//	}
//
// The source and the cursor of a loop are one allocation, reused by later
// loops once the loop has ended (sourcePool).
func (cf *ColumnFamily) Scan(opts iterator.Options) iter.Seq2[iterator.Entry, error] {
	return func(yield func(iterator.Entry, error) bool) {
		src, spec, err := cf.openScan(opts)
		if err != nil {
			yield(iterator.Entry{}, err)
			return
		}
		src.loop.Init(src, spec)
		scan.Run(&src.loop, yield)
		// Closed by Run (a panic of the loop body does not get here: that
		// source is left to the collector).
		src.release()
	}
}

// sourcePool keeps the sources of ended loops (Scan) for later ones: a
// loop's set-up then allocates neither its source nor its cursor, and its
// copied rows go on filling the block the last loop began (a block is
// shared by the copies only, never written again where it was handed out).
var sourcePool = sync.Pool{New: func() any { return new(source) }}

// release gives back the source of an ended loop, closed, to sourcePool.
// Nothing refers to it after Close: its transaction untracked it, its
// statement is closed and the expired keys it noted were handed on.
func (s *source) release() {
	if !s.closed || s.rows != nil {
		return
	}
	bufs := s.first.bufs
	*s = source{}
	s.first.bufs = bufs
	sourcePool.Put(s)
}

// All iterates every key in ascending order. See Scan.
func (cf *ColumnFamily) All() iter.Seq2[iterator.Entry, error] {
	return cf.Scan(iterator.Options{})
}

// Prefix iterates the keys that start with prefix, in ascending order.
func (cf *ColumnFamily) Prefix(prefix []byte) iter.Seq2[iterator.Entry, error] {
	return cf.Scan(iterator.Options{Prefix: prefix})
}

// Range iterates the keys in [start, end) in ascending order; a nil bound
// is open.
func (cf *ColumnFamily) Range(start, end []byte) iter.Seq2[iterator.Entry, error] {
	return cf.Scan(iterator.Options{Start: start, End: end})
}

// Backward iterates every key in descending order.
func (cf *ColumnFamily) Backward() iter.Seq2[iterator.Entry, error] {
	return cf.Scan(iterator.Options{Reverse: true})
}

// source feeds a cursor from one connection and snapshot.
type source struct {
	cf      *ColumnFamily
	conn    *engine.Conn
	ctx     context.Context
	ownTx   bool // the source began a read transaction on a pooled reader
	nowMs   int64
	expired [][]byte
	closed  bool
	scanned bool              // a scan has run: the snapshot is fixed
	borrow  bool              // rows hand out keys and values in SQLite's memory
	rows    *engine.Rows      // the scan open now, if any
	cur     *scanRows         // the scanRows reading rows
	snap    rowcodec.Snapshot // the encryption state of the snapshot, once looked up (rowcodec.Codec.Open)
	first   scanRows          // the first scan's scanRows, allocated with the source
	reused  bool              // first is taken
	loop    scan.Cursor       // the cursor of a loop (Scan), allocated with the source
}

// sealing is the encryption state the source's rows are read with: its
// snapshot's, once looked up, or the one the store follows now.
func (s *source) sealing() *seal.State {
	if s.snap.Known {
		return s.snap.State()
	}
	return s.cf.m.Sealing()
}

func (cf *ColumnFamily) newSource() (*source, error) {
	if err := cf.alive(); err != nil {
		return nil, err
	}
	s := sourcePool.Get().(*source)
	s.cf, s.nowMs = cf, cf.nowMs()
	if cf.tx != nil {
		if err := cf.tx.Check(false); err != nil {
			return nil, err
		}
		s.conn, s.ctx = cf.tx.Conn(), cf.tx.Ctx()
		cf.tx.Track(s)
	} else {
		ctx := context.Background()
		// One read transaction for the cursor's life: a held one that
		// nothing has committed after, or a new one.
		c, err := cf.db().AcquireSnapshot(ctx, engine.ReadMulti)
		if err != nil {
			*s = source{}
			sourcePool.Put(s)
			return nil, cf.errf(ctx, "iterate", err)
		}
		s.conn, s.ctx, s.ownTx = c, ctx, true
	}
	cf.db().Stats.Iterators.Add(1)
	return s, nil
}

// boundKind is what kind of end of a scan's range b is.
func boundKind(b scan.Bound) layout.BoundKind {
	switch {
	case b.Key == nil:
		return layout.Open
	case b.Inclusive:
		return layout.Inclusive
	}
	return layout.Exclusive
}

// closedErr is the error of using a closed source: ErrTxDone when its
// transaction ended under it, else ErrClosedCursor.
func (s *source) closedErr() error {
	if s.cf.tx != nil {
		if err := s.cf.tx.Check(false); err != nil {
			return err
		}
	}
	return scan.ErrClosed
}

// Scan implements scan.Source.
func (s *source) Scan(lo, hi scan.Bound, desc bool) (scan.Rows, error) {
	if s.closed {
		return nil, s.closedErr()
	}
	if s.ownTx && !s.scanned {
		// The snapshot is taken at the first positioning, not at Cursor.
		if err := s.cf.db().FreshenSnapshot(s.ctx, s.conn); err != nil {
			return nil, s.cf.errf(s.ctx, "iterate", err)
		}
	}
	s.scanned = true
	sh := s.cf.m.Reading()
	q := sh.SQL.Scan(boundKind(lo), boundKind(hi), desc)
	spec := &engine.ScanSpec{Objects: &sh.Objects, Fields: scanFields[:3],
		Lo: lo.Key, LoIncl: lo.Inclusive, Hi: hi.Key, HiIncl: hi.Inclusive, Desc: desc}
	if sh.Objects.Crc {
		spec.Fields = scanFields[:]
	}
	if !s.cf.m.TTL.Load() || sh.Objects.V2 && sh.Objects.Crc {
		// Read below SQL (a column family with version-1 TTL tables is
		// not): hold the transaction with a statement that does not seek.
		spec.Holder = sh.SQL.Holder
	}
	rows, err := s.conn.QueryScan(s.ctx, q, spec)
	if err != nil {
		return nil, s.cf.errf(s.ctx, "iterate", err)
	}
	if rows.SchemaChanged() {
		// Compiled anew: the table may be another column family's now.
		if err := s.cf.current(s.ctx, s.conn); err != nil {
			_ = rows.Close()
			return nil, s.cf.errf(s.ctx, "iterate", err)
		}
	}
	s.rows = rows
	var r *scanRows
	if !s.reused {
		// Most iterations scan once: one allocation fewer.
		r, s.reused = &s.first, true
	} else {
		r = new(scanRows)
	}
	// The blocks and buffers of the last scan read with r are kept (see
	// sourcePool).
	*r = scanRows{src: s, st: &s.cf.db().Stats, rows: rows, cols: &scanColsV1, fastTTL: rows.FastKeyIndex(), cd: s.cf.m.Codec(sh), bufs: r.bufs}
	if sh.Objects.Crc {
		r.cols = &scanCols
	}
	r.cd.Ctx, r.cd.Conn, r.cd.Snap = s.ctx, s.conn, &s.snap
	s.cur = r
	return r, nil
}

// scanFields maps the columns of a scan statement (key, value, expire_ms,
// crc, ecrc) to the columns of the read view for a scan read from the
// B-trees: the data row's key, value and crc, the key index row's expiry
// and crc (NULL for a key without one, or a column family without TTL
// tables).
var scanFields = [...]int{engine.ViewKey, engine.ViewValue, engine.ViewExpiry, engine.ViewCrc, engine.ViewEcrc}

// The columns of a scan statement (layout.Queries.Scan), in a table with
// checksum columns and in one without.
var (
	scanCols   = rowcodec.Cols{Key: layout.ScanKey, Value: layout.ScanValue, Expiry: layout.ScanExpiry, Crc: layout.ScanCrc, Ecrc: layout.ScanEcrc}
	scanColsV1 = rowcodec.Cols{Key: layout.ScanKey, Value: layout.ScanValue, Expiry: layout.ScanExpiry, Crc: -1, Ecrc: -1}
)

// Detach implements engine.Detacher: before the transaction the source
// reads in writes, the open scan's remaining rows are copied and its
// statement closed, so the iteration goes on over the rows as they were
// and never meets the transaction's own later writes.
func (s *source) Detach() {
	r := s.cur
	if s.closed || r == nil || r.detached || s.rows != r.rows {
		return
	}
	for r.rows.Next() {
		key, value, exp, err := r.checkRow(false)
		if err != nil {
			// Reported once the rows before it have been read.
			r.bufErr = err
			break
		}
		row := bufRow{key: bytes.Clone(key), exp: exp}
		if value != nil {
			row.value = append(make([]byte, 0, len(value)), value...)
		}
		r.buf = append(r.buf, row)
	}
	r.bufErr = errors.Join(r.bufErr, r.rows.Close())
	r.detached = true
	s.rows = nil
}

// bufRow is a row copied by Detach.
type bufRow struct {
	key, value []byte
	exp        int64
}

// Close implements scan.Source: it ends the snapshot, gives the
// connection back and deletes the expired keys the scan skipped (see
// ColumnFamily.expired for when). A transaction that ends first closes its
// sources itself; the cursor then reports ErrTxDone.
func (s *source) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	var err error
	if s.rows != nil {
		err = s.rows.Close()
		s.rows = nil
	}
	if s.cf.tx != nil {
		s.cf.tx.Untrack(s)
	}
	if s.ownTx {
		s.cf.db().ReleaseSnapshot(s.conn)
	}
	if len(s.expired) > 0 {
		s.cf.expired(s.expired, s.nowMs)
	}
	return s.cf.errf(s.ctx, "iterate", err)
}

type scanRows struct {
	src        *source
	st         *engine.Counters // the store's counters
	rows       *engine.Rows
	cols       *rowcodec.Cols // where the statement has the row's columns
	cd         rowcodec.Codec // reads and checks the rows
	fastTTL    bool           // read below SQL with a key index: rows may have an expiry
	key, value []byte
	err        error

	detached bool     // reading buf, not rows (see source.Detach)
	buf      []bufRow // the rows not yet reached when detached
	bufErr   error    // the error that ended the copy

	read uint64           // value bytes read, not yet added to the store's counter
	bufs rowcodec.Buffers // the blocks copied rows are carved from, a borrowed row's opened value
}

// flushRead adds the value bytes read to the store's counter: once per
// scan rather than an atomic add per row.
func (r *scanRows) flushRead() {
	if r.read > 0 {
		r.st.BytesRead.Add(r.read)
		r.read = 0
	}
}

// checkRow reads and checks the statement's current row (the codec's
// Decode: key type and length, expiry, value, checksums) and returns its
// key and value (no value for an expired key) and its expiry (-1: none).
// With copied set, the key and value of a live row are copies carved from
// the scan's blocks, key then value (the checksum computed over the row
// where the scan read it, before the copy); otherwise they are in SQLite's
// memory, valid until the next step.
func (r *scanRows) checkRow(copied bool) (key, value []byte, exp int64, err error) {
	cd, m := &r.cd, r.src.cf.m
	// The encryption state the rows are read with: the snapshot's, once
	// looked up, or the one the store follows now (written only when it
	// changed: the codec is on the heap).
	if ss, sealed := r.src.sealing(), m.Sealed.Load(); ss != cd.Seal || sealed != cd.Sealed {
		cd.Seal, cd.Sealed = ss, sealed
	}
	mode := rowcodec.Borrow
	if copied {
		mode = rowcodec.CopyRow
	}
	return cd.Decode(r.rows, r.cols, r.fastTTL, r.src.nowMs, nil, mode, &r.bufs)
}

// nextRow steps to the next row, from the statement (key and value in
// SQLite's memory, or copies when copied is set) or the detached copy
// (copies).
func (r *scanRows) nextRow(copied bool) (key, value []byte, exp int64, ok bool, err error) {
	if r.detached {
		if len(r.buf) == 0 {
			return nil, nil, 0, false, nil
		}
		row := r.buf[0]
		r.buf[0] = bufRow{}
		r.buf = r.buf[1:]
		return row.key, row.value, row.exp, true, nil
	}
	if !r.rows.Next() {
		return nil, nil, 0, false, nil
	}
	key, value, exp, err = r.checkRow(copied)
	return key, value, exp, err == nil, err
}

// Next implements scan.Rows: it steps to the next live key, noting the
// expired ones it skips.
func (r *scanRows) Next() bool {
	var ok bool
	r.key, r.value, ok = r.Step()
	return ok
}

// Step implements scan.Stepper: Next, returning the row rather than
// keeping it (Key and Value are not set), so that a loop's step stores no
// pointer on the heap (under the collector, each such store costs a write
// barrier).
func (r *scanRows) Step() (key, value []byte, ok bool) {
	if r.src.closed {
		// The transaction ended under the cursor.
		r.err = r.src.closedErr()
		return nil, nil, false
	}
	for {
		key, value, exp, ok, err := r.nextRow(!r.src.borrow)
		if err != nil {
			r.err = r.src.cf.errf(r.src.ctx, "iterate", err)
			return nil, nil, false
		}
		if !ok {
			break
		}
		if exp >= 0 && expiry.Expired(exp, r.src.nowMs) {
			if len(r.src.expired) < maxDeferredExpired {
				r.src.expired = append(r.src.expired, bytes.Clone(key))
			}
			continue
		}
		if r.detached {
			value = rowcodec.NonNil(value) // nextRow returned copies
		}
		// Otherwise borrowed (in SQLite's memory) or copied by checkRow.
		r.read += uint64(len(value))
		return key, value, true
	}
	r.flushRead()
	return nil, nil, false
}

// Key implements scan.Rows.
func (r *scanRows) Key() []byte { return r.key }

// Value implements scan.Rows.
func (r *scanRows) Value() []byte { return r.value }

// Err implements scan.Rows.
func (r *scanRows) Err() error {
	if r.err != nil {
		return r.err
	}
	if r.detached {
		return r.src.cf.errf(r.src.ctx, "iterate", r.bufErr)
	}
	return r.src.cf.errf(r.src.ctx, "iterate", r.rows.Err())
}

// Close implements scan.Rows.
func (r *scanRows) Close() error {
	r.flushRead()
	if r.src.cur == r {
		r.src.cur = nil
	}
	if r.detached {
		r.buf = nil
		return nil
	}
	if r.src.rows == r.rows {
		r.src.rows = nil
	}
	return r.src.cf.errf(r.src.ctx, "iterate", r.rows.Close())
}
