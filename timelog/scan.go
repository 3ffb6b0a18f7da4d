package timelog

import (
	"iter"
	"math"
)

// scan yields the visible records of q in order (reverse: descending).
func (s *Snapshot) scan(q span, rev bool) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		if err := s.check(); err != nil {
			yield(Record{}, err)
			return
		}
		rd := s.newReader(q, rev)
		defer rd.close()
		for {
			ok, err := rd.nextCluster()
			if err != nil {
				yield(Record{}, fromStore(err))
				return
			}
			if !ok {
				return
			}
			if rev {
				for i := len(rd.cur) - 1; i >= 0; i-- {
					if !yield(Record{Ts: rd.cur[i].ts, Handle: rd.cur[i].h}, nil) {
						return
					}
				}
				continue
			}
			for _, x := range rd.cur {
				if !yield(Record{Ts: x.ts, Handle: x.h}, nil) {
					return
				}
			}
		}
	}
}

func rangeErr(err error) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) { yield(Record{}, err) }
}

func (s *Snapshot) half(t1, t2 int64, rev bool) iter.Seq2[Record, error] {
	q, err := halfOpen(t1, t2)
	if err != nil {
		return rangeErr(err)
	}
	return s.scan(q, rev)
}

func untilSpan(t int64) span {
	if t == math.MinInt64 {
		return span{1, 0}
	}
	return span{math.MinInt64, t - 1}
}

// Range yields the records with t1 <= ts < t2 in (ts, append) order. Each
// step yields a record and a nil error; a failure (ErrInvalidRange for
// t1 > t2, a read error, ErrClosed) is yielded once, as the last step.
func (s *Snapshot) Range(t1, t2 int64) iter.Seq2[Record, error] { return s.half(t1, t2, false) }

// RangeReverse is Range in descending order.
func (s *Snapshot) RangeReverse(t1, t2 int64) iter.Seq2[Record, error] { return s.half(t1, t2, true) }

// Since yields the records with ts >= t (up to math.MaxInt64 included).
func (s *Snapshot) Since(t int64) iter.Seq2[Record, error] {
	return s.scan(span{t, math.MaxInt64}, false)
}

// SinceReverse is Since in descending order.
func (s *Snapshot) SinceReverse(t int64) iter.Seq2[Record, error] {
	return s.scan(span{t, math.MaxInt64}, true)
}

// Until yields the records with ts < t.
func (s *Snapshot) Until(t int64) iter.Seq2[Record, error] { return s.scan(untilSpan(t), false) }

// UntilReverse is Until in descending order.
func (s *Snapshot) UntilReverse(t int64) iter.Seq2[Record, error] { return s.scan(untilSpan(t), true) }

// Equal yields the records with ts == t, in append order.
func (s *Snapshot) Equal(t int64) iter.Seq2[Record, error] { return s.scan(span{t, t}, false) }

// EqualReverse yields the records with ts == t, newest first.
func (s *Snapshot) EqualReverse(t int64) iter.Seq2[Record, error] { return s.scan(span{t, t}, true) }

// All yields every record.
func (s *Snapshot) All() iter.Seq2[Record, error] { return s.scan(fullSpan, false) }

// AllReverse yields every record in descending order.
func (s *Snapshot) AllReverse() iter.Seq2[Record, error] { return s.scan(fullSpan, true) }

// Count returns the number of visible records. Pages no delete touches are
// counted from their summaries without being read.
func (s *Snapshot) Count() (int64, error) { return s.count(fullSpan) }

// CountRange returns the number of visible records with t1 <= ts < t2;
// ErrInvalidRange for t1 > t2.
func (s *Snapshot) CountRange(t1, t2 int64) (int64, error) {
	q, err := halfOpen(t1, t2)
	if err != nil {
		return 0, err
	}
	return s.count(q)
}

func (s *Snapshot) count(q span) (int64, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	rd := s.newReader(q, false)
	defer rd.close()
	var n int64
	for rd.it.next(&rd.c) {
		k, err := rd.countCluster()
		if err != nil {
			return 0, fromStore(err)
		}
		n += k
	}
	return n, nil
}

// first returns the first visible record of q in the given direction.
func (s *Snapshot) first(q span, rev bool) (Record, bool, error) {
	if err := s.check(); err != nil {
		return Record{}, false, err
	}
	rd := s.newReader(q, rev)
	rd.first = true
	defer rd.close()
	ok, err := rd.nextCluster()
	if err != nil || !ok {
		return Record{}, false, fromStore(err)
	}
	x := rd.cur[0]
	if rev {
		x = rd.cur[len(rd.cur)-1]
	}
	return Record{Ts: x.ts, Handle: x.h}, true, nil
}

// Min returns the first record (smallest timestamp, first appended among
// equals); ok is false for an empty log. It reads only the first cluster
// of pages that holds a visible record: O(log n) on a compacted log.
func (s *Snapshot) Min() (r Record, ok bool, err error) { return s.first(fullSpan, false) }

// Max returns the last record (largest timestamp, last appended among
// equals), in O(log n) like Min.
func (s *Snapshot) Max() (r Record, ok bool, err error) { return s.first(fullSpan, true) }

// Next returns the first record with a timestamp after t; ok is false if
// there is none.
func (s *Snapshot) Next(t int64) (r Record, ok bool, err error) {
	if t == math.MaxInt64 {
		return Record{}, false, s.check()
	}
	return s.first(span{t + 1, math.MaxInt64}, false)
}

// Prev returns the last record with a timestamp before t; ok is false if
// there is none.
func (s *Snapshot) Prev(t int64) (r Record, ok bool, err error) {
	return s.first(untilSpan(t), true)
}
