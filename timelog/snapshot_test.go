package timelog_test

import (
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/timelog"
)

// A snapshot taken while flushes and compactions run sees every record
// appended before it, exactly once, and nothing appended after.
func TestSnapshotIsolationUnderMaintenance(t *testing.T) {
	db, _ := openStore(t)
	l := openLog(t, db, "iso", timelog.Options{
		MemtableMaxBytes: 24 * 64, PageMaxBytes: 8 + 24*16, SealedMaxRuns: 2,
		CompactOverlapPages: 2, MaintInterval: time.Millisecond, Busy: timelog.BusySilent,
	})
	var appended atomic.Uint64 // handles 1..appended are in the log
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(1, 2))
		for h := uint64(1); h <= 4000; h++ {
			select {
			case <-stop:
				return
			default:
			}
			require.NoError(t, l.Append(int64(rng.IntN(500)), h))
			appended.Store(h)
		}
	}()
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				l.Compact()
			}
		}
	}()
	n := 40
	if testing.Short() {
		n = 12
	}
	for range n {
		before := appended.Load()
		s, err := l.Snapshot()
		require.NoError(t, err)
		after := appended.Load()
		var hs []uint64
		prev := int64(-1)
		for r, err := range s.All() {
			require.NoError(t, err)
			require.GreaterOrEqual(t, r.Ts, prev, "sorted")
			prev = r.Ts
			hs = append(hs, r.Handle)
		}
		slices.Sort(hs)
		for i, h := range hs {
			require.Equal(t, uint64(i+1), h, "each record once, none missing")
		}
		require.GreaterOrEqual(t, uint64(len(hs)), before)
		require.LessOrEqual(t, uint64(len(hs)), after+1)
		c, err := s.Count()
		require.NoError(t, err)
		require.EqualValues(t, len(hs), c)
		time.Sleep(time.Millisecond) // let the writer and maintenance run between snapshots
		require.Equal(t, hs, sortedHandles(t, s), "the snapshot does not move")
		require.NoError(t, s.Close())
	}
	close(stop)
	wg.Wait()
}

func sortedHandles(t *testing.T, s *timelog.Snapshot) []uint64 {
	var hs []uint64
	for c, err := range s.ColumnsAll() {
		require.NoError(t, err)
		hs = append(hs, c.Handles...)
	}
	slices.Sort(hs)
	return hs
}

func TestCursorAndColumns(t *testing.T) {
	db, _ := openStore(t)
	l := openLog(t, db, "cur", manual(timelog.Options{PageMaxBytes: 8 + 24*3}))
	for i := range 10 {
		require.NoError(t, l.Append(int64(i*10), uint64(i)))
	}
	require.NoError(t, l.Flush(ctx))
	c, err := l.Cursor(false)
	require.NoError(t, err)
	require.True(t, c.SeekAt(35))
	require.Equal(t, timelog.Record{Ts: 40, Handle: 4}, c.Record())
	require.True(t, c.Next())
	require.Equal(t, int64(50), c.Record().Ts)
	require.True(t, c.First())
	require.Equal(t, int64(0), c.Record().Ts)
	require.False(t, c.SeekAt(91))
	require.NoError(t, c.Err())
	require.NoError(t, c.Close())

	r, err := l.Cursor(true)
	require.NoError(t, err)
	require.True(t, r.SeekAt(35))
	require.Equal(t, int64(30), r.Record().Ts)
	var got []int64
	for ok := true; ok; ok = r.Next() {
		got = append(got, r.Record().Ts)
	}
	require.Equal(t, []int64{30, 20, 10, 0}, got)
	require.NoError(t, r.Close())

	var ts []int64
	for cols, err := range l.Columns(15, 75) {
		require.NoError(t, err)
		require.Equal(t, len(cols.Ts), cols.Len())
		ts = append(ts, cols.Ts...)
	}
	require.Equal(t, []int64{20, 30, 40, 50, 60, 70}, ts)

	s, err := l.Snapshot()
	require.NoError(t, err)
	require.NoError(t, s.Close())
	for _, err := range s.All() {
		require.ErrorIs(t, err, timelog.ErrClosed)
	}
	_, err = s.Count()
	require.ErrorIs(t, err, timelog.ErrClosed)
}
