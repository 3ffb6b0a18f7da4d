package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/stretchr/testify/require"
	sqlite3 "modernc.org/sqlite/lib"
)

// ckptDB opens a WAL store with table t and automatic checkpoints every
// threshold pages.
func ckptDB(t *testing.T, threshold int) (*DB, string) {
	t.Helper()
	return ckptDBSync(t, threshold, "NORMAL")
}

// ckptDBSync is ckptDB at the synchronous level sync.
func ckptDBSync(t *testing.T, threshold int, sync string) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.db")
	db, err := Open(Config{Path: path, Journal: "WAL", Sync: sync, BusyTimeout: 5 * time.Second,
		MmapSize: 1 << 20, ReadHold: time.Hour, MaxReaders: 4, AutoCheckpoint: threshold})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	withWriter(t, db, func(c *Conn) {
		require.NoError(t, db.SetJournalMode(context.Background(), c))
		require.NoError(t, c.ExecScript(context.Background(), "CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)"))
	})
	require.NotNil(t, db.ckpt, "a WAL store with a writer has a checkpointer")
	return db, path
}

// putRows commits one transaction writing rows [from, from+n) of t, each
// with a value of size bytes.
func putRows(t *testing.T, db *DB, from, n, size int) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.Begin(ctx, true)
	require.NoError(t, err)
	v := make([]byte, size)
	for i := from; i < from+n; i++ {
		v[0] = byte(i)
		_, err := tx.Conn().Exec(ctx, "INSERT OR REPLACE INTO t (k, v) VALUES (?1, ?2)", i, v)
		require.NoError(t, err)
	}
	require.NoError(t, tx.Commit())
}

// walFrames returns the WAL's size in frames (after the writer's last
// commit) and how many of them are in the database file.
func walFrames(t *testing.T, db *DB) (frames, backfilled int64) {
	t.Helper()
	require.Eventually(t, func() bool { return db.ckpt.shm.Load() != nil }, 10*time.Second, time.Millisecond,
		"the checkpointer did not map the WAL index")
	m := db.ckpt.shm.Load()
	w := (*[25]uint32)(m.p)
	return db.ckpt.frames.Load(), int64(w[24]) // WalCkptInfo.nBackfill follows the two header copies
}

// waitComplete waits until the checkpointer has run n complete passes.
func waitComplete(t *testing.T, db *DB, n uint64) {
	t.Helper()
	require.Eventually(t, func() bool { return db.CheckpointStats().Complete.Load() >= n },
		10*time.Second, time.Millisecond, "the checkpointer did not copy the WAL")
}

// A commit that takes the WAL past the threshold returns without copying
// it: the checkpointer does, on its own connection, and the writer's next
// transaction restarts the WAL.
func TestCheckpointOffTheCommit(t *testing.T) {
	db, path := ckptDB(t, 100)
	k := db.ckpt
	putRows(t, db, 0, 50, 1000) // below the threshold: nothing to do
	require.False(t, k.started.Load(), "a checkpointer started below the threshold")

	// The checkpointer is held up: the commit must not wait for it.
	k.mu.Lock()
	done := putRowsAsync(t, db, 0, 400, 1000)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		k.mu.Unlock()
		t.Fatal("the commit waited for the checkpoint")
	}
	require.Zero(t, k.stats.Passes.Load(), "a checkpoint ran in the commit")
	k.mu.Unlock()

	waitComplete(t, db, 1)
	frames, backfilled := walFrames(t, db)
	require.GreaterOrEqual(t, frames, int64(100))
	require.Equal(t, frames, backfilled, "the pass did not copy the whole WAL")
	size := fileSize(t, path+"-wal")

	// The next transaction starts the WAL again from its beginning.
	putRows(t, db, 1000, 5, 100)
	after, _ := walFrames(t, db)
	require.Less(t, after, frames, "the WAL did not restart")
	require.Equal(t, size, fileSize(t, path+"-wal"), "the WAL file grew")
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Size()
}

// Under a steady stream of small commits the checkpointer cannot keep up
// on its own; commits then catch up, and the WAL restarts again and
// again. Past 7/4 of the threshold the first transaction that finds no
// pass in progress copies the WAL; past twice that, a transaction waits
// for the pass: the WAL stays below 7/2 of the threshold (plus one
// commit).
func TestCheckpointBoundsWALUnderSteadyCommits(t *testing.T) {
	const threshold = 200
	db, path := ckptDB(t, threshold)
	var top int64
	restarts := steadyCommits(t, db, 3000, func(frames int64) { top = max(top, frames) })
	require.Less(t, top, int64(threshold*7/2+10), "the WAL outgrew the bound")
	require.Greater(t, restarts, 3, "the WAL never restarted")
	require.Less(t, fileSize(t, path+"-wal"), int64((threshold*7/2+10)*(4096+24)))
}

