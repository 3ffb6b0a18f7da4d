package timelog

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/snkv-go/snkv/kvstore"
)

// kind is the catalog kind of a log's hidden tables.
const kind = "timelog"

// Table name suffixes: a log "x" keeps its pages in the hidden table
// "__snkv_timelog:x/pages", its tombstones in ".../tombs" and its counters
// and page summaries in ".../meta".
const (
	suffixPages = "/pages"
	suffixTombs = "/tombs"
	suffixMeta  = "/meta"
	// suffixValues is the table of a values log: handle -> value.
	suffixValues = "/values"
)

// tables are the handles of a log's hidden tables: pages, tombs and meta,
// and values in a values log (docs/format.md).
type tables struct {
	pages, tombs, meta *kvstore.ColumnFamily
	values             *kvstore.ColumnFamily // nil unless a values log
}

func (t tables) in(tx *kvstore.Tx) tables {
	b := tables{pages: tx.CF(t.pages), tombs: tx.CF(t.tombs), meta: tx.CF(t.meta)}
	if t.values != nil {
		b.values = tx.CF(t.values)
	}
	return b
}

// group is a maximal run of mutually overlapping pages (transitively): the
// pages [start, end) of the manifest, covering span sp. Groups are disjoint
// and ordered.
type group struct {
	start, end int
	sp         span
}

// manifest is the durable state of a log as one transaction saw it. It is
// immutable; a change makes a new one.
type manifest struct {
	gen, seq, epoch, nextPage uint64
	pages                     []pageInfo // sorted by (minTs, id)
	groups                    []group
	tombs                     []tomb // sorted by seq
	records                   int64  // sum of page record counts
}

// index recomputes groups and totals after pages changed.
func (m *manifest) index() {
	slices.SortFunc(m.pages, func(a, b pageInfo) int {
		return cmp.Or(cmp.Compare(a.minTs, b.minTs), cmp.Compare(a.id, b.id))
	})
	m.groups = m.groups[:0]
	m.records = 0
	for i, p := range m.pages {
		m.records += int64(p.n)
		if n := len(m.groups); n > 0 && p.minTs <= m.groups[n-1].sp.hi {
			g := &m.groups[n-1]
			g.end = i + 1
			g.sp.hi = max(g.sp.hi, p.maxTs)
			continue
		}
		m.groups = append(m.groups, group{start: i, end: i + 1, sp: p.span()})
	}
}

// clone returns a copy that may be changed.
func (m *manifest) clone() *manifest {
	c := *m
	c.pages = slices.Clone(m.pages)
	c.tombs = slices.Clone(m.tombs)
	c.groups = nil
	return &c
}

// groupsIn returns the index range [g0, g1) of the groups overlapping q.
func (m *manifest) groupsIn(q span) (int, int) {
	g0 := sort.Search(len(m.groups), func(i int) bool { return m.groups[i].sp.hi >= q.lo })
	g1 := sort.Search(len(m.groups), func(i int) bool { return m.groups[i].sp.lo > q.hi })
	return g0, max(g0, g1)
}

func getU64(cf *kvstore.ColumnFamily, key string) (uint64, error) {
	v, err := cf.Get([]byte(key))
	if errors.Is(err, kvstore.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: meta %q of %d bytes", ErrCorrupt, key, len(v))
	}
	return be.Uint64(v), nil
}

// loadManifest reads the whole durable state through t (bound to a
// transaction).
func loadManifest(t tables) (*manifest, error) {
	m := &manifest{}
	for e, err := range t.meta.All() {
		if err != nil {
			return nil, err
		}
		k := string(e.Key)
		switch {
		case len(k) > 0 && k[0] == metaPagePrefix[0] && len(k) == len(metaPagePrefix)+16:
			p, err := decodeSummary(e.Key, e.Value)
			if err != nil {
				return nil, err
			}
			m.pages = append(m.pages, p)
		case k == metaSeq || k == metaGen || k == metaEpoch || k == metaNextPage:
			if len(e.Value) != 8 {
				return nil, fmt.Errorf("%w: meta %q of %d bytes", ErrCorrupt, k, len(e.Value))
			}
			v := be.Uint64(e.Value)
			switch k {
			case metaSeq:
				m.seq = v
			case metaGen:
				m.gen = v
			case metaEpoch:
				m.epoch = v
			case metaNextPage:
				m.nextPage = v
			}
		}
	}
	for e, err := range t.tombs.All() {
		if err != nil {
			return nil, err
		}
		tb, err := decodeTomb(e.Key, e.Value)
		if err != nil {
			return nil, err
		}
		m.tombs = append(m.tombs, tb)
	}
	m.index()
	return m, nil
}

// writer collects the changes of one transaction to the durable state and
// applies them to a copy of the manifest.
type writer struct {
	t   tables // bound to the write transaction
	old *manifest
	m   *manifest
	// checked are the deletes each new page was filtered against: none
	// of them hides a record of it. Kept by the Log after the commit.
	checked map[uint64][]uint64
	against []tomb // the deletes new pages are filtered against
	removed []uint64
	enc     pageEncoder
}

