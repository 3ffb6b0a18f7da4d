package timelog

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/snkv-go/snkv/kvstore"
)

// Reads walk clusters: maximal sets of sources (stored pages, buffered
// runs) whose time spans, clipped to the query, overlap. Clusters are
// disjoint in time, so a read loads one cluster at a time, merges it by
// (ts, seq), drops what a newer delete hides, and moves on. After
// compaction most clusters are one page, which needs no merge at all.

type cluster struct {
	g0, g1 int    // manifest groups [g0, g1)
	runs   []*run // buffered runs
	sp     span   // clipped to the query
}

// clusterIter yields the clusters of query q in order (or reverse order).
type clusterIter struct {
	s      *Snapshot
	q      span
	rev    bool
	g0, g1 int // groups still to visit
	runs   []*run
	used   []bool
}

func (s *Snapshot) clusters(q span, rev bool) *clusterIter {
	it := &clusterIter{s: s, q: q, rev: rev}
	if q.empty() {
		return it
	}
	it.g0, it.g1 = s.man.groupsIn(q)
	for _, r := range s.runs {
		if r.span().overlaps(q.lo, q.hi) {
			it.runs = append(it.runs, r)
		}
	}
	it.used = make([]bool, len(it.runs))
	return it
}

func clip(a, q span) span { return span{max(a.lo, q.lo), min(a.hi, q.hi)} }

func (it *clusterIter) groupSpan(g int) span { return clip(it.s.man.groups[g].sp, it.q) }

func (it *clusterIter) next(c *cluster) bool {
	*c = cluster{runs: c.runs[:0]}
	hasGroup := it.g0 < it.g1
	var gsp span
	if hasGroup {
		if it.rev {
			gsp = it.groupSpan(it.g1 - 1)
		} else {
			gsp = it.groupSpan(it.g0)
		}
	}
	// The unused run that comes first in the walking direction.
	best := -1
	var bsp span
	for i, r := range it.runs {
		if it.used[i] {
			continue
		}
		sp := clip(r.span(), it.q)
		if best < 0 || (!it.rev && sp.lo < bsp.lo) || (it.rev && sp.hi > bsp.hi) {
			best, bsp = i, sp
		}
	}
	if it.rev {
		c.g0, c.g1 = it.g1, it.g1
	} else {
		c.g0, c.g1 = it.g0, it.g0
	}
	switch {
	case !hasGroup && best < 0:
		return false
	case hasGroup && (best < 0 || (!it.rev && gsp.lo <= bsp.lo) || (it.rev && gsp.hi >= bsp.hi)):
		if it.rev {
			c.g0--
		} else {
			c.g1++
		}
		c.sp = gsp
	default:
		it.used[best] = true
		c.runs = append(c.runs, it.runs[best])
		c.sp = bsp
	}
	extend := func(sp span) { c.sp = span{min(c.sp.lo, sp.lo), max(c.sp.hi, sp.hi)} }
	for grew := true; grew; {
		grew = false
		if !it.rev && c.g1 < it.g1 {
			if sp := it.groupSpan(c.g1); sp.lo <= c.sp.hi {
				extend(sp)
				c.g1++
				grew = true
			}
		}
		if it.rev && c.g0 > it.g0 {
			if sp := it.groupSpan(c.g0 - 1); sp.hi >= c.sp.lo {
				extend(sp)
				c.g0--
				grew = true
			}
		}
		for i, r := range it.runs {
			if it.used[i] {
				continue
			}
			if sp := clip(r.span(), it.q); sp.overlaps(c.sp.lo, c.sp.hi) {
				it.used[i] = true
				c.runs = append(c.runs, r)
				extend(sp)
				grew = true
			}
		}
	}
	if it.rev {
		it.g1 = c.g0
	} else {
		it.g0 = c.g1
	}
	return true
}