// The writer's copy of a WAL past its bound (settle) ends first the read
// transactions that idle readers hold on a snapshot before the last
// commit, as a pass does: one of them kept the copy from completing and
// the WAL from restarting, and every transaction after it copied the WAL
// again until one found no read in the way (8 to 43 copies by the writer
// per 1,000 lone Puts with 100 change-feed readers, against about 2).
func TestCheckpointCopyEndsStaleHeldReads(t *testing.T) {
	ctx := context.Background()
	db, _ := ckptDB(t, 100)
	k := db.ckpt
	putRows(t, db, 0, 400, 1000)
	waitComplete(t, db, 1)
	require.Eventually(t, func() bool { return !k.passing.Load() }, 10*time.Second, time.Millisecond)
	k.mu.Lock() // a pass in progress
	unlocked := false
	defer func() {
		if !unlocked {
			k.mu.Unlock()
		}
	}()
	i := 1
	for ; !k.due; i++ {
		putRows(t, db, i*100, 100, 1000)
	}
	readV(t, db, 1)               // an idle reader holds a read transaction on the WAL
	putRows(t, db, i*100, 1, 100) // which is stale now; no copy: a pass is in progress
	require.True(t, k.due)
	require.Zero(t, k.stats.WriterPasses.Load())

	c, err := db.AcquireWriter(ctx)
	require.NoError(t, err)
	k.writerHasMu = true // as the writer's holder with the pass's lock (WithWriter)
	k.settle(c)
	k.writerHasMu = false
	db.ReleaseWriter(c)
	require.Equal(t, uint64(1), k.stats.WriterPasses.Load())
	frames, backfilled := walFrames(t, db)
	require.Equal(t, frames, backfilled, "the stale held read kept the writer's copy from completing")
	unlocked = true
	k.mu.Unlock()
}

// Under a steady stream of small commits a WAL cycle (from one restart to
// the next) costs a few passes, each of which syncs both files: not one
// pass for every commit that comes after the threshold while the WAL waits
// for its restart. A pass that leaves a small tail has the next commit
// copy it, so that the transaction after restarts the WAL. (Each commit
// syncs here, as with SyncFull, so the checkpointer has time for many
// passes between two commits.)
func TestCheckpointPassesPerCycle(t *testing.T) {
	const threshold = 200
	db, _ := ckptDBSync(t, threshold, "FULL")
	restarts := steadyCommits(t, db, 1500, func(int64) {})
	st := db.CheckpointStats()
	passes := st.Passes.Load()
	require.Greater(t, restarts, 3, "the WAL never restarted")
	t.Logf("%d passes (%d by commits) for %d restarts", passes, st.WriterPasses.Load(), restarts)
	require.LessOrEqual(t, passes, uint64(4*(restarts+1)),
		"%d passes (%d by commits) for %d restarts", passes, st.WriterPasses.Load(), restarts)
}

// With the checkpointer held up (a pass in progress), the commit that
// takes the WAL past 7/4 of its size at the commit that woke the
// checkpointer returns at once, and so do the transactions after it: they
// leave the copy to the first that finds no pass in progress. The commit
// that takes the WAL past twice that bound returns at once too; the
// writer's next transaction waits for the checkpointer before it begins,
// copies the WAL itself, and restarts it.
func TestCheckpointCommitCatchesUp(t *testing.T) {
	db, k := heldPass(t)
	woke := k.frames.Load()
	require.GreaterOrEqual(t, woke, int64(100))
	committed := make(chan struct{})
	var due, beyond, must bool
	go func() {
		defer close(committed)
		i := 1
		for ; !k.due; i++ {
			putRows(t, db, i*100, 100, 1000)
		}
		due = k.frames.Load() >= woke*7/4
		putRows(t, db, i*100, 100, 1000) // begins past the bound: does not wait
		i++
		beyond = k.due && !k.must
		for ; !k.must; i++ {
			putRows(t, db, i*100, 100, 1000)
		}
		must = k.due && k.frames.Load() >= woke*7/2
	}()
	select {
	case <-committed:
	case <-time.After(10 * time.Second):
		k.mu.Unlock()
		t.Fatal("a transaction waited for the checkpointer below twice the WAL's bound")
	}
	require.True(t, due, "the WAL's bound came before 7/4 of the WAL that woke the checkpointer")
	require.True(t, beyond, "a transaction past the bound did not leave the copy for later")
	require.True(t, must, "twice the bound came too early or left the copy undone")
	past := k.frames.Load()
	require.Zero(t, k.stats.WriterPasses.Load(), "a commit copied the WAL")
	require.Zero(t, k.stats.WriterWaits.Load())

	done := putRowsAsync(t, db, 9000, 1, 100)
	select {
	case <-done:
		k.mu.Unlock()
		t.Fatal("the next transaction did not wait for the checkpointer")
	case <-time.After(300 * time.Millisecond):
	}
	require.Zero(t, k.stats.Passes.Load())
	k.mu.Unlock()
	<-done
	require.Equal(t, uint64(1), k.stats.WriterWaits.Load())
	require.Equal(t, uint64(1), k.stats.WriterPasses.Load(), "the next transaction did not copy the WAL")
	require.Less(t, k.frames.Load(), past, "the transaction after the copy did not restart the WAL")
}

