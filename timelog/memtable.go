package timelog

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
)

// run is an immutable sorted sequence of buffered records with the deletes
// buffered beside them: a sealed buffer, or a snapshot's view of the active
// one.
type run struct {
	id     uint64 // sealing order
	recs   []rec  // sorted by (ts, seq)
	tombs  []tomb
	minSeq uint64 // of recs; MaxUint64 if none
	// buf is the array under recs, with its whole capacity, when no one
	// else refers to it: once the run is flushed it may become the next
	// write buffer. nil otherwise; a snapshot that takes the run clears it
	// (buf is guarded by Log.mu).
	buf []rec
	// values log: vals[i] is the value of handle valBase+i, nil for a
	// handle not in this buffer (values are never nil: copies).
	valBase  uint64
	vals     [][]byte
	valBytes int // the sum of the lengths of vals
}

func (r *run) span() span {
	if len(r.recs) == 0 {
		return span{1, 0}
	}
	return span{r.recs[0].ts, r.recs[len(r.recs)-1].ts}
}

// memtable is the active write buffer. A record that keeps up with the
// largest timestamp before it goes to recs, which stays sorted by (ts, seq)
// as it grows (sequence numbers grow with every write); the others, the
// late ones, go to late in append order, to be sorted (a few, usually)
// and merged in when the buffer is read or sealed. In-order appends thus
// need no sort at all. It is guarded by Log.mu.
type memtable struct {
	arrays
	tombs  []tomb
	minSeq uint64 // of the records: the first one's; MaxUint64 if none
	view   *run   // cached sorted view of the current contents
	// shared: a view shares the array under recs (it had no late record),
	// so recs must not be rewritten in place: a snapshot may hold it.
	shared bool
	// values log: see run.vals; valBytes counts toward size.
	valBase  uint64
	vals     [][]byte
	valBytes int
}

// arrays are the record arrays a buffer writes into, handed on from a
// sealed buffer to the next one when no one else refers to them.
type arrays struct {
	recs, late []rec
	tmp        []rec // the radix sort's scratch
}

// newMemtable returns an empty buffer that writes into a (a new recs of
// capacity records if a has none).
func newMemtable(capacity int, a arrays) *memtable {
	if a.recs == nil {
		a.recs = make([]rec, 0, capacity)
	}
	a.recs, a.late = a.recs[:0], a.late[:0]
	return &memtable{arrays: a, minSeq: math.MaxUint64}
}

func (m *memtable) add(r rec) {
	if n := len(m.recs); n == 0 || r.ts >= m.recs[n-1].ts {
		m.recs = append(m.recs, r)
	} else {
		m.late = append(m.late, r)
	}
	m.minSeq = min(m.minSeq, r.seq)
	m.view = nil
}

// addBatch appends batch with sequence numbers seq+1, seq+2, ...: add for
// each record, in one pass. recs must have room for the whole batch.
func (m *memtable) addBatch(batch []Record, seq uint64) {
	nr, nl := len(m.recs), len(m.late)
	recs := m.recs[:nr+len(batch)]
	late := slices.Grow(m.late, len(batch))[:nl+len(batch)]
	hi := int64(math.MinInt64)
	if nr > 0 {
		hi = recs[nr-1].ts
	}
	for _, r := range batch {
		seq++
		if r.Ts >= hi {
			recs[nr] = rec{ts: r.Ts, seq: seq, h: r.Handle}
			hi = r.Ts
			nr++
		} else {
			late[nl] = rec{ts: r.Ts, seq: seq, h: r.Handle}
			nl++
		}
	}
	m.recs, m.late = recs[:nr], late[:nl]
	if len(batch) > 0 {
		m.minSeq = min(m.minSeq, seq-uint64(len(batch))+1)
	}
	m.view = nil
}

func (m *memtable) addTomb(t tomb) {
	m.tombs = append(m.tombs, t)
	m.view = nil
}

// records returns the number of buffered records.
func (m *memtable) records() int { return len(m.recs) + len(m.late) }

func (m *memtable) size() int { return m.records() + len(m.tombs) + m.valBytes/recSize }

// snapshot returns an immutable sorted view of the contents. Appends never
// write below len, so without late records the view shares the buffer;
// otherwise it is a sorted merge in a new slice, kept until the next write.
func (m *memtable) snapshot(id uint64) *run {
	if m.view != nil {
		return m.view
	}
	n := len(m.recs)
	recs := m.recs[:n:n]
	if len(m.late) > 0 {
		late, _ := sortLate(slices.Clone(m.late), nil)
		recs = mergeInto(make([]rec, n+len(late)), m.recs, late)
	} else {
		m.shared = true
	}
	m.view = m.newRun(id, recs)
	return m.view
}

