package engine

import (
	"context"
	"io"
	"strings"
	"sync"
)

// Tx is an explicit transaction on one connection: the writer (BEGIN
// IMMEDIATE) or a reader (a deferred read transaction whose snapshot is taken
// at Begin).
type Tx struct {
	db       *DB
	conn     *Conn
	ctx      context.Context
	writable bool

	mu         sync.Mutex
	done       bool
	onCommit   []func()
	onRollback []func()
	onEnd      []func()
	open       map[io.Closer]struct{} // cursors reading in the transaction
	// verified holds what callers checked once in this (write)
	// transaction and need not check again: see Verified.
	verified map[any]struct{}
	lastVer  any // the key MarkVerified saw last (perhaps not in verified): most calls ask for it again
}

// Begin starts a transaction. A writable one waits for the in-process writer
// and then for the file's write lock (busy timeout); a read-only one pins a
// WAL snapshot immediately.
func (db *DB) Begin(ctx context.Context, writable bool) (*Tx, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if !writable {
		// A read transaction whose snapshot is taken now, or a held one
		// that nothing has committed after (snapshot.go).
		c, err := db.AcquireSnapshot(ctx, ReadPinned)
		if err != nil {
			return nil, err
		}
		return &Tx{db: db, conn: c, ctx: ctx}, nil
	}
	c, err := db.AcquireWriter(ctx)
	if err != nil {
		return nil, err
	}
	c.aborted = nil
	c.endTx()
	if err = c.Control(ctx, "BEGIN IMMEDIATE"); err != nil {
		_ = c.Control(context.Background(), "ROLLBACK")
		db.ReleaseWriter(c)
		return nil, Wrap(ctx, "begin", err)
	}
	return &Tx{db: db, conn: c, ctx: ctx, writable: true}, nil
}

func (db *DB) release(c *Conn, writable bool) {
	if writable {
		db.ReleaseWriter(c)
	} else {
		// Its read transaction may stay open for the next read.
		db.ReleaseSnapshot(c)
	}
}

// Conn is the transaction's connection.
func (tx *Tx) Conn() *Conn { return tx.conn }

// Ctx is the context the transaction was begun with; statements in the
// transaction run under it.
func (tx *Tx) Ctx() context.Context { return tx.ctx }

// Writable reports whether the transaction may write.
func (tx *Tx) Writable() bool { return tx.writable }

// DB is the database the transaction runs on.
func (tx *Tx) DB() *DB { return tx.db }

// Check returns ErrTxDone once the transaction has ended, and, when write is
// set, ErrReadOnlyTx for a read-only transaction.
func (tx *Tx) Check(write bool) error {
	tx.mu.Lock()
	done, open := tx.done, len(tx.open) > 0
	tx.mu.Unlock()
	if done {
		return ErrTxDone
	}
	if err := tx.conn.Aborted(); err != nil && tx.writable {
		return err
	}
	if write && !tx.writable {
		return ErrReadOnlyTx
	}
	if write && open {
		tx.detachOpen()
	}
	return nil
}

// Verified reports whether MarkVerified(k) was called in this transaction
// since its last ForgetVerified. A write transaction holds the file's write
// lock, so a fact about the schema or the catalog that it checked stays true
// until the transaction itself changes them (and calls ForgetVerified):
// layers above use it to check once per transaction what a lone statement
// would check on every call. A read-only transaction verifies nothing.
func (tx *Tx) Verified(k any) bool {
	if !tx.writable {
		return false
	}
	if tx.lastVer == k && k != nil {
		return true
	}
	_, ok := tx.verified[k]
	return ok
}

// MarkVerified records that k (not nil: a nil k is ignored) has been
// checked in this transaction.
func (tx *Tx) MarkVerified(k any) {
	if !tx.writable || k == nil || k == tx.lastVer {
		return
	}
	// The key marked last is kept in lastVer alone, and the one before it
	// moves to the map: most transactions check one key (a lone Put's
	// column family), and a map for it was a quarter of the bytes a lone
	// Put with a feed allocated.
	if tx.lastVer != nil {
		if tx.verified == nil {
			tx.verified = make(map[any]struct{})
		}
		tx.verified[tx.lastVer] = struct{}{}
	}
	tx.lastVer = k
}

// ForgetVerified forgets every MarkVerified of the transaction: a caller
// that changes the schema or the catalog calls it.
func (tx *Tx) ForgetVerified() {
	clear(tx.verified)
	tx.lastVer = nil
}

// Detacher is a tracked cursor that can stop reading the connection: it
// copies the rows it has not reached yet, so that the transaction's next
// write does not change what it yields.
type Detacher interface {
	Detach()
}

// detachOpen detaches every tracked cursor before a write: an iteration
// inside a write transaction reads the rows as they were before the
// transaction's writes made during it (a loop that writes ahead of itself
// would otherwise never end).
func (tx *Tx) detachOpen() {
	tx.mu.Lock()
	var ds []Detacher
	for c := range tx.open {
		if d, ok := c.(Detacher); ok {
			ds = append(ds, d)
		}
	}
	tx.mu.Unlock()
	for _, d := range ds {
		d.Detach()
	}
}