// A transaction past the WAL's bound that found a pass in progress left
// the copy for later: once the pass has ended, the next transaction
// copies what the pass left, without waiting, and restarts the WAL; the
// pass, seeing the WAL past its bound, did not pass again.
func TestCheckpointCopiesAfterThePassInProgress(t *testing.T) {
	db, k := heldPass(t)
	i := 1
	for ; !k.due; i++ {
		putRows(t, db, i*100, 100, 1000)
	}
	putRows(t, db, i*100, 100, 1000) // a pass in progress: no copy
	require.Zero(t, k.stats.WriterPasses.Load())
	past := k.frames.Load()
	k.mu.Unlock()
	require.Eventually(t, func() bool { return k.stats.Passes.Load() == 1 && !k.passing.Load() },
		10*time.Second, time.Millisecond, "the held pass did not run")
	putRows(t, db, 9000, 1, 100)
	require.Equal(t, uint64(1), k.stats.WriterPasses.Load(), "the transaction after the pass did not copy the WAL")
	require.Zero(t, k.stats.WriterWaits.Load())
	require.Equal(t, uint64(1), k.stats.Passes.Load()-k.stats.WriterPasses.Load(), "the checkpointer passed again")
	require.Less(t, k.frames.Load(), past, "the transaction after the copy did not restart the WAL")
}

// cacheUsed returns the bytes of c's page cache (SQLITE_DBSTATUS_CACHE_USED).
func cacheUsed(c *Conn) int64 {
	p := sqlite3.Xsqlite3_malloc64(c.tls, 8)
	defer sqlite3.Xsqlite3_free(c.tls, p)
	sqlite3.Xsqlite3_db_status(c.tls, c.db, sqlite3.SQLITE_DBSTATUS_CACHE_USED, p, p+4, 0)
	return int64(*(*int32)(cptr(p)))
}

// A reader that read pages from the WAL (a transaction begun before the
// checkpointer copied them) gives its page cache back at its first
// transaction after the copy: with the file mapped, those pages are never
// read from the cache again.
func TestReaderDropsWALPagesAfterCheckpoint(t *testing.T) {
	db, k := heldPass(t)
	c, err := db.AcquireSnapshot(context.Background(), ReadMulti)
	require.NoError(t, err)
	rows, err := c.Query(context.Background(), "SELECT v FROM t")
	require.NoError(t, err)
	for rows.Next() {
	}
	require.NoError(t, rows.Close())
	filled := cacheUsed(c)
	require.Greater(t, filled, int64(200<<10), "the reader did not read the WAL's pages into its cache")
	db.ReleaseSnapshot(c)
	k.mu.Unlock()
	waitComplete(t, db, 1)

	c, err = db.AcquireSnapshot(context.Background(), ReadPoint)
	require.NoError(t, err)
	defer db.ReleaseSnapshot(c)
	require.Less(t, cacheUsed(c), filled/4, "the reader kept the WAL's pages after the copy")
}

// A held read transaction begun while the WAL held frames the database
// file did not is not reused once the checkpointer has copied them: a new
// one reads the file alone.
func TestHeldReadEndsAfterCheckpoint(t *testing.T) {
	db, k := heldPass(t)
	readV(t, db, 1) // begins a read transaction on the WAL
	held := db.Stats.HeldReads.Load()
	readV(t, db, 1)
	require.Equal(t, held+1, db.Stats.HeldReads.Load(), "the held transaction was not reused")
	k.mu.Unlock()
	waitComplete(t, db, 1)
	readV(t, db, 1)
	require.Equal(t, held+1, db.Stats.HeldReads.Load(), "a held transaction outlived the checkpoint")
	readV(t, db, 1)
	require.Equal(t, held+2, db.Stats.HeldReads.Load(), "the new transaction is not held")
}

