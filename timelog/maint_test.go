package timelog_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

func fillSealed(t *testing.T, l *timelog.Log, n int) error {
	var last error
	for i := range n {
		last = l.Append(int64(i), uint64(i))
	}
	return last
}

func TestBusyPolicies(t *testing.T) {
	small := timelog.Options{MemtableMaxBytes: 24 * 2, SealedMaxRuns: 1}
	t.Run("raise", func(t *testing.T) {
		db, _ := openStore(t)
		l := openLog(t, db, "b", manual(small))
		require.NoError(t, l.Append(1, 1))
		require.NoError(t, l.Append(2, 2)) // sealed: the queue is full now
		require.NoError(t, l.Append(3, 3))
		err := l.Append(4, 4) // buffer full, queue full
		require.ErrorIs(t, err, timelog.ErrBusy)
		err = l.DeleteRange(100, 200)
		require.ErrorIs(t, err, timelog.ErrBusy)
		// Accepted all the same.
		require.Equal(t, recs(1, 1, 2, 2, 3, 3, 4, 4), collect(t, l.All()))
		require.EqualValues(t, 2, l.Stats().BusyEvents)
		drain(t, l)
		require.NoError(t, l.Append(5, 5))
	})
	t.Run("silent", func(t *testing.T) {
		db, _ := openStore(t)
		o := small
		o.Busy = timelog.BusySilent
		l := openLog(t, db, "b", manual(o))
		require.NoError(t, fillSealed(t, l, 10))
		require.Len(t, collect(t, l.All()), 10)
		require.Equal(t, 1, l.Stats().SealedRuns)
	})
	t.Run("flush", func(t *testing.T) {
		db, _ := openStore(t)
		o := small
		o.Busy = timelog.BusyFlush
		l := openLog(t, db, "b", manual(o))
		require.NoError(t, fillSealed(t, l, 10))
		st := l.Stats()
		require.Positive(t, st.Flushes)
		require.Less(t, st.BufferedRecords, 10)
		require.Len(t, collect(t, l.All()), 10)
	})
	t.Run("background waits", func(t *testing.T) {
		db, _ := openStore(t)
		o := small
		o.SealedWait = 5 * time.Second
		l := openLog(t, db, "b", o)
		// With maintenance running, every write finds room in time.
		require.NoError(t, fillSealed(t, l, 200))
		require.NoError(t, l.Flush(ctx))
		n, err := l.Count()
		require.NoError(t, err)
		require.EqualValues(t, 200, n)
	})
}

func TestFlushBusyIsRetryable(t *testing.T) {
	path := t.TempDir() + "/busy.db"
	db, err := kvstore.Open(path, sealedOpts(kvstore.Options{BusyTimeout: 20 * time.Millisecond}))
	require.NoError(t, err)
	defer db.Close()
	l := openLog(t, db, "b", manual(timelog.Options{}))
	require.NoError(t, l.Append(1, 1))
	other, err := kvstore.Open(path, sealedOpts(kvstore.Options{BusyTimeout: 20 * time.Millisecond}))
	require.NoError(t, err)
	defer other.Close()
	tx, err := other.Begin(ctx, true) // holds the file's write lock
	require.NoError(t, err)
	fctx, cancel := contextWithTimeout(50 * time.Millisecond)
	defer cancel()
	err = l.Flush(fctx)
	require.ErrorIs(t, err, timelog.ErrBusy, "retry is safe")
	require.Equal(t, recs(1, 1), collect(t, l.All()), "nothing lost")
	require.NoError(t, tx.Rollback())
	require.NoError(t, l.Flush(ctx))
	require.Equal(t, recs(1, 1), collect(t, l.All()))
}

func TestMaintenanceStartStopCycles(t *testing.T) {
	db, _ := openStore(t)
	l := openLog(t, db, "m", timelog.Options{MemtableMaxBytes: 24 * 8, MaintInterval: time.Millisecond})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 2000 {
			_ = l.Append(int64(i%97), uint64(i))
		}
	}()
	for range 50 {
		require.NoError(t, l.StartMaintenance())
		require.NoError(t, l.StartMaintenance())
		l.StopMaintenance()
		l.StopMaintenance()
	}
	wg.Wait()
	require.NoError(t, l.StartMaintenance())
	require.NoError(t, l.Flush(ctx))
	n, err := l.Count()
	require.NoError(t, err)
	require.EqualValues(t, 2000, n)

	m := openLog(t, db, "manual", manual(timelog.Options{}))
	require.ErrorIs(t, m.StartMaintenance(), timelog.ErrManualMode)
	m.StopMaintenance()
}

func TestBackgroundCompaction(t *testing.T) {
	db, _ := openStore(t)
	l := openLog(t, db, "bg", timelog.Options{
		MemtableMaxBytes: 24 * 50, PageMaxBytes: 8 + 24*20, MaintInterval: time.Millisecond,
		CompactOverlapPages: 2,
	})
	for i := range 1000 {
		require.NoError(t, l.Append(int64(i%100), uint64(i))) // every buffer overlaps the last
	}
	require.NoError(t, l.Flush(ctx))
	l.Compact()
	require.Eventually(t, func() bool { return l.Stats().Overlapping == 0 }, 10*time.Second, time.Millisecond)
	n, err := l.Count()
	require.NoError(t, err)
	require.EqualValues(t, 1000, n)
	require.Positive(t, l.Stats().Compactions)
}

func TestBackgroundRetriesAFailingStep(t *testing.T) {
	db, _ := openStore(t)
	errs := make(chan error, 100)
	timelog.SetFailCommit(func() error { return errors.New("disk on fire") })
	defer timelog.SetFailCommit(nil)
	l := openLog(t, db, "retry", timelog.Options{
		MemtableMaxBytes: 24 * 4, MaintInterval: 20 * time.Millisecond,
		OnMaintError: func(err error) {
			select {
			case errs <- err:
			default:
			}
		},
	})
	for i := range 4 {
		require.NoError(t, l.Append(int64(i), uint64(i))) // seals: maintenance tries to flush
	}
	require.ErrorContains(t, <-errs, "disk on fire")
	require.Equal(t, 1, l.Stats().SealedRuns, "nothing lost, still queued")
	timelog.SetFailCommit(nil)
	require.Eventually(t, func() bool { return l.Stats().SealedRuns == 0 }, 10*time.Second, 5*time.Millisecond)
	require.Positive(t, l.Stats().MaintErrors)
	require.Equal(t, recs(0, 0, 1, 1, 2, 2, 3, 3), collect(t, l.All()))
}
