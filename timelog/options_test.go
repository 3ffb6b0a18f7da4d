package timelog_test

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/timelog"
)

// A page is one row of the store: PageMaxBytes above the store's
// MaxValueSize (every flush would fail) is refused up front, and nothing
// is created; the default page size shrinks to fit the store.
func TestOptionsPageAboveStoreMaxValueSize(t *testing.T) {
	db := smallStore(t, 1000)
	_, err := timelog.Open(context.Background(), db, "big", timelog.Options{PageMaxBytes: 1001})
	require.ErrorIs(t, err, timelog.ErrInvalidOption)
	require.ErrorContains(t, err, "PageMaxBytes 1001 is above the store's MaxValueSize 1000")
	names, err := timelog.List(context.Background(), db)
	require.NoError(t, err)
	require.Empty(t, names, "nothing created")

	for _, o := range []timelog.Options{{PageMaxBytes: 1000}, {}, {Values: true}} {
		l, err := timelog.Open(context.Background(), db, "fits", manual(o))
		require.NoError(t, err, "%+v", o)
		recs := make([]timelog.Record, 500) // 12,000 bytes of records: many full pages
		for i := range recs {
			recs[i] = timelog.Record{Ts: int64(i), Handle: uint64(i)}
		}
		if l.Values() {
			ts := make([]int64, len(recs))
			vs := make([][]byte, len(recs))
			for i := range ts {
				ts[i], vs[i] = int64(i), []byte{byte(i)}
			}
			_, err = l.AppendValues(ts, vs)
		} else {
			err = l.AppendBatch(recs)
		}
		require.NoError(t, err)
		require.NoError(t, l.Flush(ctx))
		require.NoError(t, l.IntegrityCheck(ctx))
		n, err := l.Count()
		require.NoError(t, err)
		require.EqualValues(t, len(recs), n)
		require.NoError(t, l.Drop(ctx))
	}

	tiny := smallStore(t, 31) // below the smallest page (one record)
	_, err = timelog.Open(context.Background(), tiny, "t", timelog.Options{})
	require.ErrorIs(t, err, timelog.ErrInvalidOption)
	_, err = timelog.Open(context.Background(), tiny, "t", timelog.Options{PageMaxBytes: 32})
	require.ErrorIs(t, err, timelog.ErrInvalidOption)

	// The smallest page is the largest one-record dense page: 54 bytes.
	_, err = timelog.Open(context.Background(), db, "p53", timelog.Options{PageMaxBytes: 53})
	require.ErrorIs(t, err, timelog.ErrInvalidOption)
	l := openLog(t, db, "p54", manual(timelog.Options{PageMaxBytes: 54}))
	extremes := []timelog.Record{{Ts: math.MinInt64, Handle: math.MaxUint64}, {Ts: math.MaxInt64, Handle: 1 << 63}, {Ts: 0, Handle: 0}}
	require.NoError(t, l.AppendBatch(extremes))
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, l.IntegrityCheck(ctx))
	require.Equal(t, []timelog.Record{extremes[0], extremes[2], extremes[1]}, collect(t, l.All()))
	require.GreaterOrEqual(t, l.Stats().Pages, 2, "a page of at most 54 bytes holds two of these at most")
	pages, err := layer.OpenHiddenTable(ctx, db, "timelog", "p54/pages")
	require.NoError(t, err)
	for e, err := range pages.All() {
		require.NoError(t, err)
		require.LessOrEqual(t, len(e.Value), 54)
	}
}

// ValueBlockBytes bounds every value block row; blocks of any size are
// read back, whatever the reader's setting; out-of-range sizes are refused.
func TestValueBlockBytes(t *testing.T) {
	db, _ := openStore(t)
	for _, bad := range []int{-1, 1, 63, db.MaxValueSize() + 1} {
		_, err := timelog.Open(context.Background(), db, "bad", manual(timelog.Options{Values: true, ValueBlockBytes: bad}))
		require.ErrorIs(t, err, timelog.ErrInvalidOption, "ValueBlockBytes %d", bad)
	}
	l, err := timelog.Open(context.Background(), db, "small", manual(timelog.Options{Values: true, ValueBlockBytes: 900}))
	require.NoError(t, err)
	ts := make([]int64, 100)
	vals := make([][]byte, 100)
	for i := range ts {
		ts[i] = int64(i)
		vals[i] = bytes.Repeat([]byte{byte(i)}, 100)
	}
	_, err = l.AppendValues(ts, vals)
	require.NoError(t, err)
	require.NoError(t, l.Close())

	rows, err := layer.OpenHiddenTable(ctx, db, "timelog", "small/values")
	require.NoError(t, err)
	n := 0
	for e, err := range rows.All() {
		require.NoError(t, err)
		require.LessOrEqual(t, len(e.Value), 900)
		n++
	}
	require.GreaterOrEqual(t, n, 12, "100 values of 100 bytes need a dozen blocks of 900")

	l, err = timelog.Open(context.Background(), db, "small", manual(timelog.Options{Values: true}))
	require.NoError(t, err)
	defer l.Close()
	i := 0
	for e, err := range l.AllValues() {
		require.NoError(t, err)
		require.Equal(t, vals[i], e.Value)
		i++
	}
	require.Equal(t, 100, i)
	require.NoError(t, l.IntegrityCheck(ctx))
}

// TestOptionsNaNDeletedShare: a NaN CompactDeletedShare passed every
// comparison of the range check and was taken, so that no page ever
// reached the threshold: it is refused like any share outside 0..1.
func TestOptionsNaNDeletedShare(t *testing.T) {
	db, _ := openStore(t)
	_, err := timelog.Open(context.Background(), db, "n", timelog.Options{CompactDeletedShare: math.NaN()})
	require.ErrorIs(t, err, timelog.ErrInvalidOption)
	_, err = timelog.Open(context.Background(), db, "n", timelog.Options{CompactDeletedShare: math.Inf(1)})
	require.ErrorIs(t, err, timelog.ErrInvalidOption)
}

// TestOptionsPageCounts: a compaction page count of 1 or below zero is
// refused; 0 takes the default, 2 and up are taken.
func TestOptionsPageCounts(t *testing.T) {
	db, _ := openStore(t)
	for _, bad := range []timelog.Options{
		{CompactOverlapPages: 1}, {CompactOverlapPages: -1},
		{CompactMaxPages: 1}, {CompactMaxPages: -3},
	} {
		_, err := timelog.Open(context.Background(), db, "bad", bad)
		require.ErrorIs(t, err, timelog.ErrInvalidOption, "%+v", bad)
	}
	for _, good := range []timelog.Options{{}, {CompactOverlapPages: 2, CompactMaxPages: 2}} {
		l := openLog(t, db, "good", manual(good))
		require.NoError(t, l.Close())
	}
}