// An explicit checkpoint on the writer (WithWriter) waits for a pass in
// progress instead of finding its lock taken.
func TestExplicitCheckpointWaitsForPass(t *testing.T) {
	db, path := ckptDB(t, 100)
	for i := range 5 {
		putRows(t, db, i*400, 400, 1000) // each wakes the checkpointer
		withWriter(t, db, func(c *Conn) {
			rows, err := c.Query(context.Background(), "PRAGMA wal_checkpoint(TRUNCATE)")
			require.NoError(t, err)
			require.True(t, rows.Next())
			require.Zero(t, rows.Int(0), "the checkpoint was busy")
			require.NoError(t, rows.Close())
		})
		require.Zero(t, fileSize(t, path+"-wal"))
	}
}

// Close stops the checkpointer's goroutine and closes its connection,
// then folds the WAL back into the file as before.
func TestCloseStopsCheckpointer(t *testing.T) {
	db, path := ckptDB(t, 100)
	k := db.ckpt
	putRows(t, db, 0, 2000, 1000)
	require.True(t, k.started.Load())
	require.NoError(t, db.Close())
	select {
	case <-k.done:
	default:
		t.Fatal("the checkpointer's goroutine still runs")
	}
	require.Nil(t, k.conn)
	_, ok := walHooks.Load(k.id)
	require.False(t, ok, "the WAL hook's entry outlived the DB")
	_, err := os.Stat(path + "-wal")
	if err == nil {
		require.Zero(t, fileSize(t, path+"-wal"), "Close left WAL frames")
	}
}

// Stores without a WAL or a writer, or with automatic checkpoints off, get
// no checkpointer; with them off, the WAL is never checkpointed. (An
// in-memory store is a WAL store and gets one: memory_test.go.)
func TestNoCheckpointer(t *testing.T) {
	dir := t.TempDir()
	for name, cfg := range map[string]Config{
		"rollback": {Path: filepath.Join(dir, "r.db"), Journal: "DELETE"},
		"off":      {Path: filepath.Join(dir, "o.db"), Journal: "WAL", AutoCheckpoint: -1},
	} {
		t.Run(name, func(t *testing.T) {
			cfg.Sync, cfg.BusyTimeout = "NORMAL", time.Second
			db, err := Open(cfg)
			require.NoError(t, err)
			defer db.Close()
			require.Nil(t, db.ckpt)
			require.Nil(t, db.CheckpointStats())
			withWriter(t, db, func(c *Conn) {
				require.NoError(t, db.SetJournalMode(context.Background(), c))
				require.NoError(t, c.ExecScript(context.Background(), "CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)"))
			})
			for i := range 20 { // about 2,000 pages in 20 commits
				putRows(t, db, i*400, 400, 1000)
			}
			if name == "off" {
				withWriter(t, db, func(c *Conn) {
					rows, err := c.Query(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)")
					require.NoError(t, err)
					require.True(t, rows.Next())
					require.Greater(t, rows.Int(1), int64(1500), "the WAL was checkpointed and restarted with automatic checkpoints off")
					require.NoError(t, rows.Close())
				})
			}
		})
	}
	ro, err := Open(Config{Path: filepath.Join(dir, "o.db"), ReadOnly: true, Journal: "WAL", Sync: "NORMAL", BusyTimeout: time.Second})
	require.NoError(t, err)
	defer ro.Close()
	require.Nil(t, ro.ckpt)
}

// The checkpointer's connection syncs as the writer's checkpoints would,
// and does not load the schema (a copy per connection).
func TestCheckpointConnection(t *testing.T) {
	ctx := context.Background()
	for _, sync := range []string{"NORMAL", "FULL", "OFF"} {
		t.Run(sync, func(t *testing.T) {
			db, err := Open(Config{Path: filepath.Join(t.TempDir(), "c.db"), Journal: "WAL", Sync: sync, BusyTimeout: time.Second})
			require.NoError(t, err)
			defer db.Close()
			withWriter(t, db, func(c *Conn) {
				require.NoError(t, db.SetJournalMode(ctx, c))
				require.NoError(t, c.ExecScript(ctx, "CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)"))
			})
			c, err := db.openCheckpointConn()
			require.NoError(t, err)
			defer c.close()
			if sync != "OFF" {
				p, err := c.scratch(8)
				require.NoError(t, err)
				sqlite3.Xsqlite3_db_status(c.tls, c.db, sqlite3.SQLITE_DBSTATUS_SCHEMA_USED, p, p+4, 0)
				require.Zero(t, *(*int32)(cptr(p)), "the checkpointer's connection loaded the schema")
			}
			level, err := c.QueryInt(ctx, "PRAGMA synchronous")
			require.NoError(t, err)
			if sync == "OFF" {
				require.Zero(t, level)
			} else {
				require.Positive(t, level) // NORMAL and above sync a checkpoint alike
			}
		})
	}
}