func newWriter(t tables, old *manifest, against ...[]tomb) *writer {
	w := &writer{t: t, old: old, m: old.clone(), checked: map[uint64][]uint64{}}
	for _, ts := range against {
		w.against = append(w.against, ts...)
	}
	return w
}

// addPage writes the longest prefix of recs (sorted, non-empty) that fits
// c's page limits as one new page, and returns the records it took.
func (w *writer) addPage(recs []rec, c *config) (int, error) {
	b, p, n := w.enc.page(recs, c)
	return n, w.putPage(b, p)
}

// putPage stores page b described by p under the next page id.
func (w *writer) putPage(b []byte, p pageInfo) error {
	p.id = w.m.nextPage
	w.m.nextPage++
	if err := w.t.pages.Put(p.key(), b); err != nil {
		return err
	}
	if err := w.t.meta.Put(p.summaryKey(), p.summary()); err != nil {
		return err
	}
	w.m.pages = append(w.m.pages, p)
	for _, t := range w.against {
		if t.seq > p.minSeq && p.span().overlaps(t.lo, t.hi) {
			w.checked[p.id] = append(w.checked[p.id], t.seq)
		}
	}
	return nil
}

// pipelineMin is the number of records from which addPages encodes pages
// in a goroutine while it stores the ones before (about 8 dense pages of
// a dense series).
const pipelineMin = 40_000

// encoded is a page encoded ahead of its store.
type encoded struct {
	b []byte
	p pageInfo
}

// addPages writes sorted recs as pages within c's limits. Many records are
// encoded by a goroutine a few pages ahead of the stores, so that the
// encoding of a large flush overlaps SQLite's work on another core.
func (w *writer) addPages(recs []rec, c *config) error {
	if len(recs) < pipelineMin {
		for len(recs) > 0 {
			n, err := w.addPage(recs, c)
			if err != nil {
				return err
			}
			recs = recs[n:]
		}
		return nil
	}
	return encodeAhead(recs, c, func(e encoded) error { return w.putPage(e.b, e.p) })
}

// encodeAhead encodes recs as pages within c's limits in a goroutine, a
// few pages ahead of put, which it calls with each page in order. An error
// from put stops the encoding and is returned.
func encodeAhead(recs []rec, c *config, put func(encoded) error) error {
	pages := make(chan encoded, 4)
	stop := make(chan struct{})
	go func() {
		defer close(pages)
		var enc pageEncoder
		for len(recs) > 0 {
			b, p, n := enc.page(recs, c)
			select {
			case pages <- encoded{b, p}:
			case <-stop:
				return
			}
			recs = recs[n:]
		}
	}()
	defer func() {
		close(stop)
		for range pages { // let the encoder end
		}
	}()
	for e := range pages {
		if err := put(e); err != nil {
			return err
		}
	}
	return nil
}

// removePages deletes the pages whose ids are in ids.
func (w *writer) removePages(ps []pageInfo) error {
	gone := make(map[uint64]bool, len(ps))
	for _, p := range ps {
		if err := w.t.pages.Delete(p.key()); err != nil {
			return err
		}
		if err := w.t.meta.Delete(p.summaryKey()); err != nil {
			return err
		}
		gone[p.id] = true
		w.removed = append(w.removed, p.id)
	}
	w.m.pages = slices.DeleteFunc(w.m.pages, func(p pageInfo) bool { return gone[p.id] })
	return nil
}

func (w *writer) addTomb(t tomb) error {
	if err := w.t.tombs.Put(tombKey(t.seq), tombValue(t)); err != nil {
		return err
	}
	w.m.tombs = append(w.m.tombs, t)
	slices.SortFunc(w.m.tombs, func(a, b tomb) int { return cmp.Compare(a.seq, b.seq) })
	return nil
}

func (w *writer) removeTomb(t tomb) error {
	if err := w.t.tombs.Delete(tombKey(t.seq)); err != nil {
		return err
	}
	w.m.tombs = slices.DeleteFunc(w.m.tombs, func(x tomb) bool { return x.seq == t.seq })
	return nil
}

// finish writes the counters: seq raised to at least seq, gen bumped, epoch
// bumped when the transaction drops records. It returns the new manifest.
func (w *writer) finish(seq uint64, drops bool) (*manifest, error) {
	w.m.seq = max(w.m.seq, seq)
	w.m.gen++
	if drops {
		w.m.epoch++
	}
	for _, kv := range []struct {
		k string
		v uint64
	}{{metaSeq, w.m.seq}, {metaGen, w.m.gen}, {metaEpoch, w.m.epoch}, {metaNextPage, w.m.nextPage}} {
		if err := w.t.meta.Put([]byte(kv.k), u64(kv.v)); err != nil {
			return nil, err
		}
	}
	w.m.index()
	return w.m, nil
}

// testFailCommit, set only by tests, makes the log's own commits fail.
var testFailCommit atomic.Pointer[func() error]

// failCommit rolls tx back with testFailCommit's error, if it returns one.
func failCommit(tx *kvstore.Tx) error {
	f := testFailCommit.Load()
	if f == nil {
		return nil
	}
	if err := (*f)(); err != nil {
		_ = tx.Rollback()
		return err
	}
	return nil
}
