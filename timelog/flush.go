package timelog

import (
	"context"
	"fmt"
	"slices"

	"github.com/snkv-go/snkv/kvstore"
)

// Flush makes everything written before the call durable (to the store's
// Options.Sync level) before it returns: it seals the active buffer and
// flushes every sealed buffer, each in its own transaction. ErrBusy from
// Flush means the store's write lock stayed taken: nothing was lost, a
// retry is safe. On a read-only log it returns ErrReadOnly.
func (l *Log) Flush(ctx context.Context) error {
	l.mu.Lock()
	err := l.checkWrite()
	l.mu.Unlock()
	if err != nil {
		return err
	}
	return l.flushAll(ctx)
}

func (l *Log) flushAll(ctx context.Context) error {
	l.mu.Lock()
	l.sealLocked()
	target := l.nextRun
	l.mu.Unlock()
	defer l.ret.deliver(l.cfg.ReleaseDrainLimit)
	for {
		done, err := l.flushOne(ctx, target)
		if err != nil || done {
			return err
		}
	}
}

// flushOne flushes the oldest sealed buffer if its id is at most upTo, and
// reports whether there was none left to flush.
func (l *Log) flushOne(ctx context.Context, upTo uint64) (done bool, err error) {
	l.workMu.Lock()
	defer l.workMu.Unlock()
	l.mu.Lock()
	if len(l.sealed) == 0 || l.sealed[0].id > upTo {
		l.mu.Unlock()
		return true, nil
	}
	r := l.sealed[0]
	seq := l.seq
	l.mu.Unlock()
	if err := l.flushRun(ctx, r, seq); err != nil {
		l.st.flushErrors.Add(1)
		return false, fromStore(fmt.Errorf("timelog: flush %q: %w", l.name, err))
	}
	return false, nil
}

// txManifest returns the durable state as tx sees it: the cached manifest
// if its generation matches, else one read from tx.
func (l *Log) txManifest(tx *kvstore.Tx) (*manifest, error) {
	t := l.t.in(tx)
	gen, err := getU64(t.meta, metaGen)
	if err != nil {
		return nil, err
	}
	if m := l.man.Load(); m != nil && m.gen == gen {
		return m, nil
	}
	m, err := loadManifest(t)
	if err != nil {
		return nil, err
	}
	l.man.Store(m)
	return m, nil
}

// flushRun writes sealed buffer r in one transaction and pops it from the
// queue at commit. Records already hidden by a delete known at this point
// are not written: they are dropped, and announced after the commit.
func (l *Log) flushRun(ctx context.Context, r *run, seq uint64) error {
	tx, err := l.store.Begin(ctx, true)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	old, err := l.txManifest(tx)
	if err != nil {
		return err
	}
	w := newWriter(l.t.in(tx), old, old.tombs, r.tombs)
	// keep is the buffer itself unless a delete hides some of it; only
	// the deletes that may hide one of its records are tried.
	keep := r.recs
	var dropped []rec
	hiders := mayHide(mayHide(nil, r, r.tombs), r, old.tombs)
	for i, x := range r.recs {
		if len(hiders) == 0 {
			break // nothing to drop
		}
		if hidden(hiders, x) {
			if len(dropped) == 0 {
				keep = append(make([]rec, 0, len(r.recs)), r.recs[:i]...)
			}
			dropped = append(dropped, x)
			continue
		}
		if len(dropped) > 0 {
			keep = append(keep, x)
		}
	}
	if err := w.addPages(keep, &l.cfg); err != nil {
		return err
	}
	for _, t := range r.tombs {
		// A delete matters only if a stored page may hold a record it
		// hides; the buffer's own records were just filtered.
		if l.hidesStored(old, t) {
			if err := w.addTomb(t); err != nil {
				return err
			}
		}
	}
	if err := l.flushValues(w.t, r, keep); err != nil {
		return err
	}
	m, err := w.finish(seq, len(dropped) > 0)
	if err != nil {
		return err
	}
	epoch := m.epoch
	tx.OnCommit(func() { l.ret.queue(dropped, epoch) })
	l.pubMu.Lock()
	defer l.pubMu.Unlock()
	if err := failCommit(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	l.man.Store(m)
	l.keepChecked(w)
	l.mu.Lock()
	l.sealed = l.sealed[1:]
	l.recycle(r)
	close(l.room)
	l.room = make(chan struct{})
	l.mu.Unlock()
	l.st.flushes.Add(1)
	l.st.flushedRecords.Add(int64(len(keep)))
	return nil
}

// mayHide appends to dst the deletes of ts that may hide a record of r: newer
// than its oldest record, overlapping its span.
func mayHide(dst []tomb, r *run, ts []tomb) []tomb {
	sp := r.span()
	for _, t := range ts {
		if t.seq > r.minSeq && sp.overlaps(t.lo, t.hi) {
			dst = append(dst, t)
		}
	}
	return dst
}

// hidesStored reports whether some page of m may hold a record t hides:
// one that overlaps t, holds older records and was not checked against t.
// Called with workMu held.
func (l *Log) hidesStored(m *manifest, t tomb) bool {
	g0, g1 := m.groupsIn(span{t.lo, t.hi})
	for g := g0; g < g1; g++ {
		for _, p := range m.pages[m.groups[g].start:m.groups[g].end] {
			if p.minSeq < t.seq && p.span().overlaps(t.lo, t.hi) && !slices.Contains(l.checked[p.id], t.seq) {
				return true
			}
		}
	}
	return false
}

// keepChecked records, after a commit, which deletes the new pages were
// checked against (workMu held).
func (l *Log) keepChecked(w *writer) {
	for _, id := range w.removed {
		delete(l.checked, id)
	}
	for id, seqs := range w.checked {
		l.checked[id] = seqs
	}
}