// Idle readers holding transactions begun before a complete pass do not
// keep the writer's next transaction from restarting the WAL (which a
// later commit would otherwise have to copy whole, catchUp).
func TestWALRestartsPastIdleHeldReaders(t *testing.T) {
	db, k := heldPass(t)
	readV(t, db, 1) // a held transaction on the WAL not yet copied, idle in the pool
	k.mu.Unlock()
	waitComplete(t, db, 1)
	frames, backfilled := walFrames(t, db)
	require.Equal(t, frames, backfilled, "the pass did not copy the whole WAL")
	putRows(t, db, 1000, 5, 100)
	after, _ := walFrames(t, db)
	require.Less(t, after, frames, "the idle reader kept the WAL from restarting")
}

// Commits made while a pass runs wake none; the checkpointer copies them
// after it, without waiting for another commit.
func TestCheckpointCopiesCommitsMadeDuringAPass(t *testing.T) {
	db, k := heldPass(t)
	first := k.frames.Load()
	// A reader keeps the WAL from restarting at the next commit, as a
	// commit made during the pass finds it (not yet all copied); it goes
	// back to the pool holding its transaction, which the commit made
	// stale.
	rtx, err := db.Begin(context.Background(), false)
	require.NoError(t, err)
	// The first pass's end waits for the test to commit and end the
	// reader (on this goroutine, where require may stop the test).
	passed, committed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	after := func() {
		once.Do(func() {
			close(passed)
			<-committed
		})
	}
	var release sync.Once
	t.Cleanup(func() { release.Do(func() { close(committed) }) }) // before the DB closes
	k.afterPass.Store(&after)
	k.mu.Unlock()
	<-passed
	putRows(t, db, 1000, 100, 1000)
	require.NoError(t, rtx.Rollback())
	release.Do(func() { close(committed) })
	require.Eventually(t, func() bool {
		frames, backfilled := walFrames(t, db)
		return frames > first && frames == backfilled
	}, 10*time.Second, time.Millisecond, "the commit made after the pass began is not copied")
}

// largeCommitThenBegin commits 400 rows, which wakes a pass, and begins a
// write transaction at once (rolled back before the DB closes).
func largeCommitThenBegin(t *testing.T, db *DB) *Tx {
	t.Helper()
	putRows(t, db, 0, 400, 1000)
	tx, err := db.Begin(context.Background(), true)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

// With one CPU for Go code, a pass woken by a commit waits for the write
// transaction begun after it to end, instead of competing with it.
func TestCheckpointOnOneCPUWaitsForTheWriter(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	db, _ := ckptDB(t, 100)
	stats := db.CheckpointStats()
	tx := largeCommitThenBegin(t, db)
	passes := stats.Passes.Load()
	// The checkpointer's goroutine gets the CPU at every Gosched.
	for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); {
		runtime.Gosched()
		require.Equal(t, passes, stats.Passes.Load(), "a pass ran inside the write transaction")
	}
	_, err := tx.Conn().Exec(context.Background(), "INSERT INTO t (k, v) VALUES (1000, x'00')")
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	waitComplete(t, db, 1)
}

// On any number of CPUs a pass waits for the writer to pause: a large
// commit followed at once by another write transaction is copied after
// that transaction, by one pass for both commits, which copies the pages
// both rewrote once.
func TestCheckpointWaitsForTheWriterToPause(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	db, _ := ckptDB(t, 100)
	stats := db.CheckpointStats()
	tx := largeCommitThenBegin(t, db)
	for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); {
		time.Sleep(time.Millisecond)
		require.Zero(t, stats.Passes.Load(), "a pass ran inside the write transaction")
	}
	v := make([]byte, 1000)
	for i := range 400 { // the same rows again
		_, err := tx.Conn().Exec(context.Background(), "INSERT OR REPLACE INTO t (k, v) VALUES (?1, ?2)", i, v)
		require.NoError(t, err)
	}
	require.NoError(t, tx.Commit())
	frames, _ := walFrames(t, db)
	waitComplete(t, db, 1)
	require.Equal(t, uint64(1), stats.Passes.Load(), "one pass for both commits")
	_, backfilled := walFrames(t, db)
	require.Equal(t, frames, backfilled, "the pass copied both commits")
}

