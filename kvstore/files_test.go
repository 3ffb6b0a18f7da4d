package kvstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// dirBytes returns every regular file of dir by name, with its bytes.
func dirBytes(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, name := range testutil.ListDir(t, dir) {
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		out[name] = data
	}
	return out
}

// A backup destination is a path, whatever it looks like: a nil return
// means a complete store is at exactly that path, and nothing else was
// written.
func TestBackupDestinationIsAlwaysAPath(t *testing.T) {
	dests := []string{
		"file:b1.db",
		"file:b2.db?vfs=memdb",
		"file:b3.db?mode=memory",
		"b4.db?mode=ro",
		"b5#frag.db",
		"b6%41.db",
		"file:/b7.db", // b7.db in a directory named "file:"
	}
	inEachKind(t, kvstore.Options{}, func(t *testing.T, db *kvstore.Store) {
		require.NoError(t, db.Put(b("k"), b("v")))
		dir := t.TempDir()
		t.Chdir(dir)
		// Without the directory "file:", "file:/b7.db" names nothing
		// that can be created: an error, never the root's /b7.db.
		require.ErrorIs(t, db.Backup(context.Background(), "file:/b7.db"), kvstore.ErrCantOpen)
		require.NoError(t, os.Mkdir("file:", 0o755))
		for _, dest := range dests {
			before := testutil.ListDir(t, dir)
			require.NoError(t, db.Backup(context.Background(), dest), dest)
			// Exactly one new entry: the first path component of dest.
			first := dest
			if i := indexSlash(dest); i >= 0 {
				first = dest[:i]
			}
			require.Equal(t, sortedWith(before, first), testutil.ListDir(t, dir), dest)
			st, err := os.Stat(dest)
			require.NoError(t, err, dest)
			require.True(t, st.Mode().IsRegular(), dest)
			copyDB, err := kvstore.Open(dest, kvstore.Options{ReadOnly: true})
			require.NoError(t, err, dest)
			v, err := copyDB.Get(b("k"))
			require.NoError(t, err, dest)
			require.Equal(t, "v", string(v))
			require.NoError(t, copyDB.IntegrityCheck(context.Background()))
			require.NoError(t, copyDB.Close())
		}
	})
}

func indexSlash(s string) int {
	for i := range len(s) {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

func sortedWith(names []string, name string) []string {
	out := append(slices.Clone(names), name)
	slices.Sort(out)
	return slices.Compact(out)
}

// A path with a NUL byte names a file SQLite would never see: it is refused,
// for Open and Backup alike, and nothing is created.
func TestPathWithNULIsRefused(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	_, err := kvstore.Open("x\x00y.db", kvstore.Options{})
	require.ErrorIs(t, err, kvstore.ErrCantOpen)
	_, err = kvstore.Open("x\x00y.db", kvstore.Options{ReadOnly: true})
	require.ErrorIs(t, err, kvstore.ErrCantOpen)
	require.Empty(t, testutil.ListDir(t, dir))

	db := openAt(t, filepath.Join(t.TempDir(), "s.db"), kvstore.Options{})
	require.ErrorIs(t, db.Backup(context.Background(), "b\x00c.db"), kvstore.ErrCantOpen)
	require.ErrorIs(t, db.Backup(context.Background(), ""), kvstore.ErrCantOpen)
	require.Empty(t, testutil.ListDir(t, dir))
}

// A short file that is not a database is refused, not taken for an empty
// database and overwritten.
func TestShortNonDatabaseFileIsRefused(t *testing.T) {
	for _, content := range [][]byte{
		{'x'},
		[]byte("not a database at all"),
		make([]byte, 100),
		make([]byte, 4096),
	} {
		for _, ro := range []bool{false, true} {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.db")
			require.NoError(t, os.WriteFile(path, content, 0o644))
			before := dirBytes(t, dir)
			_, err := kvstore.Open(path, kvstore.Options{ReadOnly: ro})
			require.ErrorIs(t, err, kvstore.ErrCorrupt, "%d bytes, read-only %v", len(content), ro)
			require.Equal(t, before, dirBytes(t, dir))
		}
	}
}

// notesInWAL makes path another application's WAL database, a table
// "notes" of n rows whose commits are still in the -wal file, and returns
// its open handle (one connection; closed at the end of the test).
func notesInWAL(t *testing.T, path string, n int) *sql.DB {
	t.Helper()
	raw := rawDB(t, path)
	raw.SetMaxOpenConns(1)
	for _, q := range []string{
		"PRAGMA journal_mode = WAL",
		"PRAGMA wal_autocheckpoint = 0",
		"CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)",
	} {
		_, err := raw.Exec(q)
		require.NoError(t, err, q)
	}
	for i := range n {
		_, err := raw.Exec("INSERT INTO notes (body) VALUES (?)", fmt.Sprint("note ", i+1))
		require.NoError(t, err)
	}
	return raw
}

// foreignWAL makes, in a fresh directory, another application's WAL
// database whose last commits are still in its -wal file (as a crash, or
// a process that still has it open, leaves it), and returns its path.
func foreignWAL(t *testing.T, withShm bool) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "app.db")
	raw := notesInWAL(t, src, 3)
	// Copy the files while the application still holds the database.
	dir := t.TempDir()
	for _, s := range []string{"", "-wal", "-shm"} {
		if s == "-shm" && !withShm {
			continue
		}
		data, err := os.ReadFile(src + s)
		require.NoError(t, err, s)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "app.db"+s), data, 0o644))
	}
	require.NoError(t, raw.Close())
	return filepath.Join(dir, "app.db")
}

