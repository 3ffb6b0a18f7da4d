package timelog

import (
	"math"
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
	maxSeq uint64 // of recs and tombs
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

func newRun(id uint64, recs []rec, tombs []tomb) *run {
	r := &run{id: id, recs: recs, tombs: tombs, minSeq: math.MaxUint64}
	for _, x := range recs {
		r.minSeq = min(r.minSeq, x.seq)
		r.maxSeq = max(r.maxSeq, x.seq)
	}
	for _, t := range tombs {
		r.maxSeq = max(r.maxSeq, t.seq)
	}
	return r
}

// memtable is the active write buffer. Records are kept in append order;
// sorted counts the prefix known to be sorted, so that in-order appends
// need no sort at all. It is guarded by Log.mu.
type memtable struct {
	recs   []rec
	tombs  []tomb
	sorted int
	view   *run // cached sorted view of the current contents
	// values log: see run.vals; valBytes counts toward size.
	valBase  uint64
	vals     [][]byte
	valBytes int
}

func newMemtable(capacity int) *memtable {
	return &memtable{recs: make([]rec, 0, capacity)}
}

func (m *memtable) add(r rec) {
	if m.sorted == len(m.recs) && (m.sorted == 0 || m.recs[m.sorted-1].ts <= r.ts) {
		m.sorted++
	}
	m.recs = append(m.recs, r)
	m.view = nil
}

// addBatch appends batch with sequence numbers seq+1, seq+2, ...: add for
// each record, in one pass.
func (m *memtable) addBatch(batch []Record, seq uint64) {
	n := len(m.recs)
	m.recs = slices.Grow(m.recs, len(batch))[:n+len(batch)]
	out := m.recs[n:]
	for i, r := range batch {
		out[i] = rec{ts: r.Ts, seq: seq + uint64(i) + 1, h: r.Handle}
	}
	if m.sorted == n { // the whole buffer was sorted: extend the prefix
		for m.sorted < len(m.recs) && (m.sorted == 0 || m.recs[m.sorted-1].ts <= m.recs[m.sorted].ts) {
			m.sorted++
		}
	}
	m.view = nil
}

func (m *memtable) addTomb(t tomb) {
	m.tombs = append(m.tombs, t)
	m.view = nil
}

func (m *memtable) size() int { return len(m.recs) + len(m.tombs) + m.valBytes/recSize }

// snapshot returns an immutable sorted view of the contents. Appends never
// write below len, so a view of an already sorted prefix shares the
// buffer; otherwise the view is a sorted copy, kept until the next write.
func (m *memtable) snapshot(id uint64) *run {
	if m.view != nil {
		return m.view
	}
	n, k := len(m.recs), len(m.tombs)
	recs := m.recs[:n:n]
	if m.sorted < n {
		recs = sortedCopy(recs)
	}
	m.view = newRun(id, recs, m.tombs[:k:k])
	if len(m.vals) > 0 {
		m.view.valBase, m.view.vals, m.view.valBytes = m.valBase, m.vals[:len(m.vals):len(m.vals)], m.valBytes
	}
	return m.view
}

// sortedCopy returns recs sorted by (ts, seq), in a new slice. Appends are
// mostly in order: the records that keep up with the running maximum are
// already sorted (their sequence numbers grow), so only the others are
// sorted, then the two runs are merged: O(n + k log k) for k late records,
// and one copy of recs plus the late ones in memory.
func sortedCopy(recs []rec) []rec {
	// A record is in order when it keeps up with the running maximum of
	// the timestamps before it (the first one always does).
	var late []rec
	hi := int64(math.MinInt64)
	for _, r := range recs {
		if r.ts >= hi {
			hi = r.ts
		} else {
			late = append(late, r)
		}
	}
	if len(late) > len(recs)/4 {
		out := slices.Clone(recs)
		slices.SortFunc(out, cmpRec)
		return out
	}
	slices.SortFunc(late, cmpRec)
	out := make([]rec, len(recs))
	o, j := 0, 0
	hi = math.MinInt64
	for _, r := range recs {
		if r.ts < hi {
			continue
		}
		hi = r.ts
		for j < len(late) && (late[j].ts < r.ts || (late[j].ts == r.ts && late[j].seq < r.seq)) {
			out[o] = late[j]
			o++
			j++
		}
		out[o] = r
		o++
	}
	copy(out[o:], late[j:])
	return out
}