// OnCommit registers f to run after a successful commit, in registration
// order. It never runs on rollback.
func (tx *Tx) OnCommit(f func()) {
	tx.mu.Lock()
	tx.onCommit = append(tx.onCommit, f)
	tx.mu.Unlock()
}

// OnRollback registers f to run if the transaction does not commit
// (rollback, or a failed commit), before the connection is released.
func (tx *Tx) OnRollback(f func()) {
	tx.mu.Lock()
	tx.onRollback = append(tx.onRollback, f)
	tx.mu.Unlock()
}

// Track registers c (a cursor reading on the transaction's connection) to
// be closed when the transaction ends, before its COMMIT or ROLLBACK, so
// that nothing reads the connection once it is back in the pool.
func (tx *Tx) Track(c io.Closer) {
	tx.mu.Lock()
	if tx.open == nil {
		tx.open = make(map[io.Closer]struct{})
	}
	tx.open[c] = struct{}{}
	tx.mu.Unlock()
}

// Untrack forgets c (it was closed by its user).
func (tx *Tx) Untrack(c io.Closer) {
	tx.mu.Lock()
	delete(tx.open, c)
	tx.mu.Unlock()
}

func (tx *Tx) closeOpen() {
	tx.mu.Lock()
	open := tx.open
	tx.open = nil
	tx.mu.Unlock()
	for c := range open {
		_ = c.Close()
	}
}

// OnEnd registers f to run after the transaction ends either way, once its
// connection is back in the pool.
func (tx *Tx) OnEnd(f func()) {
	tx.mu.Lock()
	tx.onEnd = append(tx.onEnd, f)
	tx.mu.Unlock()
}

// finish marks the transaction ended; a second end gets ErrTxDone.
func (tx *Tx) finish() error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.done {
		return ErrTxDone
	}
	tx.done = true
	return nil
}

// Commit commits. Commit hooks run only if it succeeds; a failed commit
// rolls the transaction back.
func (tx *Tx) Commit() error {
	if err := tx.finish(); err != nil {
		return err
	}
	tx.closeOpen()
	if !tx.writable {
		// Nothing to commit: ReleaseSnapshot ends or keeps the snapshot.
		tx.end(true)
		return nil
	}
	if err := tx.conn.Aborted(); err != nil {
		// A write failed part way and SQLite's transaction is gone.
		tx.db.Stats.Rollbacks.Add(1)
		tx.end(false)
		return err
	}
	err := tx.conn.Control(context.Background(), "COMMIT")
	if err != nil {
		if rerr := tx.conn.Control(context.Background(), "ROLLBACK"); rerr != nil && !noTx(rerr) {
			tx.conn.MarkBroken()
		}
		tx.db.Stats.Rollbacks.Add(1)
	} else {
		tx.db.Stats.Commits.Add(1)
	}
	tx.end(err == nil)
	return Wrap(context.Background(), "commit", err)
}

// Rollback abandons the transaction. Rolling back a finished transaction
// returns ErrTxDone.
func (tx *Tx) Rollback() error {
	if err := tx.finish(); err != nil {
		return err
	}
	tx.closeOpen()
	if !tx.writable {
		tx.end(false)
		return nil
	}
	err := tx.conn.Control(context.Background(), "ROLLBACK")
	if err != nil && noTx(err) {
		// SQLite already rolled back on its own (for example after SQLITE_FULL).
		err = nil
	}
	if err != nil {
		tx.conn.MarkBroken()
	}
	tx.db.Stats.Rollbacks.Add(1)
	tx.end(false)
	return Wrap(context.Background(), "rollback", err)
}

// end gives the connection back and runs the hooks of the outcome:
// rollback hooks while the connection is still held, commit hooks after
// it is released, end hooks last. A hook that panics stops neither the
// other hooks nor the release of the connection (a held writer
// connection would fail every later write with ErrBusy and make Close
// wait for ever): the first panic goes on once all of it is done.
func (tx *Tx) end(committed bool) {
	var p hookPanic
	if tx.writable {
		tx.conn.endTx()
	}
	if !committed {
		p.run(tx.onRollback)
	}
	tx.db.release(tx.conn, tx.writable)
	if committed {
		p.run(tx.onCommit)
	}
	p.run(tx.onEnd)
	if p.raised {
		panic(p.value)
	}
}

// hookPanic holds the first panic of a transaction's hooks.
type hookPanic struct {
	value  any
	raised bool
}

// run calls each of hooks, noting the first panic and going on.
func (p *hookPanic) run(hooks []func()) {
	for _, f := range hooks {
		p.call(f)
	}
}

func (p *hookPanic) call(f func()) {
	defer func() {
		if r := recover(); r != nil && !p.raised {
			p.value, p.raised = r, true
		}
	}()
	f()
}

// noTx reports the error of ending a transaction that SQLite already ended.
func noTx(err error) bool {
	return strings.Contains(err.Error(), "no transaction is active")
}