// A writer that never pauses (two goroutines making large commits back to
// back, so that one always waits for the other's transaction) holds the
// pass off for one transaction only: the checkpointer still copies the
// WAL in the background, well before idleWait.
func TestCheckpointDoesNotWaitForAWriterThatNeverPauses(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	db, _ := ckptDB(t, 100)
	// A wait that ended at idleWait would end after 20 s here: the pass
	// must come at the end of a transaction, however long transactions
	// take on a loaded machine (under -race at load 10, two or three of
	// them took longer than the usual idleWait).
	db.ckpt.idleWaitTest.Store(int64(20 * time.Second))
	stats := db.CheckpointStats()
	background := func() uint64 { return stats.Passes.Load() - stats.WriterPasses.Load() }
	start := time.Now()
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; background() == 0 && time.Since(start) < 10*time.Second; i++ {
				putRows(t, db, g*2000+i%4*400, 400, 1000) // past the threshold on its own
			}
		}()
	}
	wg.Wait()
	require.NotZero(t, background(), "no pass of the checkpointer beside a writer that never pauses")
	require.Zero(t, db.ckpt.idleTimeouts.Load(), "the checkpointer waited for the writer to pause")
	t.Logf("the first pass after %v", time.Since(start))
}

// One large commit on a WAL that a smaller one had woken the
// checkpointer for is copied in the background: the bound of 7/4 is of
// the largest commit too, and the next transaction does not copy the WAL
// itself.
func TestCheckpointLargeCommitIsNotCopiedByTheNextTransaction(t *testing.T) {
	db, _ := ckptDB(t, 100)
	ctx := context.Background()
	// A read transaction on the empty WAL keeps every pass from copying,
	// so that the WAL does not restart between the two commits.
	c, err := db.AcquireSnapshot(ctx, ReadMulti)
	require.NoError(t, err)
	_, err = c.QueryInt(ctx, "SELECT count(*) FROM t")
	require.NoError(t, err)
	putRows(t, db, 0, 500, 1000) // past the threshold: wakes the checkpointer
	woke, _ := walFrames(t, db)
	require.GreaterOrEqual(t, woke, int64(100))
	putRows(t, db, 1000, 2000, 1000) // one commit of several times that
	frames, _ := walFrames(t, db)
	require.GreaterOrEqual(t, frames, woke*7/4, "the large commit is past 7/4 of the WAL that woke the checkpointer")
	require.False(t, db.ckpt.due, "the next transaction would copy the large commit itself")
	db.ReleaseSnapshot(c)
	putRows(t, db, 0, 1, 10)
	require.Zero(t, db.CheckpointStats().WriterPasses.Load())
}

// A pass woken by a large commit also waits for the store's reads to
// pause (none in progress, none begun for idleGap), on one CPU and on
// more, and for no longer than idleWait when they never do.
func TestCheckpointWaitsForIdleReads(t *testing.T) {
	for _, procs := range []int{1, 2} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			db, _ := ckptDB(t, 100)
			stats := db.CheckpointStats()
			ctx := context.Background()
			// A read in progress all along; its snapshot, taken at its
			// first statement, holds the commit below, so a pass can copy
			// the whole WAL.
			c, err := db.AcquireSnapshot(ctx, ReadMulti)
			require.NoError(t, err)
			putRows(t, db, 0, 400, 1000) // wakes a pass
			n, err := c.QueryInt(ctx, "SELECT count(*) FROM t")
			require.NoError(t, err)
			require.Equal(t, int64(400), n)
			start := time.Now()
			for time.Since(start) < idleWait/2 {
				time.Sleep(time.Millisecond)
				require.Zero(t, stats.Passes.Load(), "a pass ran during a read after %v", time.Since(start))
			}
			waitComplete(t, db, 1) // once idleWait is over
			require.GreaterOrEqual(t, time.Since(start), idleWait/2)
			db.ReleaseSnapshot(c)

			// With reads paused, a pass runs at once.
			putRows(t, db, 400, 400, 1000)
			start = time.Now()
			waitComplete(t, db, 2)
			require.Less(t, time.Since(start), idleWait/2, "a pass waited with the store idle")
		})
	}
}