// pagesOf calls f for every page of c's groups that overlaps q.
func (it *clusterIter) pagesOf(c *cluster, f func(p pageInfo) error) error {
	m := it.s.man
	for g := c.g0; g < c.g1; g++ {
		for _, p := range m.pages[m.groups[g].start:m.groups[g].end] {
			if p.span().overlaps(it.q.lo, it.q.hi) {
				if err := f(p); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// applicable returns the deletes that may hide a record of c.
func (s *Snapshot) applicable(dst []tomb, sp span, minSeq uint64) []tomb {
	dst = dst[:0]
	for _, t := range s.tombs {
		if t.seq > minSeq && t.hi >= sp.lo && t.lo <= sp.hi {
			dst = append(dst, t)
		}
	}
	return dst
}

// pageCursor reads pages through one cursor over the pages table: the
// pages a read needs come in key order (reverse order for a reverse read),
// so after the first seek each is usually the next row. A point look-up per
// page would cost a B-tree descent, and SQLite reads the whole payload of
// every large row it compares on the way down.
type pageCursor struct {
	s   *Snapshot
	rev bool
	c   *kvstore.Cursor
	buf *[]byte // the copy of the current page, from pageBufs
}

// pageBufs holds the page buffers of closed page cursors: a read copies
// the page it decodes into one (a fresh 16 KiB allocation per point read
// cost more than the rest of its work).
var pageBufs = sync.Pool{New: func() any { return new([]byte) }}

// get returns page p's bytes, a copy valid until the next get or close.
// The cursor borrows the row from SQLite; the copy is made under the
// snapshot's fetchMu, which Close takes too, so the row cannot go away
// under it.
func (pc *pageCursor) get(p pageInfo) ([]byte, error) {
	if err := pc.s.check(); err != nil {
		return nil, err
	}
	k := p.key()
	pc.s.fetchMu.Lock()
	defer pc.s.fetchMu.Unlock()
	if pc.c == nil {
		c, err := pc.s.t.pages.Cursor(kvstore.IterOptions{Reverse: pc.rev, Borrow: true})
		if err != nil {
			return nil, fmt.Errorf("timelog: read page %d: %w", p.id, err)
		}
		pc.c = c
	}
	if !(pc.c.Valid() && pc.c.Next() && bytes.Equal(pc.c.Key(), k)) &&
		!(pc.atStart(p) && pc.c.First() && bytes.Equal(pc.c.Key(), k)) {
		if !pc.c.Seek(k) || !bytes.Equal(pc.c.Key(), k) {
			if err := pc.c.Err(); err != nil {
				return nil, fmt.Errorf("timelog: read page %d: %w", p.id, err)
			}
			return nil, fmt.Errorf("timelog: read page %d: %w: page missing", p.id, ErrCorrupt)
		}
	}
	if pc.buf == nil {
		pc.buf = pageBufs.Get().(*[]byte)
	}
	*pc.buf = append((*pc.buf)[:0], pc.c.Value()...)
	return *pc.buf, nil
}

// atStart reports whether p is the first page of the snapshot in the
// cursor's direction (the last one of a reverse cursor).
func (pc *pageCursor) atStart(p pageInfo) bool {
	ps := pc.s.man.pages
	if len(ps) == 0 {
		return false
	}
	e := ps[0]
	if pc.rev {
		e = ps[len(ps)-1]
	}
	return e.id == p.id && e.minTs == p.minTs
}

func (pc *pageCursor) close() {
	if pc.c != nil {
		pc.s.fetchMu.Lock()
		_ = pc.c.Close()
		pc.s.fetchMu.Unlock()
		pc.c = nil
	}
	if pc.buf != nil {
		pageBufs.Put(pc.buf)
		pc.buf = nil
	}
}

// clipRecs returns the part of sorted recs inside q.
func clipRecs(recs []rec, q span) []rec {
	i := sort.Search(len(recs), func(i int) bool { return recs[i].ts >= q.lo })
	j := i + sort.Search(len(recs)-i, func(k int) bool { return recs[i+k].ts > q.hi })
	return recs[i:j]
}

// reader materializes one cluster at a time.
type reader struct {
	it    *clusterIter
	pc    pageCursor
	c     cluster
	buf   []rec
	tombs []tomb
	pages []pageInfo
	cur   []rec // the current cluster, merged, filtered, clipped
	// first: only the first visible record in the walking direction is
	// wanted (Min, Max, Next, Prev): in a cluster no delete touches, each
	// source gives only its first (last) record of the query, and a dense
	// page decodes only the block that holds it.
	first bool
}

func (s *Snapshot) newReader(q span, rev bool) *reader {
	return &reader{it: s.clusters(q, rev), pc: pageCursor{s: s, rev: rev}}
}

// close releases the reader's cursor; the reader may be used again.
func (r *reader) close() { r.pc.close() }

// nextCluster loads the next cluster into r.cur; false at the end.
func (r *reader) nextCluster() (bool, error) {
	for r.it.next(&r.c) {
		if err := r.load(); err != nil {
			return false, err
		}
		if len(r.cur) > 0 {
			return true, nil
		}
	}
	return false, nil
}

func (r *reader) load() error {
	q := r.it.q
	s := r.it.s
	buf := r.buf[:0]
	minSeq := uint64(1<<64 - 1)
	r.pages = r.pages[:0]
	_ = r.it.pagesOf(&r.c, func(p pageInfo) error {
		r.pages = append(r.pages, p)
		minSeq = min(minSeq, p.minSeq)
		return nil
	})
	for _, run := range r.c.runs {
		minSeq = min(minSeq, run.minSeq)
	}
	r.tombs = s.applicable(r.tombs, r.c.sp, minSeq)
	sources := len(r.pages) + len(r.c.runs)
	mode := denseAll
	if r.first && len(r.tombs) == 0 {
		mode = denseFirst
		if r.it.rev {
			mode = denseLast
		}
	}
	for _, p := range r.pages {
		b, err := r.pc.get(p)
		if err != nil {
			return err
		}
		if buf, err = decodePageSpan(buf, b, p.n, s.l.name, p.key(), q, mode); err != nil {
			return err
		}
	}
	for _, run := range r.c.runs {
		in := clipRecs(run.recs, q)
		switch {
		case len(in) == 0 || mode == denseAll:
		case mode == denseFirst:
			in = in[:1]
		default:
			in = in[len(in)-1:]
		}
		buf = append(buf, in...)
	}
	if sources > 1 {
		slices.SortFunc(buf, cmpRec)
	}
	if len(r.tombs) > 0 {
		buf = slices.DeleteFunc(buf, func(x rec) bool { return hidden(r.tombs, x) })
	}
	r.buf, r.cur = buf, buf
	return nil
}

// countCluster counts the visible records of the current cluster without
// loading pages when no delete applies and every page lies inside q.
func (r *reader) countCluster() (int64, error) {
	s, q := r.it.s, r.it.q
	var n int64
	minSeq := uint64(1<<64 - 1)
	whole := true
	_ = r.it.pagesOf(&r.c, func(p pageInfo) error {
		n += int64(p.n)
		minSeq = min(minSeq, p.minSeq)
		whole = whole && p.minTs >= q.lo && p.maxTs <= q.hi
		return nil
	})
	for _, run := range r.c.runs {
		n += int64(len(clipRecs(run.recs, q)))
		minSeq = min(minSeq, run.minSeq)
	}
	if whole && len(s.applicable(r.tombs, r.c.sp, minSeq)) == 0 {
		return n, nil
	}
	if err := r.load(); err != nil {
		return 0, err
	}
	return int64(len(r.cur)), nil
}
