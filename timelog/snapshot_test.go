package timelog_test

import (
	"cmp"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
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
	loops := testutil.NewLoops()
	rng := rand.New(rand.NewPCG(1, 2))
	loops.Go(func(n int) bool {
		h := uint64(n + 1)
		require.NoError(t, l.Append(int64(rng.IntN(500)), h))
		appended.Store(h)
		return h < 4000
	})
	loops.Go(func(int) bool {
		time.Sleep(5 * time.Millisecond)
		l.Compact()
		return true
	})
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
	loops.Stop()
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

// TestCursorAfterClose: a closed cursor reports ErrClosed, as an iterator of
// a closed snapshot does; it used to answer First and SeekAt with false and
// a nil Err, which reads as an empty log.
func TestCursorAfterClose(t *testing.T) {
	db, _ := openStore(t)
	l := openLog(t, db, "cur", manual(timelog.Options{}))
	require.NoError(t, l.AppendBatch(recs(1, 1, 2, 2)))
	for _, owned := range []bool{true, false} {
		var c *timelog.Cursor
		if owned {
			var err error
			c, err = l.Cursor(false)
			require.NoError(t, err)
		} else {
			s, err := l.Snapshot()
			require.NoError(t, err)
			defer s.Close()
			c = s.Cursor(false)
		}
		require.True(t, c.First())
		require.NoError(t, c.Close())
		require.NoError(t, c.Close(), "a second Close is harmless")
		require.False(t, c.Valid())
		require.False(t, c.Next())
		require.ErrorIs(t, c.Err(), timelog.ErrClosed)
		require.False(t, c.First())
		require.ErrorIs(t, c.Err(), timelog.ErrClosed)
		require.False(t, c.SeekAt(1))
		require.ErrorIs(t, c.Err(), timelog.ErrClosed)
		require.ErrorIs(t, c.Err(), kvstore.ErrClosed)
	}
}

// One snapshot read by several goroutines at once gives each what it gives
// one alone: every read has a page cursor of its own, and the page bytes it
// decodes point into that cursor's row while the others step theirs.
func TestSnapshotConcurrentReads(t *testing.T) {
	db, _ := openStore(t)
	l := openLog(t, db, "conc", manual(timelog.Options{PageMaxBytes: 256}))
	rng := rand.New(rand.NewPCG(5, 6))
	for h := range uint64(3000) {
		ts := int64(h)
		if rng.IntN(20) == 0 {
			ts -= 1 + int64(rng.IntN(100))
		}
		require.NoError(t, l.Append(ts, h))
		if h%1000 == 999 {
			require.NoError(t, l.Flush(ctx)) // three flushes, overlapping at their edges
		}
	}
	s, err := l.Snapshot()
	require.NoError(t, err)
	defer s.Close()
	all := collect(t, s.All())
	require.Len(t, all, 3000)
	next := func(t0 int64) (timelog.Record, bool) { // the first record after t0
		i, _ := slices.BinarySearchFunc(all, t0+1, func(r timelog.Record, ts int64) int { return cmp.Compare(r.Ts, ts) })
		if i == len(all) {
			return timelog.Record{}, false
		}
		return all[i], true
	}
	prev := func(t0 int64) (timelog.Record, bool) { // the last record before t0
		i, _ := slices.BinarySearchFunc(all, t0, func(r timelog.Record, ts int64) int { return cmp.Compare(r.Ts, ts) })
		if i == 0 {
			return timelog.Record{}, false
		}
		return all[i-1], true
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			check := func(what string, got, want any, err error) bool {
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("goroutine %d, %s: got %v, want %v (%v)", g, what, got, want, err)
					return false
				}
				return true
			}
			for range 300 {
				t0 := int64(rng.IntN(3100)) - 50
				var ok bool
				switch rng.IntN(6) {
				case 0:
					r, found, err := s.Min()
					ok = check("Min", []any{r, found}, []any{all[0], true}, err)
				case 1:
					r, found, err := s.Max()
					ok = check("Max", []any{r, found}, []any{all[len(all)-1], true}, err)
				case 2:
					r, found, err := s.Next(t0)
					w, wf := next(t0)
					ok = check("Next", []any{r, found}, []any{w, wf}, err)
				case 3:
					r, found, err := s.Prev(t0)
					w, wf := prev(t0)
					ok = check("Prev", []any{r, found}, []any{w, wf}, err)
				case 4:
					var got []timelog.Record
					var err error
					for r, e := range s.Range(t0, t0+40) {
						if err = e; e != nil {
							break
						}
						got = append(got, r)
					}
					var want []timelog.Record
					for _, r := range all {
						if r.Ts >= t0 && r.Ts < t0+40 {
							want = append(want, r)
						}
					}
					ok = check("Range", got, want, err)
				default:
					var got []timelog.Record
					var err error
					for c, e := range s.ColumnsAll() {
						if err = e; e != nil {
							break
						}
						for i := range c.Ts {
							got = append(got, timelog.Record{Ts: c.Ts[i], Handle: c.Handles[i]})
						}
					}
					ok = check("ColumnsAll", got, all, err)
				}
				if !ok {
					return
				}
			}
		}()
	}
	wg.Wait()
}

// A flushed buffer's array becomes the next write buffer only if no
// snapshot refers to it: snapshots taken of the active buffer (which
// shares its array while it holds no late record) and of sealed buffers
// keep returning what they saw while the writes go on through many
// buffers.
func TestSnapshotsOutliveRecycledBuffers(t *testing.T) {
	db, _ := openStore(t)
	l := openLog(t, db, "rec", manual(timelog.Options{MemtableMaxBytes: 24 * 10, SealedMaxRuns: 2}))
	var all []timelog.Record
	appendRecs := func(late bool, n int) {
		for range n {
			r := timelog.Record{Ts: int64(len(all)), Handle: uint64(len(all))}
			if late && len(all)%3 == 0 {
				r.Ts -= 5
			}
			require.NoError(t, l.Append(r.Ts, r.Handle))
			all = append(all, r)
		}
	}
	sorted := func() []timelog.Record {
		out := slices.Clone(all)
		slices.SortStableFunc(out, func(a, b timelog.Record) int { return cmp.Compare(a.Ts, b.Ts) })
		return out
	}
	type held struct {
		s    *timelog.Snapshot
		want []timelog.Record
	}
	var snaps []held
	take := func() {
		s, err := l.Snapshot()
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		snaps = append(snaps, held{s, sorted()})
	}
	appendRecs(false, 5)
	take()               // shares the active buffer's array
	appendRecs(false, 5) // sealed: the run shares that array
	require.NoError(t, l.Flush(ctx))
	appendRecs(true, 10) // sealed
	take()               // holds both sealed buffers
	appendRecs(true, 7)
	take() // a sorted copy of the active buffer
	appendRecs(true, 300)
	require.NoError(t, l.Flush(ctx))
	appendRecs(true, 300)
	require.NoError(t, l.Flush(ctx))
	for i, h := range snaps {
		require.Equal(t, h.want, collect(t, h.s.All()), "snapshot %d", i)
	}
	require.Equal(t, sorted(), collect(t, l.All()))
}
