package timelog_test

import (
	"iter"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/timelog"
)

// snapshotReads is the read method set both a Snapshot and a Log have.
type snapshotReads interface {
	Range(t1, t2 int64) iter.Seq2[timelog.Record, error]
	RangeReverse(t1, t2 int64) iter.Seq2[timelog.Record, error]
	Since(t int64) iter.Seq2[timelog.Record, error]
	SinceReverse(t int64) iter.Seq2[timelog.Record, error]
	Until(t int64) iter.Seq2[timelog.Record, error]
	UntilReverse(t int64) iter.Seq2[timelog.Record, error]
	Equal(t int64) iter.Seq2[timelog.Record, error]
	EqualReverse(t int64) iter.Seq2[timelog.Record, error]
	All() iter.Seq2[timelog.Record, error]
	AllReverse() iter.Seq2[timelog.Record, error]
	Columns(t1, t2 int64) iter.Seq2[timelog.Columns, error]
	ColumnsAll() iter.Seq2[timelog.Columns, error]
	RangeValues(t1, t2 int64) iter.Seq2[timelog.Entry, error]
	RangeValuesReverse(t1, t2 int64) iter.Seq2[timelog.Entry, error]
	AllValues() iter.Seq2[timelog.Entry, error]
	Count() (int64, error)
	CountRange(t1, t2 int64) (int64, error)
	Value(h uint64) ([]byte, error)
	Min() (timelog.Record, bool, error)
	Max() (timelog.Record, bool, error)
	Next(t int64) (timelog.Record, bool, error)
	Prev(t int64) (timelog.Record, bool, error)
}

var (
	_ snapshotReads = (*timelog.Snapshot)(nil)
	_ snapshotReads = (*timelog.Log)(nil)
)

// upTo collects at most n steps of seq (all of them for n < 0), copying
// what a step may reuse, and stops the iteration there.
func upTo[T any](seq iter.Seq2[T, error], n int, cp func(T) T) []any {
	var out []any
	for v, err := range seq {
		if n >= 0 && len(out) == n {
			break
		}
		out = append(out, cp(v), err)
	}
	return out
}

func asIs[T any](v T) T { return v }