// Reads that keep beginning hold a pass off, but not past the commit that
// leaves the WAL past its bound: the pass then runs at once, in the
// background, rather than leaving the whole WAL to the writer's next
// transaction.
func TestCheckpointPastItsBoundDoesNotWaitForReads(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	db, _ := ckptDB(t, 100)
	stats := db.CheckpointStats()
	ctx := context.Background()
	stop := make(chan struct{})
	reading := make(chan struct{})
	go func() {
		defer close(reading)
		for {
			select {
			case <-stop:
				return
			default:
			}
			c, err := db.AcquireSnapshot(ctx, ReadMulti)
			if err != nil {
				return
			}
			db.ReleaseSnapshot(c)
		}
	}()
	defer func() { close(stop); <-reading }()
	woke := time.Now()
	putRows(t, db, 0, 400, 1000) // wakes a pass, which waits for the reads
	time.Sleep(20 * time.Millisecond)
	require.Zero(t, stats.Passes.Load(), "a pass ran beside the reads")
	for i := 1; !db.ckpt.overdue.Load(); i++ { // until the next transaction would copy the WAL
		putRows(t, db, i*400, 400, 1000)
	}
	start := time.Now()
	if start.Sub(woke) > idleWait/2 {
		t.Skipf("the commits took %v: the pass may have run for idleWait instead", start.Sub(woke))
	}
	waitComplete(t, db, 1)
	require.Less(t, time.Since(start), idleWait/3, "the pass waited for the reads past the WAL's bound")
	require.Zero(t, stats.WriterPasses.Load())
}

// putRowsAsync runs putRows(t, db, args…) on a goroutine of its own and
// returns a channel closed when it returns.
func putRowsAsync(t *testing.T, db *DB, from, n, size int) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		putRows(t, db, from, n, size)
	}()
	return done
}

// steadyCommits makes n one-row commits of 100 bytes (over 500 keys),
// calls seen with the WAL's frame count after each, and returns how many
// times the WAL restarted from its start.
func steadyCommits(t *testing.T, db *DB, n int, seen func(frames int64)) int {
	restarts, last := 0, int64(0)
	for i := range n {
		putRows(t, db, i%500, 1, 100)
		f := db.ckpt.frames.Load()
		if f < last {
			restarts++
		}
		last = f
		seen(f)
	}
	return restarts
}

// heldPass returns a store (threshold 100 pages) whose checkpointer was
// woken by a commit of 400 pages and is held up (k.mu locked: the test
// unlocks it to let the pass run).
func heldPass(t *testing.T) (*DB, *checkpointer) {
	t.Helper()
	db, _ := ckptDB(t, 100)
	k := db.ckpt
	k.mu.Lock()
	putRows(t, db, 0, 400, 1000)
	return db, k
}

// pageRow is a value size that puts one row of t in each page.
const pageRow = 3000

// A run of commits (HoldCheckpoints, as the batched purge opens) wakes no
// pass and copies nothing itself while its WAL stays below its bound;
// past it the writer copies the WAL before its next transaction, which
// restarts it, so the WAL stays bounded however long the run; once the
// run ends one pass copies what it left. A reader sees every commit at
// once meanwhile.
func TestCheckpointRunHoldsPassesAndBoundsTheWAL(t *testing.T) {
	const threshold = 100
	db, _ := ckptDB(t, threshold)
	st := db.CheckpointStats()
	ctx := context.Background()
	release := db.HoldCheckpoints()
	var top int64
	const commits, rows = 150, 40 // 40 pages a commit: 6,000 pages in all
	for i := range commits {
		putRows(t, db, i*rows, rows, pageRow)
		top = max(top, db.ckpt.frames.Load())
		require.NoError(t, db.WithReader(ctx, func(c *Conn) error {
			rs, err := c.Query(ctx, "SELECT count(*) FROM t")
			require.NoError(t, err)
			require.True(t, rs.Next())
			require.Equal(t, int64((i+1)*rows), rs.Int(0), "a reader did not see commit %d", i)
			return rs.Close()
		}))
	}
	require.Greater(t, top, int64(holdBound*threshold), "the run never reached its bound")
	require.Less(t, top, int64(holdBound*threshold+2*rows), "the WAL outgrew the run's bound")
	require.Zero(t, st.Passes.Load()-st.WriterPasses.Load(), "a pass ran during the run")
	require.GreaterOrEqual(t, st.WriterPasses.Load(), uint64(commits*rows/(holdBound*threshold+2*rows)),
		"the writer did not copy the WAL at the bound")
	require.Less(t, st.WriterPasses.Load(), uint64(commits*rows/(holdBound*threshold)+2),
		"the writer copied the WAL before the bound")

	// The run's end wakes one pass, which copies the rest.
	writer, complete := st.WriterPasses.Load(), st.Complete.Load()
	frames := db.ckpt.frames.Load()
	require.GreaterOrEqual(t, frames, int64(threshold))
	release()
	release() // a second call does nothing
	waitComplete(t, db, complete+1)
	time.Sleep(20 * time.Millisecond)
	require.Equal(t, uint64(1), st.Passes.Load()-st.WriterPasses.Load(), "one pass after the run")
	require.Equal(t, writer, st.WriterPasses.Load())
	_, backfilled := walFrames(t, db)
	require.Equal(t, frames, backfilled, "the pass did not copy the run's WAL")
	require.False(t, db.ckpt.holding.Load())
}

