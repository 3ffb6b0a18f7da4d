package kvstore_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// fillValues writes n keys of size bytes each into cf in one batch.
func fillValues(t *testing.T, cf *kvstore.ColumnFamily, prefix string, n, size int) {
	t.Helper()
	var bt kvstore.Batch
	for i := range n {
		bt.Put([]byte(fmt.Sprintf("%s%05d", prefix, i)), bytes.Repeat([]byte{byte(i)}, size))
	}
	require.NoError(t, cf.Apply(context.Background(), &bt))
}

func TestCheckpoint(t *testing.T) {
	ctx := context.Background()
	t.Run("wal", func(t *testing.T) {
		db := openTemp(t, kvstore.Options{WALAutoCheckpoint: -1})
		for _, mode := range []kvstore.CheckpointMode{kvstore.CheckpointPassive, kvstore.CheckpointFull, kvstore.CheckpointRestart, kvstore.CheckpointTruncate} {
			t.Run(mode.String(), func(t *testing.T) {
				fillValues(t, db.Default(), mode.String(), 50, 1000)
				st, err := db.Stats(ctx)
				require.NoError(t, err)
				require.Positive(t, st.WALSize, "automatic checkpoints are off: the WAL grows")
				res, err := db.Checkpoint(ctx, mode)
				require.NoError(t, err)
				require.False(t, res.Busy)
				require.Equal(t, res.WALFrames, res.Checkpointed, "with no reader in the way the whole WAL is copied")
				st, err = db.Stats(ctx)
				require.NoError(t, err)
				if mode == kvstore.CheckpointTruncate {
					require.Zero(t, st.WALSize, "TRUNCATE empties the WAL file")
				} else {
					require.Positive(t, res.WALFrames, "the frames written since the last checkpoint")
					require.GreaterOrEqual(t, st.WALSize, res.WALFrames*st.PageSize, "the WAL holds at least the frames reported")
				}
			})
		}
		// A reader holding an old snapshot holds the checkpoint back.
		fillValues(t, db.Default(), "pre", 10, 1000)
		_, err := db.Checkpoint(ctx, kvstore.CheckpointTruncate)
		require.NoError(t, err)
		tx, err := db.Begin(ctx, false)
		require.NoError(t, err)
		fillValues(t, db.Default(), "held", 50, 1000)
		res, err := db.Checkpoint(ctx, kvstore.CheckpointPassive)
		require.NoError(t, err)
		require.Positive(t, res.WALFrames)
		require.Less(t, res.Checkpointed, res.WALFrames, "frames past the reader's snapshot stay in the WAL")
		require.NoError(t, tx.Commit())
		res, err = db.Checkpoint(ctx, kvstore.CheckpointPassive)
		require.NoError(t, err)
		require.Equal(t, res.WALFrames, res.Checkpointed)
	})
	t.Run("delete journal", func(t *testing.T) {
		db := openTemp(t, kvstore.Options{Journal: kvstore.JournalDelete})
		require.NoError(t, db.Put(b("k"), b("v")))
		res, err := db.Checkpoint(ctx, kvstore.CheckpointFull)
		require.NoError(t, err)
		require.EqualValues(t, -1, res.WALFrames)
		require.EqualValues(t, -1, res.Checkpointed)
	})
}