// Refusing another application's WAL database leaves its pending WAL in
// the -wal file, creates no -shm, and changes no byte of any file, the
// -shm (the WAL index its last user left) included.
func TestRefusedWALDatabaseIsUntouched(t *testing.T) {
	for _, withShm := range []bool{false, true} {
		for _, ro := range []bool{false, true} {
			path := foreignWAL(t, withShm)
			dir := filepath.Dir(path)
			wal, err := os.Stat(path + "-wal")
			require.NoError(t, err)
			require.NotZero(t, wal.Size(), "the WAL must hold the commits")
			before := dirBytes(t, dir)
			_, err = kvstore.Open(path, kvstore.Options{ReadOnly: ro})
			require.ErrorIs(t, err, kvstore.ErrNotStore, "shm %v read-only %v", withShm, ro)
			after := dirBytes(t, dir)
			require.Equal(t, testutil.ListDir(t, dir), slices.Sorted(maps.Keys(before)), "shm %v read-only %v", withShm, ro)
			for name, data := range before {
				require.Equal(t, data, after[name], "%s changed (shm %v, read-only %v)", name, withShm, ro)
			}
			// And the application finds its rows.
			raw := rawDB(t, path)
			var n int
			require.NoError(t, raw.QueryRow("SELECT count(*) FROM notes").Scan(&n))
			require.Equal(t, 3, n)
			require.NoError(t, raw.Close())
		}
	}
}

// Refusing a WAL database that another process holds open leaves its
// pending WAL alone: the refusal never checkpoints.
func TestRefusedLiveWALDatabaseKeepsItsWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.db")
	raw := notesInWAL(t, path, 2)
	main, err := os.ReadFile(path)
	require.NoError(t, err)
	wal, err := os.ReadFile(path + "-wal")
	require.NoError(t, err)
	_, err = kvstore.Open(path, kvstore.Options{})
	require.ErrorIs(t, err, kvstore.ErrNotStore)
	main2, err := os.ReadFile(path)
	require.NoError(t, err)
	wal2, err := os.ReadFile(path + "-wal")
	require.NoError(t, err)
	require.Equal(t, main, main2)
	require.Equal(t, wal, wal2)
	var n int
	require.NoError(t, raw.QueryRow("SELECT count(*) FROM notes").Scan(&n))
	require.Equal(t, 2, n)
}

// A new store whose header is still in its WAL when its process dies (its
// header page was never checkpointed into the file) is read first without
// touching its -shm, then opened as usual: every commit is there, and it
// takes writes.
func TestNewStoreWithPendingWALOpens(t *testing.T) {
	// Encrypting a new store ends with a VACUUM and a checkpoint, which put
	// the header in the file.
	skipSealedSuite(t)
	src := tempPath(t)
	db := openAt(t, src, kvstore.Options{WALAutoCheckpoint: -1})
	require.NoError(t, db.Put(b("k"), b("v")))
	cf, err := db.CreateColumnFamily("users")
	require.NoError(t, err)
	require.NoError(t, cf.PutTTL(b("u"), b("1"), time.Hour))
	dir := t.TempDir()
	path := filepath.Join(dir, "store.db")
	for _, s := range []string{"", "-wal", "-shm"} {
		data, err := os.ReadFile(src + s)
		require.NoError(t, err, s)
		require.NoError(t, os.WriteFile(path+s, data, 0o600))
	}
	head, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotEqual(t, "snkv", string(head[68:72]), "the header must still be in the WAL for this test")
	for _, ro := range []bool{true, false} {
		var before map[string][]byte
		if ro {
			before = dirBytes(t, dir)
		}
		db2 := openAt(t, path, kvstore.Options{ReadOnly: ro})
		v, err := db2.Get(b("k"))
		require.NoError(t, err)
		require.Equal(t, b("v"), v)
		cf2, err := db2.OpenColumnFamily("users")
		require.NoError(t, err)
		_, err = cf2.Get(b("u"))
		require.NoError(t, err)
		if !ro {
			require.NoError(t, db2.Put(b("k2"), b("v2")))
			require.NoError(t, db2.IntegrityCheck(context.Background()))
		}
		require.NoError(t, db2.Close())
		if ro {
			after := dirBytes(t, dir)
			for _, name := range []string{"store.db", "store.db-wal"} {
				require.Equal(t, before[name], after[name], "a read-only open wrote %s", name)
			}
		}
	}
}
