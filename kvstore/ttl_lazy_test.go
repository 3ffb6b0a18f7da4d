package kvstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // database/sql driver, to inspect the hidden tables as another tool would
)

// Lazy expiry: a read that meets an expired key deletes it (every row of
// its TTL state), without committing a caller's transaction or waiting for
// another writer.

func TestTTLLazyDeleteOnReadRemovesAllRows(t *testing.T) {
	ctx := context.Background()
	reads := []struct {
		name string
		read func(cf *kvstore.ColumnFamily, key []byte) error
	}{
		{"Get", func(cf *kvstore.ColumnFamily, key []byte) error { _, err := cf.Get(key); return err }},
		{"GetTTL", func(cf *kvstore.ColumnFamily, key []byte) error { _, _, err := cf.GetTTL(key); return err }},
		{"TTL", func(cf *kvstore.ColumnFamily, key []byte) error { _, err := cf.TTL(key); return err }},
		{"Exists", func(cf *kvstore.ColumnFamily, key []byte) error {
			ok, err := cf.Exists(key)
			if err == nil && !ok {
				err = kvstore.ErrNotFound
			}
			return err
		}},
		{"GetMany", func(cf *kvstore.ColumnFamily, key []byte) error {
			vs, err := cf.GetMany([][]byte{[]byte("keep"), key})
			if err != nil {
				return err
			}
			if string(vs[0]) != "v" {
				return fmt.Errorf("GetMany: live key gave %q", vs[0])
			}
			if vs[1] != nil {
				return fmt.Errorf("GetMany: expired key gave %q", vs[1])
			}
			return kvstore.ErrNotFound
		}},
	}
	for _, r := range reads {
		t.Run(r.name, func(t *testing.T) {
			f := newTTLFixture(t)
			for _, cf := range []*kvstore.ColumnFamily{f.db.Default(), f.cf(t, "named")} {
				name := cf.Name()
				require.NoError(t, cf.PutTTL([]byte("gone"), []byte("x"), time.Second))
				require.NoError(t, cf.PutTTL([]byte("later"), []byte("y"), time.Hour))
				require.NoError(t, cf.Put([]byte("keep"), []byte("v")))
				require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, name, "gone"))
				require.Equal(t, [3]int64{3, 2, 2}, ttlCounts(t, f.path, name))

				f.clk.Advance(2 * time.Second)
				before := f.stats(t).ExpiredOnRead
				require.ErrorIs(t, r.read(cf, []byte("gone")), kvstore.ErrNotFound)
				require.Equal(t, before+1, f.stats(t).ExpiredOnRead)

				// Outside a transaction the read deleted the key from all
				// three tables, and nothing else.
				require.Equal(t, [3]int64{0, 0, 0}, ttlKeyRows(t, f.path, name, "gone"))
				require.Equal(t, [3]int64{2, 1, 1}, ttlCounts(t, f.path, name))
				ttlGet(t, cf, "keep", "v")
				ttlGet(t, cf, "later", "y")
				n, err := cf.PurgeExpired(ctx)
				require.NoError(t, err)
				require.Zero(t, n, "nothing is left to purge")
			}
			f.check(t)
		})
	}
}