func TestIncrementalVacuum(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t, kvstore.Options{})
	cf, err := db.CreateColumnFamily("big")
	require.NoError(t, err)
	fillValues(t, cf, "k", 400, 2000)
	require.NoError(t, db.Put(b("keep"), b("me")))
	_, err = db.Checkpoint(ctx, kvstore.CheckpointTruncate)
	require.NoError(t, err)
	full, err := db.Stats(ctx)
	require.NoError(t, err)
	require.NoError(t, cf.Clear())
	cleared, err := db.Stats(ctx)
	require.NoError(t, err)
	require.Greater(t, cleared.FreePages, int64(100), "deleting the values frees their pages")
	require.Equal(t, full.PageCount, cleared.PageCount, "freed pages stay in the file until vacuumed")

	require.NoError(t, db.IncrementalVacuum(ctx, 10))
	partial, err := db.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, cleared.FreePages-10, partial.FreePages, "a bounded vacuum returns that many pages")
	require.Less(t, partial.PageCount, cleared.PageCount)

	require.NoError(t, db.IncrementalVacuum(ctx, 0))
	vacuumed, err := db.Stats(ctx)
	require.NoError(t, err)
	require.Zero(t, vacuumed.FreePages)
	require.Less(t, vacuumed.PageCount, cleared.PageCount-100)
	_, err = db.Checkpoint(ctx, kvstore.CheckpointTruncate)
	require.NoError(t, err)
	vacuumed, err = db.Stats(ctx)
	require.NoError(t, err)
	require.Less(t, vacuumed.FileSize, full.FileSize, "the file shrinks")
	require.EqualValues(t, vacuumed.PageCount*vacuumed.PageSize, vacuumed.FileSize)

	v, err := db.Get(b("keep"))
	require.NoError(t, err)
	require.Equal(t, b("me"), v)
	require.NoError(t, db.IntegrityCheck(ctx))
}

func TestVacuum(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t, kvstore.Options{})
	users, err := db.CreateColumnFamily("users")
	require.NoError(t, err)
	fillValues(t, db.Default(), "d", 300, 1500)
	fillValues(t, users, "u", 20, 100)
	require.NoError(t, users.PutTTL(b("ttl"), b("v"), time.Hour))
	var bt kvstore.Batch
	for i := 0; i < 300; i += 2 {
		bt.Delete([]byte(fmt.Sprintf("d%05d", i)))
	}
	require.NoError(t, db.Apply(ctx, &bt))
	before := snapshotAll(t, db)
	st, err := db.Stats(ctx)
	require.NoError(t, err)
	require.Positive(t, st.FreePages)

	require.NoError(t, db.Vacuum(ctx))
	after, err := db.Stats(ctx)
	require.NoError(t, err)
	require.Zero(t, after.FreePages)
	require.Less(t, after.PageCount, st.PageCount)
	require.Equal(t, before, snapshotAll(t, db))
	require.NoError(t, db.IntegrityCheck(ctx))
	require.NoError(t, db.Put(b("after"), b("vacuum")))
}

