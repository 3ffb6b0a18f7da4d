package timelog_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

func TestOneWriterAndReadOnly(t *testing.T) {
	db, path := openStore(t)
	l := openLog(t, db, "w", manual(timelog.Options{}))
	_, err := timelog.Open(context.Background(), db, "w", timelog.Options{})
	require.ErrorIs(t, err, timelog.ErrLocked)
	// Another store handle on the file (as another process would be).
	other, err := kvstore.Open(path, sealedOpts(kvstore.Options{}))
	require.NoError(t, err)
	defer other.Close()
	_, err = timelog.Open(context.Background(), other, "w", timelog.Options{})
	require.ErrorIs(t, err, timelog.ErrLocked)
	// A read-only open sees what is flushed, not the writer's buffer.
	ro, err := timelog.Open(context.Background(), other, "w", timelog.Options{ReadOnly: true})
	require.NoError(t, err)
	defer ro.Close()
	require.NoError(t, l.Append(1, 1))
	require.Empty(t, collect(t, ro.All()))
	require.NoError(t, l.Flush(ctx))
	require.Equal(t, recs(1, 1), collect(t, ro.All()))
	require.ErrorIs(t, ro.Append(2, 2), timelog.ErrReadOnly)
	require.ErrorIs(t, ro.Flush(ctx), timelog.ErrReadOnly)
	_, err = timelog.Open(context.Background(), other, "missing", timelog.Options{ReadOnly: true})
	require.ErrorIs(t, err, timelog.ErrNotFound)
	// After Close the lock is free.
	require.NoError(t, l.Close())
	require.ErrorIs(t, l.Close(), timelog.ErrClosed)
	l2, err := timelog.Open(context.Background(), other, "w", manual(timelog.Options{}))
	require.NoError(t, err)
	require.NoError(t, l2.Close())
	require.ErrorIs(t, timelog.Drop(ctx, db, "missing"), timelog.ErrNotFound)
}

func TestListAndCatalog(t *testing.T) {
	db, _ := openStore(t)
	openLog(t, db, "b", manual(timelog.Options{}))
	openLog(t, db, "a", manual(timelog.Options{}))
	names, err := timelog.List(context.Background(), db)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, names)
	cfs, err := db.ListColumnFamilies()
	require.NoError(t, err)
	require.Equal(t, []string{"default"}, cfs)
	require.NoError(t, db.IntegrityCheck(ctx))
	_, err = timelog.Open(context.Background(), db, "", timelog.Options{})
	require.ErrorIs(t, err, kvstore.ErrInvalidName)
	_, err = timelog.Open(context.Background(), db, "x", timelog.Options{MemtableMaxBytes: -1})
	require.ErrorIs(t, err, timelog.ErrInvalidOption)
}

func TestInMemoryStore(t *testing.T) {
	db, err := kvstore.Open("", sealedOpts(kvstore.Options{}))
	require.NoError(t, err)
	defer db.Close()
	l, err := timelog.Open(context.Background(), db, "mem", manual(timelog.Options{}))
	require.NoError(t, err)
	_, err = timelog.Open(context.Background(), db, "mem", timelog.Options{})
	require.ErrorIs(t, err, timelog.ErrLocked)
	require.NoError(t, l.Append(1, 1))
	require.NoError(t, l.Close())
}

// TestCloseAfterTheStoreClosed: a log whose store was closed under it
// with records still buffered can never flush them. Close says so (the
// store's ErrClosed, naming what was lost) and still closes the log and
// lets its writer lock go: before, every Close failed and left the log
// open, so the log stayed locked (ErrLocked) for the life of the process,
// even on the same file opened again. A Background log is closed the same
// way, its maintenance stopped.
func TestCloseAfterTheStoreClosed(t *testing.T) {
	for _, mode := range []timelog.MaintenanceMode{timelog.Manual, timelog.Background} {
		db, path := openStore(t)
		l, err := timelog.Open(context.Background(), db, "w", timelog.Options{Maintenance: mode})
		require.NoError(t, err)
		require.NoError(t, l.AppendBatch(recs(1, 1, 2, 2)))
		require.NoError(t, l.DeleteRange(0, 1))
		require.NoError(t, db.Close())

		err = l.Close()
		require.ErrorIs(t, err, timelog.ErrClosed)
		require.ErrorIs(t, err, kvstore.ErrClosed)
		require.ErrorContains(t, err, "2 buffered records and 1 delete not written")
		require.ErrorIs(t, l.Close(), timelog.ErrClosed)
		require.ErrorIs(t, l.Append(3, 3), timelog.ErrClosed)

		again, err := kvstore.Open(path, sealedOpts(kvstore.Options{}))
		require.NoError(t, err)
		l2, err := timelog.Open(context.Background(), again, "w", manual(timelog.Options{}))
		require.NoError(t, err, "the writer lock was let go")
		require.Empty(t, collect(t, l2.All()))
		require.NoError(t, l2.Close())
		require.NoError(t, again.Close())
	}
}
