package timelog_test

import (
	"cmp"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/timelog"
)

func recs(pairs ...int64) []timelog.Record {
	var out []timelog.Record
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, timelog.Record{Ts: pairs[i], Handle: uint64(pairs[i+1])})
	}
	return out
}

func TestAppendReadAcrossFlushAndCompaction(t *testing.T) {
	db, _ := openStore(t)
	l := openLog(t, db, "m", manual(timelog.Options{MemtableMaxBytes: 24 * 4, PageMaxBytes: 8 + 24*3}))
	// Out of order, duplicates, both ends of int64.
	in := recs(5, 1, 3, 2, 5, 3, math.MaxInt64, 4, math.MinInt64, 5, 3, 6, 0, 7, 5, 8, -1, 9)
	for _, r := range in {
		require.NoError(t, l.Append(r.Ts, r.Handle))
	}
	want := recs(math.MinInt64, 5, -1, 9, 0, 7, 3, 2, 3, 6, 5, 1, 5, 3, 5, 8, math.MaxInt64, 4)
	check := func() {
		t.Helper()
		require.Equal(t, want, collect(t, l.All()))
		rev := collect(t, l.AllReverse())
		for i := range rev {
			require.Equal(t, want[len(want)-1-i], rev[i])
		}
		require.Equal(t, recs(5, 1, 5, 3, 5, 8), collect(t, l.Equal(5)))
		require.Equal(t, recs(5, 8, 5, 3, 5, 1), collect(t, l.EqualReverse(5)))
		require.Equal(t, recs(3, 2, 3, 6), collect(t, l.Range(1, 5)))
		require.Equal(t, recs(math.MaxInt64, 4), collect(t, l.Since(math.MaxInt64)))
		require.Equal(t, recs(math.MinInt64, 5), collect(t, l.Until(-1)))
		require.Empty(t, collect(t, l.Until(math.MinInt64)))
		n, err := l.Count()
		require.NoError(t, err)
		require.EqualValues(t, len(want), n)
		n, err = l.CountRange(0, 5)
		require.NoError(t, err)
		require.EqualValues(t, 3, n)
		r, ok, err := l.Min()
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, want[0], r)
		r, ok, err = l.Max()
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, want[len(want)-1], r)
		r, ok, err = l.Next(3)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, recs(5, 1)[0], r)
		r, ok, err = l.Prev(3)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, recs(0, 7)[0], r)
		_, ok, err = l.Next(math.MaxInt64)
		require.NoError(t, err)
		require.False(t, ok)
		_, ok, err = l.Prev(math.MinInt64)
		require.NoError(t, err)
		require.False(t, ok)
	}
	check()
	require.NoError(t, l.Flush(ctx))
	check()
	compactAll(t, l)
	check()
	require.Zero(t, l.Stats().Overlapping)
}

func TestInvalidRange(t *testing.T) {
	db, _ := openStore(t)
	l := openLog(t, db, "m", manual(timelog.Options{}))
	require.ErrorIs(t, l.DeleteRange(5, 4), timelog.ErrInvalidRange)
	require.NoError(t, l.DeleteRange(5, 5))
	_, err := l.CountRange(2, 1)
	require.ErrorIs(t, err, timelog.ErrInvalidRange)
	for _, err := range l.Range(2, 1) {
		require.ErrorIs(t, err, timelog.ErrInvalidRange)
	}
	require.Zero(t, l.Stats().BufferedDeletes)
}

func TestOutOfOrderBufferSortsLikeTheModel(t *testing.T) {
	db, _ := openStore(t)
	l := openLog(t, db, "ooo", manual(timelog.Options{}))
	var want []timelog.Record
	for i := range 5000 {
		ts := int64(i)
		switch {
		case i%20 == 7:
			ts -= int64(i % 300) // late
		case i%500 == 3:
			ts = -5 // very late
		}
		r := timelog.Record{Ts: ts, Handle: uint64(i)}
		require.NoError(t, l.Append(r.Ts, r.Handle))
		want = append(want, r)
	}
	slices.SortStableFunc(want, func(a, b timelog.Record) int { return cmp.Compare(a.Ts, b.Ts) })
	require.Equal(t, want, collect(t, l.All()))
	require.NoError(t, l.Flush(ctx))
	require.Equal(t, want, collect(t, l.All()))
}