// TestBackup: a backup taken while a writer keeps committing is a
// consistent, openable store; one taken at rest equals the source.
func TestBackup(t *testing.T) {
	ctx := context.Background()
	inEachKind(t, kvstore.Options{}, func(t *testing.T, db *kvstore.Store) {
		users, err := db.CreateColumnFamily("users")
		require.NoError(t, err)
		fillValues(t, users, "u", 200, 300)
		require.NoError(t, users.PutTTL(b("session"), b("s"), time.Hour))
		live, err := db.CreateColumnFamily("live")
		require.NoError(t, err)

		// The writer commits generation g as batchSize keys "g<g>/<j>".
		const batchSize = 10
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var writeErr error
		started := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := 0; ; g++ {
				var bt kvstore.Batch
				for j := range batchSize {
					bt.Put([]byte(fmt.Sprintf("g%05d/%d", g, j)), []byte(strconv.Itoa(g)))
				}
				if writeErr = live.Apply(ctx, &bt); writeErr != nil {
					return
				}
				if g == 2 {
					close(started)
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
		<-started
		dir := t.TempDir()
		during := filepath.Join(dir, "during.db")
		require.NoError(t, db.Backup(ctx, during))
		close(stop)
		wg.Wait()
		require.NoError(t, writeErr)

		copyDB := openAt(t, during, kvstore.Options{ReadOnly: true})
		require.NoError(t, copyDB.IntegrityCheck(ctx))
		names, err := copyDB.ListColumnFamilies()
		require.NoError(t, err)
		require.Equal(t, []string{"default", "live", "users"}, names)
		cu, err := copyDB.OpenColumnFamily("users")
		require.NoError(t, err)
		require.Equal(t, contents(t, users), contents(t, cu))
		cl, err := copyDB.OpenColumnFamily("live")
		require.NoError(t, err)
		got := contents(t, cl)
		require.NotEmpty(t, got)
		require.Zero(t, len(got)%batchSize, "whole batches only: %d keys", len(got))
		for i, e := range got {
			require.Equal(t, fmt.Sprintf("g%05d/%d", i/batchSize, i%batchSize), e.K, "generations are complete and contiguous")
			require.Equal(t, strconv.Itoa(i/batchSize), e.V)
		}
		ttl, err := cu.TTL(b("session"))
		require.NoError(t, err)
		require.Positive(t, ttl, "TTL state is in the backup")

		at := filepath.Join(dir, "at-rest.db")
		require.NoError(t, db.Backup(ctx, at))
		rest := openAt(t, at, kvstore.Options{})
		require.Equal(t, snapshotAll(t, db), snapshotAll(t, rest))
		require.NoError(t, rest.Put(b("writable"), b("copy")), "a backup is an ordinary store")

		// An existing destination is refused and left alone.
		existing := filepath.Join(dir, "existing")
		require.NoError(t, os.WriteFile(existing, []byte("precious"), 0o644))
		require.ErrorIs(t, db.Backup(ctx, existing), kvstore.ErrExists)
		data, err := os.ReadFile(existing)
		require.NoError(t, err)
		require.Equal(t, []byte("precious"), data)
	})
}

func TestIntegrityCheck(t *testing.T) {
	ctx := context.Background()
	inEachKind(t, kvstore.Options{}, func(t *testing.T, db *kvstore.Store) {
		require.NoError(t, db.IntegrityCheck(ctx), "an empty store")
		users, err := db.CreateColumnFamily("users")
		require.NoError(t, err)
		fillValues(t, users, "u", 100, 50)
		require.NoError(t, users.PutTTL(b("t"), b("v"), time.Hour))
		require.NoError(t, users.Delete(b("u00001")))
		_, err = db.CreateColumnFamily("dropme")
		require.NoError(t, err)
		require.NoError(t, db.DropColumnFamily("dropme"))
		require.NoError(t, db.IntegrityCheck(ctx))
	})
}

// TestStats: the counters move by what each operation did.
func TestStats(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t, kvstore.Options{})
	users, err := db.CreateColumnFamily("users")
	require.NoError(t, err)
	s0, err := db.Stats(ctx)
	require.NoError(t, err)

	require.NoError(t, db.Put(b("ab"), b("1234")))   // 6 bytes
	require.NoError(t, users.Put(b("c"), b("56")))   // 3 bytes
	_, err = users.PutIfAbsent(b("c"), b("ignored")) // no write
	require.NoError(t, err)
	_, err = db.Get(b("ab")) // hit, 4 bytes read
	require.NoError(t, err)
	_, err = users.Exists(b("c")) // hit, no value read
	require.NoError(t, err)
	_, err = db.Get(b("missing")) // miss
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	require.NoError(t, db.Delete(b("ab")))
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error { return tx.Put(b("x"), b("y")) })) // 2 bytes
	require.Len(t, contents(t, users), 1)                                                            // one iteration, 2 bytes read

	s1, err := db.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, s0.Puts+3, s1.Puts)
	require.Equal(t, s0.Gets+3, s1.Gets)
	require.Equal(t, s0.Hits+2, s1.Hits)
	require.Equal(t, s0.Misses+1, s1.Misses)
	require.Equal(t, s0.Deletes+1, s1.Deletes)
	require.Equal(t, s0.BytesWritten+6+3+2, s1.BytesWritten)
	require.Equal(t, s0.BytesRead+4+2, s1.BytesRead)
	require.Equal(t, s0.Iterators+1, s1.Iterators)
	require.GreaterOrEqual(t, s1.Commits, s0.Commits+4, "two puts, a delete and an Update committed")
	require.Equal(t, 2, s1.ColumnFamilies)
	require.EqualValues(t, 4096, s1.PageSize)
	require.Positive(t, s1.PageCount)
	require.Positive(t, s1.FileSize)
	require.Positive(t, s1.OpenReaders)

	require.Error(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		require.NoError(t, tx.Put(b("z"), b("zz")))
		return fmt.Errorf("abort")
	}))
	s2, err := db.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, s1.Rollbacks+1, s2.Rollbacks)
	require.Equal(t, s1.Commits, s2.Commits)
}
