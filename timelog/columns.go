package timelog

import (
	"fmt"
	"iter"
	"sort"
)

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
		var cb colBuf
		rd := s.newReader(q, false)
		defer rd.close()
		for rd.it.next(&rd.c) {
			ts, hs, ok, err := rd.direct(&cb)
			if err == nil && !ok {
				if err = rd.load(); err == nil {
					cb.grow(len(rd.cur))
					ts, hs = cb.ts[:len(rd.cur)], cb.hs[:len(rd.cur)]
					for i, x := range rd.cur {
						ts[i], hs[i] = x.ts, x.h
					}
				}
			}
			if err != nil {
				yield(Columns{}, fromStore(err))
				return
			}
			for len(ts) > 0 {
				n := min(len(ts), columnsMax)
				if !yield(Columns{Ts: ts[:n:n], Handles: hs[:n:n]}, nil) {
					return
				}
				ts, hs = ts[n:], hs[n:]
			}
		}
	}
}

// colBuf holds the columns of one cluster.
type colBuf struct {
	ts []int64
	hs []uint64
}

func (c *colBuf) grow(n int) {
	if cap(c.ts) < n {
		c.ts, c.hs = make([]int64, n), make([]uint64, n)
	}
}

// direct decodes the current cluster straight into columns when it is one
// dense page that no delete touches: timestamps and handles only, the
// sequence numbers left alone. ok is false for any other cluster.
func (r *reader) direct(cb *colBuf) (ts []int64, hs []uint64, ok bool, err error) {
	if len(r.c.runs) > 0 {
		return nil, nil, false, nil
	}
	var p pageInfo
	pages := 0
	_ = r.it.pagesOf(&r.c, func(x pageInfo) error {
		p = x
		pages++
		return nil
	})
	s := r.it.s
	if pages != 1 || p.version != denseVersion {
		return nil, nil, false, nil
	}
	if r.tombs = s.applicable(r.tombs, r.c.sp, p.minSeq); len(r.tombs) > 0 {
		return nil, nil, false, nil
	}
	b, err := r.pc.get(p)
	if err != nil {
		return nil, nil, false, err
	}
	n, err := checkPage(b, p.n)
	if err == nil && b[3] != denseVersion {
		err = fmt.Errorf("%w: page version %d, its summary says %d", ErrCorrupt, b[3], p.version)
	}
	var d densePage
	if err == nil {
		d, err = parseDense(b, n)
	}
	if err == nil {
		cb.grow(n)
		ts, hs = cb.ts[:n], cb.hs[:n]
		if err = decodeDenseTs(ts, d.ts); err == nil {
			err = decodeDenseHandles(hs, d.h)
		}
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("timelog %q, page %x: %w", s.l.name, p.key(), err)
	}
	q := r.it.q
	i, j := 0, n
	if p.minTs < q.lo || p.maxTs > q.hi {
		i = sort.Search(n, func(k int) bool { return ts[k] >= q.lo })
		j = i + sort.Search(n-i, func(k int) bool { return ts[i+k] > q.hi })
	}
	return ts[i:j], hs[i:j], true, nil
}