// A run's bound counts from the WAL it began on: the WAL a large
// transaction left before the run is copied with the run's commits, not
// by the run's first commit.
func TestCheckpointRunBoundCountsFromItsStart(t *testing.T) {
	const threshold = 100
	db, _ := ckptDB(t, threshold)
	st := db.CheckpointStats()
	release := db.HoldCheckpoints()
	putRows(t, db, 0, 2*holdBound*threshold/3, pageRow) // a WAL of 2/3 of the bound
	release()
	waitComplete(t, db, 1)
	require.Zero(t, st.WriterPasses.Load())

	// Held readers cannot keep the WAL from restarting: a write restarts it.
	putRows(t, db, 0, 1, 10)
	require.Less(t, db.ckpt.frames.Load(), int64(threshold), "the WAL did not restart")
	putRows(t, db, 0, 2*holdBound*threshold/3, pageRow)
	base := db.ckpt.frames.Load()
	require.Greater(t, base, int64(holdBound*threshold/2))
	release = db.HoldCheckpoints()
	defer release()
	for i := range holdBound * threshold / 2 / 40 {
		putRows(t, db, 10_000+i*40, 40, pageRow)
	}
	require.Greater(t, db.ckpt.frames.Load(), int64(holdBound*threshold))
	require.Zero(t, st.WriterPasses.Load(), "a commit below the run's bound copied the WAL")
}

// Runs overlap: the hold lasts until the last one ends, and a store
// without a checkpointer gives a release that does nothing.
func TestCheckpointRunsOverlap(t *testing.T) {
	db, _ := ckptDB(t, 100)
	st := db.CheckpointStats()
	r1 := db.HoldCheckpoints()
	r2 := db.HoldCheckpoints()
	putRows(t, db, 0, 400, pageRow)
	r1()
	time.Sleep(20 * time.Millisecond)
	require.Zero(t, st.Passes.Load(), "a pass ran while a run was open")
	r2()
	waitComplete(t, db, 1)

	path := filepath.Join(t.TempDir(), "n.db")
	nd, err := Open(Config{Path: path, Journal: "WAL", Sync: "NORMAL", BusyTimeout: time.Second, AutoCheckpoint: -1})
	require.NoError(t, err)
	defer nd.Close()
	require.Nil(t, nd.ckpt)
	nd.HoldCheckpoints()()
}

// Close ends a pass that waits for a run which never ends.
func TestCloseEndsAPassWaitingForARun(t *testing.T) {
	db, _ := ckptDB(t, 100)
	db.HoldCheckpoints() // never released
	putRows(t, db, 0, 400, pageRow)
	k := db.ckpt
	require.True(t, k.passing.CompareAndSwap(false, true))
	k.wake() // a pass woken before the run: it waits for its end
	time.Sleep(20 * time.Millisecond)
	require.Zero(t, k.stats.Passes.Load())
	testutil.ReturnsWithin(t, 10*time.Second, "Close waited for the run", db.Close)
}

// After the WAL restarts, small commits count as small: the salt the
// writer compares is the new WAL's at once, so that no commit of the new
// cycle is taken for a restart and counted whole as the largest commit
// (which would raise the WAL's bound to twice the threshold).
func TestCheckpointRestartKeepsCommitsSmall(t *testing.T) {
	const threshold = 100
	db, _ := ckptDB(t, threshold)
	var biggest int64
	restarts := steadyCommits(t, db, 1500, func(int64) {
		biggest = max(biggest, db.ckpt.big) // the writer's field, read between its commits
	})
	require.Greater(t, restarts, 3, "the WAL never restarted")
	require.Less(t, biggest, int64(threshold/4), "a small commit after a restart counted as large")
}
