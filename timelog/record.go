package timelog

import (
	"cmp"
	"math"
	"slices"
)

// Record is one entry of a log: a timestamp (any int64, both ends
// included) and an opaque 64-bit handle.
type Record struct {
	Ts     int64
	Handle uint64
}

// rec is a record with its sequence number, the order key of equal
// timestamps and the test of every delete.
type rec struct {
	ts  int64
	seq uint64
	h   uint64
}

func cmpRec(a, b rec) int {
	if c := cmp.Compare(a.ts, b.ts); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// tomb is a range delete over [lo, hi] (both inclusive): it hides every
// record in the range with a lower sequence number.
type tomb struct {
	lo, hi int64
	seq    uint64
}

func (t tomb) hides(r rec) bool { return t.seq > r.seq && r.ts >= t.lo && r.ts <= t.hi }

// hidden reports whether any of ts hides r.
func hidden(ts []tomb, r rec) bool {
	for _, t := range ts {
		if t.hides(r) {
			return true
		}
	}
	return false
}

// span is an inclusive range of timestamps; empty when lo > hi.
type span struct{ lo, hi int64 }

func (s span) empty() bool { return s.lo > s.hi }

func (s span) overlaps(lo, hi int64) bool { return s.lo <= hi && lo <= s.hi }

var fullSpan = span{math.MinInt64, math.MaxInt64}

// halfOpen converts [t1, t2) to an inclusive span; t1 == t2 is empty.
func halfOpen(t1, t2 int64) (span, error) {
	if t1 > t2 {
		return span{}, errInvalidRange(t1, t2)
	}
	if t1 == t2 {
		return span{1, 0}, nil
	}
	return span{t1, t2 - 1}, nil
}

func sortRecs(recs []rec) {
	for i := 1; i < len(recs); i++ {
		if recs[i-1].ts > recs[i].ts {
			slicesSort(recs)
			return
		}
	}
}

func slicesSort(recs []rec) { slices.SortFunc(recs, cmpRec) }
