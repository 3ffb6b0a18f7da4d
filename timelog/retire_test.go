package timelog_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/timelog"
)

type events struct {
	mu       sync.Mutex
	dropped  []timelog.Record
	released []uint64
}

func (e *events) opts(o timelog.Options) timelog.Options {
	o.OnDrop = func(r timelog.Record) {
		e.mu.Lock()
		e.dropped = append(e.dropped, r)
		e.mu.Unlock()
	}
	o.OnRelease = func(h uint64) {
		e.mu.Lock()
		e.released = append(e.released, h)
		e.mu.Unlock()
	}
	return o
}

func (e *events) get() ([]timelog.Record, []uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]timelog.Record(nil), e.dropped...), append([]uint64(nil), e.released...)
}

func TestOnDropOnlyAfterCommit(t *testing.T) {
	db, _ := openStore(t)
	var ev events
	l := openLog(t, db, "d", ev.opts(manual(timelog.Options{})))
	for i := range 10 {
		require.NoError(t, l.Append(int64(i), uint64(i)))
	}
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, l.DeleteBefore(5))
	require.NoError(t, l.Flush(ctx))
	// The compaction's commit fails: nothing is announced, nothing lost.
	boom := errors.New("boom")
	timelog.SetFailCommit(func() error { return boom })
	l.Compact()
	_, err := l.MaintStep(ctx)
	require.ErrorIs(t, err, boom)
	timelog.SetFailCommit(nil)
	d, r := ev.get()
	require.Empty(t, d)
	require.Empty(t, r)
	require.Equal(t, recs(5, 5, 6, 6, 7, 7, 8, 8, 9, 9), collect(t, l.All()))
	// Retried: announced once, then released (no snapshot open).
	drain(t, l)
	d, r = ev.get()
	require.Equal(t, recs(0, 0, 1, 1, 2, 2, 3, 3, 4, 4), d)
	require.Equal(t, []uint64{0, 1, 2, 3, 4}, r)
	drain(t, l)
	d, _ = ev.get()
	require.Len(t, d, 5, "exactly once")
	require.Zero(t, l.Stats().Tombstones, "the delete hides nothing any more")
}

func TestOnDropFlushFailureAndBufferedDelete(t *testing.T) {
	db, _ := openStore(t)
	var ev events
	l := openLog(t, db, "d", ev.opts(manual(timelog.Options{})))
	require.NoError(t, l.Append(1, 11))
	require.NoError(t, l.Append(2, 12))
	require.NoError(t, l.DeleteRange(1, 2)) // hides 11 while still buffered
	require.NoError(t, l.Append(1, 13))     // appended after: stays
	timelog.SetFailCommit(func() error { return errors.New("no") })
	require.Error(t, l.Flush(ctx))
	timelog.SetFailCommit(nil)
	d, _ := ev.get()
	require.Empty(t, d)
	require.Equal(t, recs(1, 13, 2, 12), collect(t, l.All()))
	require.NoError(t, l.Flush(ctx))
	d, _ = ev.get()
	require.Equal(t, recs(1, 11), d)
	require.Equal(t, recs(1, 13, 2, 12), collect(t, l.All()))
}

