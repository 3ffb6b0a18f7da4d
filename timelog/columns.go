package timelog

import "iter"

// Columns is a page of records in columnar form: Ts[i] and Handles[i] are
// one record. The slices are reused by the next step of the iteration:
// copy what must outlive it.
type Columns struct {
	Ts      []int64
	Handles []uint64
}

// Len returns the number of records.
func (c Columns) Len() int { return len(c.Ts) }

// columnsMax is the most records one Columns holds.
const columnsMax = 4096

// Columns yields the records with t1 <= ts < t2 in order, in columnar
// pages of up to 4,096 records, without an allocation per record. A
// failure is yielded once, as the last step, with an empty Columns.
func (s *Snapshot) Columns(t1, t2 int64) iter.Seq2[Columns, error] {
	q, err := halfOpen(t1, t2)
	if err != nil {
		return func(yield func(Columns, error) bool) { yield(Columns{}, err) }
	}
	return s.columns(q)
}

// ColumnsAll is Columns over every record.
func (s *Snapshot) ColumnsAll() iter.Seq2[Columns, error] { return s.columns(fullSpan) }

func (s *Snapshot) columns(q span) iter.Seq2[Columns, error] {
	return func(yield func(Columns, error) bool) {
		if err := s.check(); err != nil {
			yield(Columns{}, err)
			return
		}
		ts := make([]int64, columnsMax)
		hs := make([]uint64, columnsMax)
		rd := s.newReader(q, false)
		defer rd.close()
		for {
			ok, err := rd.nextCluster()
			if err != nil {
				yield(Columns{}, err)
				return
			}
			if !ok {
				return
			}
			for cur := rd.cur; len(cur) > 0; {
				n := min(len(cur), columnsMax)
				for i, x := range cur[:n] {
					ts[i], hs[i] = x.ts, x.h
				}
				cur = cur[n:]
				if !yield(Columns{Ts: ts[:n], Handles: hs[:n]}, nil) {
					return
				}
			}
		}
	}
}