// TestLogReadsAreSnapshotReads: every read of a Snapshot is a Log method
// too, with the asIs signature, and gives what the snapshot gives; the
// fresh snapshot it takes is closed when the call returns or the
// iteration ends, also when the caller stops it early.
func TestLogReadsAreSnapshotReads(t *testing.T) {
	snapType, logType := reflect.TypeFor[*timelog.Snapshot](), reflect.TypeFor[*timelog.Log]()
	snapshotReadsType := reflect.TypeFor[snapshotReads]()
	for i := range snapType.NumMethod() {
		m := snapType.Method(i)
		if m.Name == "Close" || m.Name == "Cursor" {
			continue // the snapshot's own end; Log.Cursor owns its snapshot
		}
		lm, ok := logType.MethodByName(m.Name)
		require.True(t, ok, "Snapshot.%s has no Log.%s", m.Name, m.Name)
		require.Equal(t, m.Type.String()[len("func(*timelog.Snapshot"):], lm.Type.String()[len("func(*timelog.Log"):],
			"the signature of Log.%s", m.Name)
		_, ok = snapshotReadsType.MethodByName(m.Name)
		require.True(t, ok, "snapshotReads lacks %s", m.Name)
	}

	db, _ := openStore(t)
	l := openLog(t, db, "r", manual(timelog.Options{Values: true}))
	for i := range 40 {
		_, err := l.AppendValue(int64(i%20), []byte{byte(i)})
		require.NoError(t, err)
	}
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, l.DeleteRange(3, 5))
	_, err := l.AppendValues([]int64{4, 30}, [][]byte{{'a'}, {'b'}}) // buffered
	require.NoError(t, err)

	cols := func(c timelog.Columns) timelog.Columns {
		return timelog.Columns{Ts: slices.Clone(c.Ts), Handles: slices.Clone(c.Handles)}
	}
	type call func(r snapshotReads, n int) []any
	calls := map[string]call{
		"Range":              func(r snapshotReads, n int) []any { return upTo(r.Range(2, 9), n, asIs) },
		"RangeReverse":       func(r snapshotReads, n int) []any { return upTo(r.RangeReverse(2, 9), n, asIs) },
		"Since":              func(r snapshotReads, n int) []any { return upTo(r.Since(15), n, asIs) },
		"SinceReverse":       func(r snapshotReads, n int) []any { return upTo(r.SinceReverse(15), n, asIs) },
		"Until":              func(r snapshotReads, n int) []any { return upTo(r.Until(6), n, asIs) },
		"UntilReverse":       func(r snapshotReads, n int) []any { return upTo(r.UntilReverse(6), n, asIs) },
		"Equal":              func(r snapshotReads, n int) []any { return upTo(r.Equal(4), n, asIs) },
		"EqualReverse":       func(r snapshotReads, n int) []any { return upTo(r.EqualReverse(7), n, asIs) },
		"All":                func(r snapshotReads, n int) []any { return upTo(r.All(), n, asIs) },
		"AllReverse":         func(r snapshotReads, n int) []any { return upTo(r.AllReverse(), n, asIs) },
		"Columns":            func(r snapshotReads, n int) []any { return upTo(r.Columns(0, 10), n, cols) },
		"ColumnsAll":         func(r snapshotReads, n int) []any { return upTo(r.ColumnsAll(), n, cols) },
		"RangeValues":        func(r snapshotReads, n int) []any { return upTo(r.RangeValues(2, 9), n, asIs) },
		"RangeValuesReverse": func(r snapshotReads, n int) []any { return upTo(r.RangeValuesReverse(2, 9), n, asIs) },
		"AllValues":          func(r snapshotReads, n int) []any { return upTo(r.AllValues(), n, asIs) },
		"Count":              func(r snapshotReads, _ int) []any { v, err := r.Count(); return []any{v, err} },
		"CountRange":         func(r snapshotReads, _ int) []any { v, err := r.CountRange(2, 9); return []any{v, err} },
		"Value":              func(r snapshotReads, _ int) []any { v, err := r.Value(41); return []any{v, err} },
		"Min":                func(r snapshotReads, _ int) []any { v, ok, err := r.Min(); return []any{v, ok, err} },
		"Max":                func(r snapshotReads, _ int) []any { v, ok, err := r.Max(); return []any{v, ok, err} },
		"Next":               func(r snapshotReads, _ int) []any { v, ok, err := r.Next(4); return []any{v, ok, err} },
		"Prev":               func(r snapshotReads, _ int) []any { v, ok, err := r.Prev(4); return []any{v, ok, err} },
	}
	for i := range snapshotReadsType.NumMethod() {
		require.Contains(t, calls, snapshotReadsType.Method(i).Name)
	}
	require.Len(t, calls, snapshotReadsType.NumMethod())

	s, err := l.Snapshot()
	require.NoError(t, err)
	defer s.Close()
	for _, name := range slices.Sorted(maps.Keys(calls)) {
		want := calls[name](s, -1)
		require.NotEmpty(t, want, name)
		require.Equal(t, want, calls[name](l, -1), "Log.%s", name)
		require.Equal(t, 1, l.Stats().OpenSnapshots, "Log.%s left its snapshot open", name)
		calls[name](l, 1)
		require.Equal(t, 1, l.Stats().OpenSnapshots, "Log.%s stopped early left its snapshot open", name)
	}
	c, err := l.Cursor(true)
	require.NoError(t, err)
	require.True(t, c.First())
	require.Equal(t, timelog.Record{Ts: 30, Handle: 41}, c.Record())
	require.Equal(t, 2, l.Stats().OpenSnapshots)
	require.NoError(t, c.Close())
	require.Equal(t, 1, l.Stats().OpenSnapshots)
}