func TestReleaseWaitsForOlderSnapshotsOnly(t *testing.T) {
	db, _ := openStore(t)
	var ev events
	l := openLog(t, db, "r", ev.opts(manual(timelog.Options{})))
	for i := range 6 {
		require.NoError(t, l.Append(int64(i), uint64(100+i)))
	}
	require.NoError(t, l.Flush(ctx))
	old, err := l.Snapshot() // sees everything
	require.NoError(t, err)
	require.NoError(t, l.DeleteBefore(2))
	compactAll(t, l)         // drops 100, 101
	mid, err := l.Snapshot() // sees 102..105
	require.NoError(t, err)
	require.NoError(t, l.DeleteBefore(4))
	compactAll(t, l) // drops 102, 103
	d, r := ev.get()
	require.Len(t, d, 4)
	require.Empty(t, r, "old can still return all four")
	// The old snapshot still returns the dropped records.
	require.Equal(t, recs(0, 100, 1, 101, 2, 102, 3, 103, 4, 104, 5, 105), collect(t, old.All()))
	require.Equal(t, recs(2, 102, 3, 103, 4, 104, 5, 105), collect(t, mid.All()))
	require.NoError(t, old.Close())
	_, r = ev.get()
	require.Equal(t, []uint64{100, 101}, r, "mid holds back only what it can see")
	st := l.Stats()
	require.Equal(t, 2, st.RetiredPending)
	require.EqualValues(t, 2, st.Released)
	require.ErrorIs(t, l.Close(), timelog.ErrSnapshotsOpen)
	require.NoError(t, mid.Close())
	_, r = ev.get()
	require.Equal(t, []uint64{100, 101, 102, 103}, r)
	require.ErrorIs(t, mid.Close(), timelog.ErrClosed)
}

func TestReleaseDrainLimit(t *testing.T) {
	db, _ := openStore(t)
	var ev events
	l := openLog(t, db, "r", ev.opts(manual(timelog.Options{ReleaseDrainLimit: 2})))
	for i := range 5 {
		require.NoError(t, l.Append(int64(i), uint64(i)))
	}
	require.NoError(t, l.Flush(ctx))
	s, err := l.Snapshot()
	require.NoError(t, err)
	require.NoError(t, l.DeleteFrom(0))
	compactAll(t, l)
	require.NoError(t, s.Close())
	_, r := ev.get()
	require.Len(t, r, 2)
	_, err = l.MaintStep(ctx)
	require.NoError(t, err)
	_, r = ev.get()
	require.Len(t, r, 4)
	require.NoError(t, l.Close()) // Close drains everything
	_, r = ev.get()
	require.Len(t, r, 5)
}

func TestCallbacksMayCallBackIntoTheLog(t *testing.T) {
	db, _ := openStore(t)
	var l *timelog.Log
	var mu sync.Mutex
	var seen []int64
	o := manual(timelog.Options{
		OnDrop: func(r timelog.Record) {
			n, err := l.Count() // a read: takes a snapshot
			require.NoError(t, err)
			mu.Lock()
			seen = append(seen, n)
			mu.Unlock()
			require.NoError(t, l.Append(1000+r.Ts, r.Handle)) // a write
		},
		OnRelease: func(uint64) {
			s, err := l.Snapshot()
			require.NoError(t, err)
			require.NoError(t, s.Close())
		},
	})
	l = openLog(t, db, "cb", o)
	require.NoError(t, l.Append(1, 1))
	require.NoError(t, l.Append(2, 2))
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, l.DeleteBefore(2))
	compactAll(t, l)
	require.Equal(t, recs(2, 2, 1001, 1), collect(t, l.All()))
	require.Equal(t, []int64{1}, seen)
}

func TestDropAnnouncesEverything(t *testing.T) {
	db, _ := openStore(t)
	var ev events
	l, err := timelog.Open(context.Background(), db, "gone", ev.opts(manual(timelog.Options{})))
	require.NoError(t, err)
	require.NoError(t, l.Append(1, 1))
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, l.Append(2, 2)) // still buffered
	s, err := l.Snapshot()
	require.NoError(t, err)
	require.ErrorIs(t, l.Drop(ctx), timelog.ErrSnapshotsOpen)
	require.NoError(t, s.Close())
	require.NoError(t, l.Drop(ctx))
	d, r := ev.get()
	require.ElementsMatch(t, recs(1, 1, 2, 2), d)
	require.ElementsMatch(t, []uint64{1, 2}, r)
	names, err := timelog.List(context.Background(), db)
	require.NoError(t, err)
	require.Empty(t, names)
	require.ErrorIs(t, l.Append(3, 3), timelog.ErrClosed)
	require.ErrorIs(t, timelog.Drop(ctx, db, "gone"), timelog.ErrNotFound)
}