// seal returns the contents as a run for the sealed queue, and the arrays
// the next buffer may reuse (recs nil if it may not). With late records and
// no view sharing recs, they are sorted and merged into recs in place, from
// its end: no copy of the buffer is made.
func (m *memtable) seal(id uint64) (*run, arrays) {
	free := arrays{late: m.late, tmp: m.tmp}
	if m.view != nil {
		// A snapshot took the contents since the last write; the view is
		// shared with it. recs is free unless the view is recs itself.
		if !m.shared {
			free.recs = m.recs
		}
		return m.view, free
	}
	n, k := len(m.recs), len(m.late)
	out, owned := m.recs[:n:n], !m.shared
	if k > 0 {
		var late []rec
		late, free.tmp = sortLate(m.late, m.tmp)
		if m.shared || cap(m.recs) < n+k {
			out, owned = mergeInto(make([]rec, n+k), m.recs, late), true
		} else {
			out = mergeInto(m.recs[:n+k], m.recs, late)
		}
	}
	r := m.newRun(id, out[:n+k:n+k])
	if owned {
		r.buf = out[:n+k]
	}
	return r, free
}

func (m *memtable) newRun(id uint64, recs []rec) *run {
	r := &run{id: id, recs: recs, tombs: m.tombs[:len(m.tombs):len(m.tombs)], minSeq: m.minSeq}
	if len(m.vals) > 0 {
		r.valBase, r.vals, r.valBytes = m.valBase, m.vals[:len(m.vals):len(m.vals)], m.valBytes
	}
	return r
}

// comesAfter reports whether r comes after x in (ts, seq) order.
func comesAfter(r, x *rec) bool { return r.ts > x.ts || (r.ts == x.ts && r.seq > x.seq) }

// mergeInto merges sorted a and b into dst (len(a)+len(b) records) and
// returns it. dst may be a itself extended over its spare capacity: the
// merge runs from the end, so it never overwrites a record of a it has
// not moved yet. b is the short one: the records of a between two of b
// are found by a search back from the last place and move as one block.
func mergeInto(dst, a, b []rec) []rec {
	i, o := len(a), len(dst) // a[:i] and b[:j+1] are left; dst[o:] is done
	for j := len(b) - 1; j >= 0; j-- {
		x := b[j]
		k := firstAfter(a, i, &x)
		o -= i - k
		copy(dst[o:], a[k:i])
		i, o = k, o-1
		dst[o] = x
	}
	if i > 0 && &dst[0] != &a[0] {
		copy(dst, a[:i])
	}
	return dst
}

// firstAfter returns the first index k <= i such that every record of
// a[k:i] comes after x, for sorted a: a search back from i in steps that
// double, then a binary search in the last step.
func firstAfter(a []rec, i int, x *rec) int {
	step := 1
	for step <= i && comesAfter(&a[i-step], x) {
		step *= 2
	}
	lo := max(0, i-step+1) // a[lo-1] does not come after x, or lo is 0
	hi := i - step/2       // a[hi:i] comes after x
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if comesAfter(&a[m], x) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// sortLate sorts recs, in append order (so by sequence number), by (ts,
// seq): a stable sort by timestamp. Many records are sorted by radix, 11
// bits of the timestamp a pass over the bits where they differ, through
// tmp (grown if short, and returned); a few, or timestamps spread over more
// than 55 bits, by comparison.
func sortLate(recs, tmp []rec) ([]rec, []rec) {
	if len(recs) < 256 {
		slices.SortStableFunc(recs, func(a, b rec) int { return cmp.Compare(a.ts, b.ts) })
		return recs, tmp
	}
	lo, hi := recs[0].ts, recs[0].ts
	for _, r := range recs {
		lo, hi = min(lo, r.ts), max(hi, r.ts)
	}
	width := bits.Len64(uint64(hi - lo))
	const digit = 11
	passes := (width + digit - 1) / digit
	if passes > 5 {
		slices.SortFunc(recs, cmpRec)
		return recs, tmp
	}
	if cap(tmp) < len(recs) {
		tmp = make([]rec, len(recs), len(recs)+len(recs)/4)
	}
	src, dst := recs, tmp[:len(recs)]
	var count [1 << digit]int
	for p := range passes {
		shift := uint(p * digit)
		clear(count[:])
		for _, r := range src {
			count[(uint64(r.ts-lo)>>shift)&(1<<digit-1)]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, r := range src {
			d := (uint64(r.ts-lo) >> shift) & (1<<digit - 1)
			dst[count[d]] = r
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &recs[0] {
		copy(recs, src)
	}
	return recs, tmp
}
