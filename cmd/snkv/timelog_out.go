package main

import (
	"context"
	"iter"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/snkv-go/snkv/timelog"
)

// entries yields the records of s with lo <= ts <= hi (lo <= hi), in time
// order or newest first, each with its value when values is set (a values
// log). Bounds are inclusive so that the last timestamp, MaxInt64, can be
// read: the library's ranges are half-open.
func entries(s *timelog.Snapshot, values bool, lo, hi int64, reverse bool) iter.Seq2[timelog.Entry, error] {
	return func(yield func(timelog.Entry, error) bool) {
		if !values {
			it := s.Since(lo)
			switch {
			case hi < math.MaxInt64 && reverse:
				it = s.RangeReverse(lo, hi+1)
			case hi < math.MaxInt64:
				it = s.Range(lo, hi+1)
			case reverse:
				it = s.SinceReverse(lo)
			}
			for r, err := range it {
				if !yield(timelog.Entry{Record: r}, err) || err != nil {
					return
				}
			}
			return
		}
		// A values log: the value iterators are half-open, so the records
		// at MaxInt64 (when hi is MaxInt64) are read apart, with Value.
		top := func() bool {
			if hi < math.MaxInt64 {
				return true
			}
			for r, err := range s.Equal(math.MaxInt64) {
				var v []byte
				if err == nil {
					v, err = s.Value(r.Handle)
				}
				if !yield(timelog.Entry{Record: r, Value: v}, err) || err != nil {
					return false
				}
			}
			return true
		}
		end := hi
		if hi < math.MaxInt64 {
			end = hi + 1
		}
		if reverse && !top() {
			return
		}
		it := s.RangeValues(lo, end)
		if reverse {
			it = s.RangeValuesReverse(lo, end)
		}
		if lo < end {
			for e, err := range it {
				if !yield(e, err) || err != nil {
					return
				}
			}
		}
		if !reverse {
			top()
		}
	}
}

// recordWriter writes records as a table (TS, HANDLE, TIME with a time
// unit, VALUE for a values log) or as JSON Lines {"log","ts","handle"}
// plus "time" and "value"/"value_base64". Both stream.
type recordWriter struct {
	a      *app
	name   string
	perSec int64
	values bool
	t      *table
	prefix []byte
	buf    []byte
}

func (a *app) recordWriter(l *timelog.Log, perSec int64) *recordWriter {
	w := &recordWriter{a: a, name: l.Name(), perSec: perSec, values: l.Values()}
	if a.json {
		q, _ := jsonString(w.name)
		w.prefix = append(append([]byte(`{"log":`), q...), `,"ts":`...)
		return w
	}
	headers := []string{"TS", "HANDLE"}
	if perSec > 0 {
		headers = append(headers, "TIME")
	}
	if w.values {
		headers = append(headers, "VALUE")
	}
	w.t = a.table(headers...)
	return w
}

// write writes one record.
func (w *recordWriter) write(e timelog.Entry) error {
	if w.t != nil {
		row := []string{itoa(e.Ts), strconv.FormatUint(e.Handle, 10)}
		if w.perSec > 0 {
			row = append(row, orDash(formatTimestamp(e.Ts, w.perSec)))
		}
		if w.values {
			row = append(row, w.a.show(e.Value))
		}
		w.t.row(row...)
		return w.t.err
	}
	b := append(w.buf[:0], w.prefix...)
	b = strconv.AppendInt(b, e.Ts, 10)
	b = append(b, `,"handle":`...)
	b = strconv.AppendUint(b, e.Handle, 10)
	if w.perSec > 0 {
		if ts := formatTimestamp(e.Ts, w.perSec); ts != "" {
			b = append(append(append(b, `,"time":"`...), ts...), '"')
		}
	}
	if w.values {
		text, b64 := textOrBase64(e.Value)
		if text != nil {
			q, err := jsonString(*text)
			if err != nil {
				return err
			}
			b = append(append(b, `,"value":`...), q...)
		} else {
			b = append(append(append(b, `,"value_base64":"`...), *b64...), '"')
		}
	}
	b = append(b, "}\n"...)
	w.buf = b
	_, err := w.a.out.Write(b)
	return err
}

// end finishes the listing: err is how the reading ended, n the records
// written.
func (w *recordWriter) end(ctx context.Context, err error, n int) error {
	if w.t != nil {
		if ferr := w.t.flush(); err == nil {
			err = ferr
		}
	}
	if err != nil && interrupted(ctx, err) {
		return interruptedf("interrupted after %d records", n)
	}
	return err
}

// lastEntries reads the n entries of l with the largest timestamps,
// oldest of them first, from one snapshot closed before it returns.
func lastEntries(ctx context.Context, l *timelog.Log, n int) (last []timelog.Entry, err error) {
	s, err := l.SnapshotContext(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := s.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if n > 0 {
		for e, err := range entries(s, l.Values(), math.MinInt64, math.MaxInt64, true) {
			if err != nil {
				return nil, err
			}
			if last = append(last, e); len(last) == n {
				break
			}
		}
	}
	slices.Reverse(last)
	return last, nil
}

// follow polls the log for records flushed since the entries shown, with a
// timestamp at or after the last of them, and prints them until the
// context ends (Ctrl-C: exit code 0). Each poll reads one snapshot and
// closes it at once, so that the writer's checkpoints are never held up
// between polls.
func (a *app) follow(ctx context.Context, l *timelog.Log, out *recordWriter, shown []timelog.Entry) error {
	if out.t != nil {
		if err := out.t.flush(); err != nil { // widths fixed: rows go out at once
			return err
		}
	}
	// from is the timestamp to read from, skip the records at it already
	// shown (equal timestamps come in append order). With nothing shown,
	// follow from the log's last record on.
	from, skip := int64(math.MinInt64), 0
	if len(shown) > 0 {
		from = shown[len(shown)-1].Ts
		for _, e := range shown {
			if e.Ts == from {
				skip++
			}
		}
	} else {
		all, err := lastEntries(ctx, l, 1)
		if err != nil {
			return err
		}
		if len(all) > 0 {
			from = all[0].Ts
			if skip, err = countAt(ctx, l, from); err != nil {
				return err
			}
		}
	}
	tick := time.NewTicker(followEvery)
	defer tick.Stop()
	for {
		if err := a.flushOut(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		var err error
		if from, skip, err = a.poll(ctx, l, out, from, skip); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// countAt counts the records of l at timestamp ts.
func countAt(ctx context.Context, l *timelog.Log, ts int64) (n int, err error) {
	s, err := l.SnapshotContext(ctx)
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := s.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	for _, err := range s.Equal(ts) {
		if err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

// poll prints the records of one new snapshot from timestamp from on,
// skipping the first skip at it (already shown), and returns where the
// next poll starts.
func (a *app) poll(ctx context.Context, l *timelog.Log, out *recordWriter, from int64, skip int) (_ int64, _ int, err error) {
	snap, err := l.SnapshotContext(ctx)
	if err != nil {
		return from, skip, err
	}
	defer func() {
		if cerr := snap.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	seen := 0
	for e, err := range entries(snap, l.Values(), from, math.MaxInt64, false) {
		if err != nil {
			return from, skip, err
		}
		if e.Ts == from && seen < skip {
			seen++
			continue
		}
		if e.Ts != from {
			from, skip, seen = e.Ts, 0, 0
		}
		skip++
		seen++
		if err := out.write(e); err != nil {
			return from, skip, err
		}
	}
	return from, skip, nil
}
