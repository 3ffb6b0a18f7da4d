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
	// busyLog is log "b" of a new store, with small's buffers and policy p.
	busyLog := func(t *testing.T, p timelog.BusyPolicy) *timelog.Log {
		db, _ := openStore(t)
		o := small
		o.Busy = p
		return openLog(t, db, "b", manual(o))
	}
	t.Run("wait, the default", func(t *testing.T) {
		// The natural loop: return on the first error. Manual maintenance,
		// never a Flush: the writes make room themselves, every one is
		// accepted, memory stays within the buffer and the queue.
		db, _ := openStore(t)
		l := openLog(t, db, "b", manual(timelog.Options{MemtableMaxBytes: 24 * 100, SealedMaxRuns: 2}))
		maxBuffered := 0
		for i := range 100 {
			batch := make([]timelog.Record, 37)
			for j := range batch {
				batch[j] = timelog.Record{Ts: int64(i*37 + j), Handle: uint64(i*37 + j)}
			}
			require.NoError(t, l.AppendBatch(batch))
			require.NoError(t, l.Append(-1, uint64(i)))
			require.NoError(t, l.DeleteRange(-1, 0))
			maxBuffered = max(maxBuffered, l.Stats().BufferedRecords+l.Stats().BufferedDeletes)
		}
		require.LessOrEqual(t, maxBuffered, 3*100, "the active buffer and two sealed ones")
		st := l.Stats()
		require.Positive(t, st.Flushes)
		require.Positive(t, st.BusyEvents)
		n, err := l.Count()
		require.NoError(t, err)
		require.EqualValues(t, 3700, n)
	})
	t.Run("wait refuses what it cannot make room for", func(t *testing.T) {
		path := t.TempDir() + "/busy.db"
		db, err := kvstore.Open(path, sealedOpts(kvstore.Options{BusyTimeout: 20 * time.Millisecond}))
		require.NoError(t, err)
		defer db.Close()
		l := openLog(t, db, "b", manual(small))
		require.NoError(t, l.AppendBatch(recs(1, 1, 2, 2))) // sealed: the queue is full
		require.NoError(t, l.AppendBatch(recs(3, 3, 4, 4))) // the buffer is full too
		tx, err := db.Begin(ctx, true)                      // holds the write lock
		require.NoError(t, err)
		err = l.Append(5, 5)
		require.ErrorIs(t, err, timelog.ErrBusy)
		require.ErrorIs(t, err, kvstore.ErrBusy)
		require.NotErrorIs(t, err, timelog.ErrQueueFull)
		require.NoError(t, tx.Rollback())
		require.Equal(t, recs(1, 1, 2, 2, 3, 3, 4, 4), collect(t, l.All()), "not accepted")
		require.NoError(t, l.Append(5, 5), "the retry")
		require.Equal(t, recs(1, 1, 2, 2, 3, 3, 4, 4, 5, 5), collect(t, l.All()))
	})
	t.Run("accept and report", func(t *testing.T) {
		require.Equal(t, timelog.BusyAcceptAndReport, timelog.BusyRaise)
		l := busyLog(t, timelog.BusyAcceptAndReport)
		require.NoError(t, l.Append(1, 1))
		require.NoError(t, l.Append(2, 2)) // sealed: the queue is full now
		require.NoError(t, l.Append(3, 3))
		err := l.Append(4, 4) // buffer full, queue full
		require.ErrorIs(t, err, timelog.ErrQueueFull)
		require.NotErrorIs(t, err, timelog.ErrBusy, "accepted: not to be retried")
		require.NotErrorIs(t, err, kvstore.ErrBusy, "accepted: not to be retried")
		err = l.DeleteRange(100, 200)
		require.ErrorIs(t, err, timelog.ErrQueueFull)
		// Accepted all the same.
		require.Equal(t, recs(1, 1, 2, 2, 3, 3, 4, 4), collect(t, l.All()))
		require.EqualValues(t, 2, l.Stats().BusyEvents)
		drain(t, l)
		require.NoError(t, l.Append(5, 5))
	})
	t.Run("silent", func(t *testing.T) {
		l := busyLog(t, timelog.BusySilent)
		require.NoError(t, fillSealed(t, l, 10))
		require.Len(t, collect(t, l.All()), 10)
		require.Equal(t, 1, l.Stats().SealedRuns)
	})
	t.Run("flush", func(t *testing.T) {
		l := busyLog(t, timelog.BusyFlush)
		require.NoError(t, fillSealed(t, l, 10))
		st := l.Stats()
		require.Positive(t, st.Flushes)
		require.Less(t, st.BufferedRecords, 10)
		require.Len(t, collect(t, l.All()), 10)
	})
	t.Run("flush refuses what it cannot make room for", func(t *testing.T) {
		l := busyLog(t, timelog.BusyFlush)
		require.NoError(t, l.AppendBatch(recs(1, 1, 2, 2, 3, 3, 4, 4)))
		require.NoError(t, l.Append(5, 5)) // sealed 1-4: the queue is full
		require.NoError(t, l.Append(6, 6)) // the buffer is full too
		disk := errors.New("disk on fire")
		timelog.SetFailCommit(func() error { return disk })
		err := l.Append(7, 7)
		timelog.SetFailCommit(nil)
		require.ErrorIs(t, err, disk)
		require.Len(t, collect(t, l.All()), 6, "not accepted")
		require.NoError(t, l.Append(7, 7))
		require.Len(t, collect(t, l.All()), 7)
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
	t.Run("background, maintenance stopped: the writes flush", func(t *testing.T) {
		db, _ := openStore(t)
		o := small
		o.SealedWait = time.Millisecond
		l := openLog(t, db, "b", o)
		l.StopMaintenance() // nothing flushes but the writes themselves
		require.NoError(t, fillSealed(t, l, 50))
		require.LessOrEqual(t, l.Stats().BufferedRecords, 4)
		require.Len(t, collect(t, l.All()), 50)
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
