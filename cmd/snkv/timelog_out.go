package main

import (
	"context"
	"iter"
	"math"
	"strconv"

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
		return interruptedf("interrupted after %s", countOf(n, "record"))
	}
	return err
}
