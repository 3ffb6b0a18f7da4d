package timelog

import "iter"

// The Log's read methods: each is the Snapshot method of the same name run
// on a fresh snapshot, closed when the call (or the iteration) ends, and
// each is one call of a helper below: seq for an iteration, call for a
// value, find for a (Record, ok) look-up; the digit is the number of
// arguments passed on. TestLogReadsAreSnapshotReads checks that every
// Snapshot read has its Log method.

// Range is Snapshot.Range on a fresh snapshot.
func (l *Log) Range(t1, t2 int64) iter.Seq2[Record, error] { return seq2(l, (*Snapshot).Range, t1, t2) }

// RangeReverse is Snapshot.RangeReverse on a fresh snapshot.
func (l *Log) RangeReverse(t1, t2 int64) iter.Seq2[Record, error] {
	return seq2(l, (*Snapshot).RangeReverse, t1, t2)
}

// Since is Snapshot.Since on a fresh snapshot.
func (l *Log) Since(t int64) iter.Seq2[Record, error] { return seq1(l, (*Snapshot).Since, t) }

// SinceReverse is Snapshot.SinceReverse on a fresh snapshot.
func (l *Log) SinceReverse(t int64) iter.Seq2[Record, error] {
	return seq1(l, (*Snapshot).SinceReverse, t)
}

// Until is Snapshot.Until on a fresh snapshot.
func (l *Log) Until(t int64) iter.Seq2[Record, error] { return seq1(l, (*Snapshot).Until, t) }

// UntilReverse is Snapshot.UntilReverse on a fresh snapshot.
func (l *Log) UntilReverse(t int64) iter.Seq2[Record, error] {
	return seq1(l, (*Snapshot).UntilReverse, t)
}

// Equal is Snapshot.Equal on a fresh snapshot.
func (l *Log) Equal(t int64) iter.Seq2[Record, error] { return seq1(l, (*Snapshot).Equal, t) }

// EqualReverse is Snapshot.EqualReverse on a fresh snapshot.
func (l *Log) EqualReverse(t int64) iter.Seq2[Record, error] {
	return seq1(l, (*Snapshot).EqualReverse, t)
}

// All is Snapshot.All on a fresh snapshot.
func (l *Log) All() iter.Seq2[Record, error] { return seq0(l, (*Snapshot).All) }

// AllReverse is Snapshot.AllReverse on a fresh snapshot.
func (l *Log) AllReverse() iter.Seq2[Record, error] { return seq0(l, (*Snapshot).AllReverse) }

// Columns is Snapshot.Columns on a fresh snapshot.
func (l *Log) Columns(t1, t2 int64) iter.Seq2[Columns, error] {
	return seq2(l, (*Snapshot).Columns, t1, t2)
}

// ColumnsAll is Snapshot.ColumnsAll on a fresh snapshot.
func (l *Log) ColumnsAll() iter.Seq2[Columns, error] { return seq0(l, (*Snapshot).ColumnsAll) }

// RangeValues is Snapshot.RangeValues on a fresh snapshot.
func (l *Log) RangeValues(t1, t2 int64) iter.Seq2[Entry, error] {
	return seq2(l, (*Snapshot).RangeValues, t1, t2)
}

// RangeValuesReverse is Snapshot.RangeValuesReverse on a fresh snapshot.
func (l *Log) RangeValuesReverse(t1, t2 int64) iter.Seq2[Entry, error] {
	return seq2(l, (*Snapshot).RangeValuesReverse, t1, t2)
}

// AllValues is Snapshot.AllValues on a fresh snapshot.
func (l *Log) AllValues() iter.Seq2[Entry, error] { return seq0(l, (*Snapshot).AllValues) }

// Count is Snapshot.Count on a fresh snapshot.
func (l *Log) Count() (int64, error) { return call0(l, (*Snapshot).Count) }

// CountRange is Snapshot.CountRange on a fresh snapshot.
func (l *Log) CountRange(t1, t2 int64) (int64, error) {
	return call2(l, (*Snapshot).CountRange, t1, t2)
}

// Value is Snapshot.Value on a fresh snapshot.
func (l *Log) Value(h uint64) ([]byte, error) { return call1(l, (*Snapshot).Value, h) }

// Min is Snapshot.Min on a fresh snapshot.
func (l *Log) Min() (Record, bool, error) { return find0(l, (*Snapshot).Min) }

// Max is Snapshot.Max on a fresh snapshot.
func (l *Log) Max() (Record, bool, error) { return find0(l, (*Snapshot).Max) }

// Next is Snapshot.Next on a fresh snapshot.
func (l *Log) Next(t int64) (Record, bool, error) { return find1(l, (*Snapshot).Next, t) }

// Prev is Snapshot.Prev on a fresh snapshot.
func (l *Log) Prev(t int64) (Record, bool, error) { return find1(l, (*Snapshot).Prev, t) }

// Cursor returns a cursor on a fresh snapshot that it owns: Close it.
func (l *Log) Cursor(reverse bool) (*Cursor, error) {
	s, err := l.Snapshot()
	if err != nil {
		return nil, err
	}
	c := s.Cursor(reverse)
	c.owns = true
	return c, nil
}

// seq0 returns the iteration f makes on a fresh snapshot, which it closes
// when the iteration ends; a snapshot that cannot be taken is yielded as
// the error.
func seq0[T any](l *Log, f func(*Snapshot) iter.Seq2[T, error]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		s, err := l.Snapshot()
		if err != nil {
			var zero T
			yield(zero, err)
			return
		}
		defer s.Close()
		f(s)(yield)
	}
}

func seq1[A, T any](l *Log, f func(*Snapshot, A) iter.Seq2[T, error], a A) iter.Seq2[T, error] {
	return seq0(l, func(s *Snapshot) iter.Seq2[T, error] { return f(s, a) })
}

func seq2[A, B, T any](l *Log, f func(*Snapshot, A, B) iter.Seq2[T, error], a A, b B) iter.Seq2[T, error] {
	return seq0(l, func(s *Snapshot) iter.Seq2[T, error] { return f(s, a, b) })
}

// call0 returns f's result on a fresh snapshot, closed before it returns.
func call0[R any](l *Log, f func(*Snapshot) (R, error)) (R, error) {
	s, err := l.Snapshot()
	if err != nil {
		var zero R
		return zero, err
	}
	defer s.Close()
	return f(s)
}

func call1[A, R any](l *Log, f func(*Snapshot, A) (R, error), a A) (R, error) {
	return call0(l, func(s *Snapshot) (R, error) { return f(s, a) })
}

func call2[A, B, R any](l *Log, f func(*Snapshot, A, B) (R, error), a A, b B) (R, error) {
	return call0(l, func(s *Snapshot) (R, error) { return f(s, a, b) })
}

// found is a look-up's answer, as one value for call0.
type found struct {
	r  Record
	ok bool
}

func find0(l *Log, f func(*Snapshot) (Record, bool, error)) (Record, bool, error) {
	v, err := call0(l, func(s *Snapshot) (found, error) {
		r, ok, err := f(s)
		return found{r, ok}, err
	})
	return v.r, v.ok, err
}

func find1(l *Log, f func(*Snapshot, int64) (Record, bool, error), t int64) (Record, bool, error) {
	return find0(l, func(s *Snapshot) (Record, bool, error) { return f(s, t) })
}
