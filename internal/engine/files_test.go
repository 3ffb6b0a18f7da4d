package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// otherUser opens its own connection on path, as another process would,
// switches the file to WAL and commits rows it never checkpoints: they live
// only in the -wal until that connection closes.
func otherUser(t *testing.T, path string) *Conn {
	t.Helper()
	dsn, err := fileURI(path)
	require.NoError(t, err)
	c, err := openConn(dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.close() })
	c.setBusyTimeout(time.Second)
	ctx := context.Background()
	for _, q := range []string{
		"PRAGMA journal_mode = WAL",
		"PRAGMA wal_autocheckpoint = 0",
		"CREATE TABLE IF NOT EXISTS other (id INTEGER PRIMARY KEY, v TEXT)",
		"INSERT INTO other (v) VALUES ('one'), ('two')",
	} {
		require.NoError(t, c.ExecScript(ctx, q), q)
	}
	return c
}

// countOther counts the other user's rows through a fresh connection.
func countOther(t *testing.T, path string) int64 {
	t.Helper()
	dsn, err := fileURI(path)
	require.NoError(t, err)
	c, err := openConn(dsn)
	require.NoError(t, err)
	defer c.close()
	n, err := c.QueryInt(context.Background(), "SELECT count(*) FROM other")
	require.NoError(t, err)
	return n
}

// A DB that its caller refuses (Discard) never removes a -wal or -shm that
// another connection made and is using after the DB's Open began: the
// other connection's commits, which live only in that -wal, stay readable.
// Before the fix Discard removed every companion file that did not exist
// when its Open began, and the other connection's commits were lost.
func TestDiscardKeepsCompanionsInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db")
	db, err := Open(Config{Path: path, Journal: "WAL", Sync: "NORMAL", BusyTimeout: time.Second})
	require.NoError(t, err)
	_, err = os.Stat(path + "-wal")
	require.ErrorIs(t, err, os.ErrNotExist, "the test needs a file without a -wal when Open begins")

	other := otherUser(t, path)
	require.NoError(t, db.Discard())
	for _, s := range []string{"-wal", "-shm"} {
		_, err := os.Stat(path + s)
		require.NoError(t, err, "%s of a live connection removed", s)
	}
	require.EqualValues(t, 2, countOther(t, path))
	n, err := other.QueryInt(context.Background(), "SELECT count(*) FROM other")
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
}

// With no other connection on the file, a refused open still leaves the
// directory as it found it: the empty -wal and the -shm its own connection
// made are removed, and a -wal that holds commits stays.
func TestDiscardRemovesItsOwnCompanions(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.db")
	// Another application's WAL database, closed cleanly: no -wal, no -shm.
	c := otherUser(t, path)
	require.NoError(t, c.close())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)

	db, err := Open(Config{Path: path, Journal: "WAL", Sync: "NORMAL", BusyTimeout: time.Second})
	require.NoError(t, err)
	require.NoError(t, db.WithWriter(context.Background(), func(c *Conn) error {
		_, err := c.QueryInt(context.Background(), "SELECT count(*) FROM other")
		return err
	}))
	_, err = os.Stat(path + "-shm")
	require.NoError(t, err, "reading a WAL database makes its -shm")
	require.NoError(t, db.Discard())
	entries, err = os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the database file is left")

	// A -wal with frames stays, even when the refused open made it and
	// nobody else has the file open: it holds commits.
	db, err = Open(Config{Path: path, Journal: "WAL", Sync: "NORMAL", BusyTimeout: time.Second})
	require.NoError(t, err)
	require.NoError(t, db.WithWriter(context.Background(), func(c *Conn) error {
		return c.ExecScript(context.Background(), "PRAGMA wal_autocheckpoint = 0; INSERT INTO other (v) VALUES ('three')")
	}))
	require.NoError(t, db.Discard())
	st, err := os.Stat(path + "-wal")
	require.NoError(t, err)
	require.NotZero(t, st.Size())
	require.EqualValues(t, 3, countOther(t, path))
}
