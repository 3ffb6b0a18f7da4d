package timelog

import (
	"fmt"
	"math"

	"github.com/snkv-go/snkv/kvstore"
)

// Tx writes to a log inside a store transaction (see Log.In).
type Tx struct {
	l  *Log
	tx *kvstore.Tx
}

// In returns the log's write methods bound to the write transaction tx:
// they bypass the buffer and write straight to the log's tables inside tx,
// so they become visible (and durable) when tx commits, together with the
// transaction's key-value writes, and vanish if it rolls back. Each call
// writes at least one page, so batch records with AppendBatch. Sequence
// numbers are taken at the call, so a buffered delete made after it hides
// the record and one made before does not.
func (l *Log) In(tx *kvstore.Tx) *Tx { return &Tx{l: l, tx: tx} }

// Append writes one record in the transaction.
func (w *Tx) Append(ts int64, h uint64) error {
	return w.AppendBatch([]Record{{Ts: ts, Handle: h}})
}

// AppendBatch writes the records in the transaction, all or nothing.
func (w *Tx) AppendBatch(batch []Record) error {
	if len(batch) == 0 {
		return nil
	}
	if w.l.t.values != nil {
		return w.l.errValuesLog()
	}
	seq, err := w.take(len(batch))
	if err != nil {
		return err
	}
	return w.appendRecs(batch, seq, nil)
}

// appendRecs writes batch (sequence numbers ending at seq) as pages, and
// runs extra in the same transaction.
func (w *Tx) appendRecs(batch []Record, seq uint64, extra func(t tables) error) error {
	recs := make([]rec, len(batch))
	for i, r := range batch {
		recs[i] = rec{ts: r.Ts, seq: seq - uint64(len(batch)-1) + uint64(i), h: r.Handle}
	}
	sortRecs(recs)
	return w.write(seq, func(t tables, next uint64) (uint64, error) {
		var enc pageEncoder
		for len(recs) > 0 {
			b, p, n := enc.page(recs, &w.l.cfg)
			p.id = next
			next++
			if err := t.pages.Put(p.key(), b); err != nil {
				return next, err
			}
			if err := t.meta.Put(p.summaryKey(), p.summary()); err != nil {
				return next, err
			}
			recs = recs[n:]
		}
		if extra != nil {
			return next, extra(t)
		}
		return next, nil
	})
}

// DeleteRange deletes [t1, t2) in the transaction (see Log.DeleteRange).
func (w *Tx) DeleteRange(t1, t2 int64) error {
	s, err := halfOpen(t1, t2)
	if err != nil {
		return err
	}
	return w.deleteSpan(s)
}

// DeleteBefore deletes [math.MinInt64, cutoff) in the transaction.
func (w *Tx) DeleteBefore(cutoff int64) error { return w.DeleteRange(math.MinInt64, cutoff) }

// DeleteFrom deletes [t, math.MaxInt64] in the transaction.
func (w *Tx) DeleteFrom(t int64) error { return w.deleteSpan(span{t, math.MaxInt64}) }

func (w *Tx) deleteSpan(s span) error {
	if s.empty() {
		return w.check()
	}
	seq, err := w.take(1)
	if err != nil {
		return err
	}
	return w.write(seq, func(t tables, next uint64) (uint64, error) {
		return next, t.tombs.Put(tombKey(seq), tombValue(tomb{lo: s.lo, hi: s.hi, seq: seq}))
	})
}

func (w *Tx) check() error {
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	if err := w.l.checkWrite(); err != nil {
		return err
	}
	if !w.tx.Writable() {
		return fmt.Errorf("timelog: %q: %w", w.l.name, kvstore.ErrReadOnlyTx)
	}
	return nil
}

// take reserves n sequence numbers and returns the last.
func (w *Tx) take(n int) (uint64, error) {
	if err := w.check(); err != nil {
		return 0, err
	}
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	w.l.seq += uint64(n)
	return w.l.seq, nil
}

// write runs f on the tables bound to the transaction, with the next page
// id, then updates the counters. The cached state is left alone: the new
// generation makes the next reader load the committed one.
func (w *Tx) write(seq uint64, f func(t tables, nextPage uint64) (uint64, error)) error {
	t := w.l.t.in(w.tx)
	err := func() error {
		next, err := getU64(t.meta, metaNextPage)
		if err != nil {
			return err
		}
		if next, err = f(t, next); err != nil {
			return err
		}
		stored, err := getU64(t.meta, metaSeq)
		if err != nil {
			return err
		}
		gen, err := getU64(t.meta, metaGen)
		if err != nil {
			return err
		}
		for _, kv := range []struct {
			k string
			v uint64
		}{{metaNextPage, next}, {metaSeq, max(stored, seq)}, {metaGen, gen + 1}} {
			if err := t.meta.Put([]byte(kv.k), u64(kv.v)); err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil {
		return fromStore(fmt.Errorf("timelog: %q: write in transaction: %w", w.l.name, err))
	}
	return nil
}