// The reference commits the caller's open write transaction when a read in
// it meets an expired key. Here the deletion joins the transaction: if the
// transaction rolls back, so do its writes and the deletion.
func TestTTLReadNeverCommitsCallerTx(t *testing.T) {
	ctx := context.Background()
	errAbort := errors.New("abort")

	t.Run("Update", func(t *testing.T) {
		f := newTTLFixture(t)
		require.NoError(t, f.db.PutTTL([]byte("old"), []byte("v"), time.Second))
		f.clk.Advance(time.Second)
		err := f.db.Update(ctx, func(tx *kvstore.Tx) error {
			require.NoError(t, tx.Put([]byte("new"), []byte("v")))
			_, err := tx.Get([]byte("old"))
			require.ErrorIs(t, err, kvstore.ErrNotFound)
			// The transaction is still open and still sees its write.
			ttlGet(t, tx.Default(), "new", "v")
			require.NoError(t, tx.Put([]byte("newer"), []byte("v")))
			return errAbort
		})
		require.ErrorIs(t, err, errAbort)
		ttlGone(t, f.db.Default(), "new")
		ttlGone(t, f.db.Default(), "newer")
		require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, ttlDef, "old"), "the lazy delete rolled back too")

		// Committed, the deletion sticks.
		require.NoError(t, f.db.Update(ctx, func(tx *kvstore.Tx) error {
			_, err := tx.Get([]byte("old"))
			require.ErrorIs(t, err, kvstore.ErrNotFound)
			return nil
		}))
		require.Equal(t, [3]int64{0, 0, 0}, ttlKeyRows(t, f.path, ttlDef, "old"))
		f.check(t)
	})

	t.Run("BeginRollback", func(t *testing.T) {
		f := newTTLFixture(t)
		cf := f.cf(t, "c")
		require.NoError(t, cf.PutTTL([]byte("old"), []byte("v"), time.Second))
		f.clk.Advance(time.Second)
		tx, err := f.db.Begin(ctx, true)
		require.NoError(t, err)
		require.NoError(t, tx.CF(cf).Put([]byte("new"), []byte("v")))
		for _, read := range []func() error{
			func() error { _, err := tx.CF(cf).Get([]byte("old")); return err },
			func() error { _, err := tx.CF(cf).TTL([]byte("old")); return err },
			func() error { _, _, err := tx.CF(cf).GetTTL([]byte("old")); return err },
		} {
			require.ErrorIs(t, read(), kvstore.ErrNotFound)
		}
		require.Equal(t, []string{"new"}, ttlCollect(t, tx.CF(cf).All()))
		require.NoError(t, tx.Rollback())
		ttlGone(t, cf, "new")
		require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, "c", "old"))
		f.check(t)
	})

	// A store-level read while this goroutine holds a write transaction
	// neither waits for the writer nor touches the transaction: the deletion
	// is left for later.
	t.Run("StoreReadDuringWriteTx", func(t *testing.T) {
		f := newTTLFixture(t)
		require.NoError(t, f.db.PutTTL([]byte("old"), []byte("v"), time.Second))
		f.clk.Advance(time.Second)
		tx, err := f.db.Begin(ctx, true)
		require.NoError(t, err)
		require.NoError(t, tx.Put([]byte("new"), []byte("v")))
		start := time.Now()
		ttlGone(t, f.db.Default(), "old")
		require.Equal(t, []string(nil), ttlCollect(t, f.db.All()))
		require.Less(t, time.Since(start), 4*time.Second, "the read did not wait for the busy writer")
		require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, ttlDef, "old"), "left for later")
		require.NoError(t, tx.Rollback())
		ttlGone(t, f.db.Default(), "new")
		ttlGone(t, f.db.Default(), "old")
		require.Equal(t, [3]int64{0, 0, 0}, ttlKeyRows(t, f.path, ttlDef, "old"), "deleted by a read once the writer is free")
		f.check(t)
	})
}

// A read that meets an expired key while another process holds the file's
// write lock hides the key at once and leaves its deletion for later: it
// never waits for the lock.
func TestTTLExpiredReadDoesNotWaitForOtherWriter(t *testing.T) {
	clk := kvstore.NewManualClock(ttlStart)
	f := &ttlFixture{path: filepath.Join(t.TempDir(), "ttl.db"), clk: clk,
		opts: kvstore.Options{Clock: clk, BusyTimeout: 3 * time.Second}}
	f.open(t)
	require.NoError(t, f.db.PutTTL([]byte("k"), []byte("v"), time.Second))
	clk.Advance(2 * time.Second)

	// Another process's writer, as the sqlite3 shell would hold it.
	other, err := sql.Open("sqlite", "file:"+f.path+"?_pragma=busy_timeout(0)")
	require.NoError(t, err)
	defer other.Close()
	ctx := context.Background()
	conn, err := other.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE")
	require.NoError(t, err)

	start := time.Now()
	_, err = f.db.Get([]byte("k"))
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	require.Less(t, time.Since(start), time.Second, "the read waited for the other writer")

	_, err = conn.ExecContext(ctx, "ROLLBACK")
	require.NoError(t, err)
	// The key is still on disk, hidden, until a purge removes it.
	require.Equal(t, [3]int64{1, 1, 1}, ttlCounts(t, f.path, "default"))
	ttlPurge(t, f.db, 1)
	require.Equal(t, [3]int64{0, 0, 0}, ttlCounts(t, f.path, "default"))
}
