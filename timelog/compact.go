package timelog

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// Compaction, one bounded transaction per step:
//   - a group of overlapping pages is merged into pages that only touch
//     (at most CompactMaxPages pages per step: a larger group is done from
//     its start, cut at a timestamp so the part before the cut is final);
//   - a page holding records hidden by a stored delete is rewritten without
//     them (at most CompactMaxPages pages per step);
//   - a stored delete that hides nothing any more is removed;
//   - pages of the fixed layout (version 2, written before dense pages)
//     are rewritten as dense pages, a run of consecutive ones (at most
//     CompactMaxPages) at a time, merged like a group.
// Removed records are announced after the commit. Each step is one
// transaction: a crash leaves the log as the last committed step left it.

// selection is the work of one compaction step.
type selection struct {
	merge []pageInfo // pages merged together, output cut at cut
	cut   int64      // math.MaxInt64: no cut
	purge []pageInfo // pages rewritten one by one without hidden records
}

// dirty reports whether the pages of g overlap beyond touching ends.
func dirty(pages []pageInfo) bool {
	hi := pages[0].maxTs
	for _, p := range pages[1:] {
		if p.minTs < hi {
			return true
		}
		hi = max(hi, p.maxTs)
	}
	return false
}

// deletedShare estimates the share of page p hidden by deletes it was not
// checked against: the part of its span they cover.
func (l *Log) deletedShare(m *manifest, p pageInfo) float64 {
	width := float64(p.maxTs) - float64(p.minTs) + 1
	var covered float64
	for _, t := range m.tombs {
		if t.seq > p.minSeq && t.hi >= p.minTs && t.lo <= p.maxTs && !slices.Contains(l.checked[p.id], t.seq) {
			covered += float64(min(t.hi, p.maxTs)) - float64(max(t.lo, p.minTs)) + 1
		}
	}
	return min(1, covered/width)
}

func (l *Log) choose(m *manifest, force bool) selection {
	sel := selection{cut: math.MaxInt64}
	limit := l.cfg.CompactMaxPages
	threshold := l.cfg.CompactOverlapPages
	if force {
		threshold = 2
	}
	for _, g := range m.groups {
		ps := m.pages[g.start:g.end]
		if len(ps) < threshold || !dirty(ps) {
			continue
		}
		if len(ps) > limit {
			cut := ps[limit].minTs
			if cut > ps[0].minTs {
				n := 0
				for n < len(ps) && ps[n].minTs < cut {
					n++
				}
				ps, sel.cut = ps[:n], cut
			}
		}
		sel.merge = ps
		return sel
	}
	frac := l.cfg.deletedFrac
	for _, p := range m.pages {
		if s := l.deletedShare(m, p); s > 0 && (force || s >= frac) {
			sel.purge = append(sel.purge, p)
			if len(sel.purge) >= limit {
				break
			}
		}
	}
	if len(sel.purge) == 0 {
		sel.merge = fixedRun(m.pages, limit)
	}
	return sel
}

// fixedRun returns the first run of consecutive fixed-layout pages (at most
// limit), nil if there is none.
func fixedRun(pages []pageInfo, limit int) []pageInfo {
	for i, p := range pages {
		if p.version != fixedVersion {
			continue
		}
		j := i + 1
		for j < len(pages) && j-i < limit && pages[j].version == fixedVersion {
			j++
		}
		return pages[i:j]
	}
	return nil
}

// minUnflushedSeq returns the lowest sequence number of a buffered record.
func (l *Log) minUnflushedSeq() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	low := uint64(math.MaxUint64)
	for _, r := range l.sealed {
		low = min(low, r.minSeq)
	}
	return min(low, l.mem.minSeq)
}

// compactStep runs one compaction step and reports whether it did any work.
func (l *Log) compactStep(ctx context.Context, force bool) (bool, error) {
	l.workMu.Lock()
	defer l.workMu.Unlock()
	did, err := l.compactTx(ctx, force)
	if err != nil {
		l.st.compactErrors.Add(1)
		return false, fromStore(fmt.Errorf("timelog: compact %q: %w", l.name, err))
	}
	return did, nil
}

func (l *Log) compactTx(ctx context.Context, force bool) (bool, error) {
	tx, err := l.store.Begin(ctx, true)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	old, err := l.txManifest(tx)
	if err != nil {
		return false, err
	}
	sel := l.choose(old, force)
	t := l.t.in(tx)
	w := newWriter(t, old, old.tombs)
	var dropped []rec
	read := func(p pageInfo, dst []rec) ([]rec, error) {
		b, err := t.pages.Get(p.key())
		if err != nil {
			return dst, fmt.Errorf("read page %d: %w", p.id, err)
		}
		return decodePage(dst, b, p.n, l.name, p.key())
	}
	keep := func(recs []rec) []rec {
		return slices.DeleteFunc(recs, func(x rec) bool {
			if hidden(old.tombs, x) {
				dropped = append(dropped, x)
				return true
			}
			return false
		})
	}
	if len(sel.merge) > 0 {
		var all []rec
		for _, p := range sel.merge {
			if all, err = read(p, all); err != nil {
				return false, err
			}
		}
		slices.SortFunc(all, cmpRec)
		all = keep(all)
		split := len(all)
		for i, x := range all {
			if x.ts >= sel.cut {
				split = i
				break
			}
		}
		if err := w.addPages(all[:split], &l.cfg); err != nil {
			return false, err
		}
		if err := w.addPages(all[split:], &l.cfg); err != nil {
			return false, err
		}
		if err := w.removePages(sel.merge); err != nil {
			return false, err
		}
	}
	var buf []rec
	for _, p := range sel.purge {
		if buf, err = read(p, buf[:0]); err != nil {
			return false, err
		}
		if err := w.removePages([]pageInfo{p}); err != nil {
			return false, err
		}
		if err := w.addPages(keep(buf), &l.cfg); err != nil {
			return false, err
		}
	}
	// Deletes that hide nothing stored and nothing buffered go.
	w.m.index()
	low := l.minUnflushedSeq()
	gcs := 0
	for _, tb := range slices.Clone(w.m.tombs) {
		if tb.seq < low && !l.hidesStoredAfter(w, tb) {
			if err := w.removeTomb(tb); err != nil {
				return false, err
			}
			gcs++
		}
	}
	if len(sel.merge) == 0 && len(sel.purge) == 0 && gcs == 0 {
		return false, nil
	}
	if err := l.deleteValues(t, dropped); err != nil {
		return false, err
	}
	m, err := w.finish(0, len(dropped) > 0)
	if err != nil {
		return false, err
	}
	epoch := m.epoch
	tx.OnCommit(func() { l.ret.queue(dropped, epoch) })
	l.pubMu.Lock()
	defer l.pubMu.Unlock()
	if err := failCommit(tx); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, err
	}
	l.man.Store(m)
	l.keepChecked(w)
	l.st.compactions.Add(1)
	l.st.compactedPages.Add(int64(len(sel.merge) + len(sel.purge)))
	return true, nil
}

// hidesStoredAfter is hidesStored on the state w is building.
func (l *Log) hidesStoredAfter(w *writer, t tomb) bool {
	m := w.m
	g0, g1 := m.groupsIn(span{t.lo, t.hi})
	for g := g0; g < g1; g++ {
		for _, p := range m.pages[m.groups[g].start:m.groups[g].end] {
			if p.minSeq < t.seq && p.span().overlaps(t.lo, t.hi) &&
				!slices.Contains(w.checked[p.id], t.seq) && !slices.Contains(l.checked[p.id], t.seq) {
				return true
			}
		}
	}
	return false
}
