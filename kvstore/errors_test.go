package kvstore_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TestBadKeys: every operation that takes a key refuses a nil, empty or
// oversize one with a typed error and writes nothing.
func TestBadKeys(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t, kvstore.Options{})
	require.NoError(t, db.Put(b("keep"), b("v")))
	ops := map[string]func(key []byte) error{
		"Put":         func(k []byte) error { return db.Put(k, b("v")) },
		"Get":         func(k []byte) error { _, err := db.Get(k); return err },
		"Delete":      func(k []byte) error { return db.Delete(k) },
		"Exists":      func(k []byte) error { _, err := db.Exists(k); return err },
		"PutIfAbsent": func(k []byte) error { _, err := db.PutIfAbsent(k, b("v")); return err },
		"PutTTL":      func(k []byte) error { return db.PutTTL(k, b("v"), time.Hour) },
		"GetMany":     func(k []byte) error { _, err := db.GetMany([][]byte{b("keep"), k}); return err },
		"Apply": func(k []byte) error {
			var bt kvstore.Batch
			bt.Put(b("other"), b("v"))
			bt.Put(k, b("v"))
			return db.Apply(ctx, &bt)
		},
		"Tx.Put": func(k []byte) error {
			return db.Update(ctx, func(tx *kvstore.Tx) error {
				if err := tx.Put(b("other"), b("v")); err != nil {
					return err
				}
				return tx.Put(k, b("v"))
			})
		},
	}
	keys := []struct {
		name string
		key  []byte
		want error
	}{
		{"nil", nil, kvstore.ErrInvalidKey},
		{"empty", []byte{}, kvstore.ErrInvalidKey},
		{"oversize", make([]byte, kvstore.MaxKeySize+1), kvstore.ErrKeyTooLarge},
	}
	for opName, op := range ops {
		for _, k := range keys {
			t.Run(opName+"/"+k.name, func(t *testing.T) {
				var err error
				require.NotPanics(t, func() { err = op(k.key) })
				require.ErrorIs(t, err, k.want)
				require.Equal(t, []kv{{"keep", "v"}}, contents(t, db.Default()))
			})
		}
	}
}

// TestBadColumnFamilyNames: invalid and reserved names are refused by
// every call that takes a name.
func TestBadColumnFamilyNames(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	users, err := db.CreateColumnFamily("users")
	require.NoError(t, err)
	require.NoError(t, users.PutTTL(b("k"), b("v"), time.Hour)) // its hidden tables now exist
	cases := []struct {
		name string
		want error
	}{
		{"", kvstore.ErrInvalidName},
		{strings.Repeat("x", 256), kvstore.ErrInvalidName},
		{"bad\xffutf8", kvstore.ErrInvalidName},
		{"nul\x00byte", kvstore.ErrInvalidName},
		{"__x", kvstore.ErrReservedName},
		{"__", kvstore.ErrReservedName},
		{"__snkv_catalog", kvstore.ErrReservedName},
		{"__snkv_ttl_k__users", kvstore.ErrReservedName},
		{"__snkv_view__users", kvstore.ErrReservedName},
		{"sqlite_x", kvstore.ErrReservedName},
		{"SQLITE_x", kvstore.ErrReservedName},
		{"sqlite_schema", kvstore.ErrReservedName},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := db.CreateColumnFamily(tc.name)
			require.ErrorIs(t, err, tc.want, "create")
			_, err = db.OpenColumnFamily(tc.name)
			require.ErrorIs(t, err, tc.want, "open")
			_, err = db.ColumnFamilyOrCreate(tc.name)
			require.ErrorIs(t, err, tc.want, "open or create")
			require.ErrorIs(t, db.DropColumnFamily(tc.name), tc.want, "drop")
			names, err := db.ListColumnFamilies()
			require.NoError(t, err)
			require.Equal(t, []string{"default", "users"}, names)
			v, err := users.Get(b("k"))
			require.NoError(t, err)
			require.Equal(t, b("v"), v)
		})
	}
	// Names just inside the limits are fine.
	for _, name := range []string{strings.Repeat("x", 255), "_x", "sqlite", "sqlitex", "x__", "é"} {
		_, err := db.CreateColumnFamily(name)
		require.NoError(t, err, "%q", name)
	}
}

// TestColumnFamilyStateErrors: exists, missing and default.
func TestColumnFamilyStateErrors(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	users, err := db.CreateColumnFamily("users")
	require.NoError(t, err)
	require.NoError(t, users.Put(b("k"), b("v")))
	for _, name := range []string{"users", "USERS", "Users", "default", "DEFAULT"} {
		_, err := db.CreateColumnFamily(name)
		require.ErrorIs(t, err, kvstore.ErrExists, name)
	}
	_, err = db.OpenColumnFamily("nobody")
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	require.ErrorIs(t, db.DropColumnFamily("nobody"), kvstore.ErrNotFound)
	for _, name := range []string{"default", "Default"} {
		require.ErrorIs(t, db.DropColumnFamily(name), kvstore.ErrDropDefault, name)
	}
	require.NoError(t, db.Put(b("d"), b("v")))
	require.Equal(t, []kv{{"d", "v"}}, contents(t, db.Default()))
	require.Equal(t, []kv{{"k", "v"}}, contents(t, users))
}

// TestUseAfterClose: every method family fails with ErrClosed once the
// store is closed, without panicking.
func TestUseAfterClose(t *testing.T) {
	ctx := context.Background()
	inEachKind(t, kvstore.Options{}, func(t *testing.T, db *kvstore.Store) {
		users, err := db.CreateColumnFamily("users")
		require.NoError(t, err)
		require.NoError(t, users.Put(b("k"), b("v")))
		require.NoError(t, db.Close())
		require.ErrorIs(t, db.Close(), kvstore.ErrClosed, "second Close")

		dest := filepath.Join(t.TempDir(), "backup.db")
		calls := map[string]func() error{
			"Put":                  func() error { return db.Put(b("k"), b("v")) },
			"Get":                  func() error { _, err := db.Get(b("k")); return err },
			"Delete":               func() error { return db.Delete(b("k")) },
			"Exists":               func() error { _, err := db.Exists(b("k")); return err },
			"PutIfAbsent":          func() error { _, err := db.PutIfAbsent(b("k"), b("v")); return err },
			"Count":                func() error { _, err := db.Count(); return err },
			"Clear":                func() error { return db.Clear() },
			"GetMany":              func() error { _, err := db.GetMany([][]byte{b("k")}); return err },
			"PutTTL":               func() error { return db.PutTTL(b("k"), b("v"), time.Hour) },
			"named Get":            func() error { _, err := users.Get(b("k")); return err },
			"named Put":            func() error { return users.Put(b("k"), b("v")) },
			"Apply":                func() error { var bt kvstore.Batch; bt.Put(b("k"), b("v")); return users.Apply(ctx, &bt) },
			"Cursor":               func() error { _, err := db.Cursor(kvstore.IterOptions{}); return err },
			"All":                  func() error { return firstErr(users.All()) },
			"Scan":                 func() error { return firstErr(db.Scan(kvstore.IterOptions{Reverse: true})) },
			"CreateColumnFamily":   func() error { _, err := db.CreateColumnFamily("new"); return err },
			"OpenColumnFamily":     func() error { _, err := db.OpenColumnFamily("users"); return err },
			"ColumnFamilyOrCreate": func() error { _, err := db.ColumnFamilyOrCreate("users"); return err },
			"DropColumnFamily":     func() error { return db.DropColumnFamily("users") },
			"ListColumnFamilies":   func() error { _, err := db.ListColumnFamilies(); return err },
			"Update":               func() error { return db.Update(ctx, func(*kvstore.Tx) error { return nil }) },
			"View":                 func() error { return db.View(ctx, func(*kvstore.Tx) error { return nil }) },
			"Begin write":          func() error { _, err := db.Begin(ctx, true); return err },
			"Begin read":           func() error { _, err := db.Begin(ctx, false); return err },
			"Checkpoint":           func() error { _, err := db.Checkpoint(ctx, kvstore.CheckpointPassive); return err },
			"IncrementalVacuum":    func() error { return db.IncrementalVacuum(ctx, 0) },
			"Vacuum":               func() error { return db.Vacuum(ctx) },
			"Backup":               func() error { return db.Backup(ctx, dest) },
			"IntegrityCheck":       func() error { return db.IntegrityCheck(ctx) },
			"Stats":                func() error { _, err := db.Stats(ctx); return err },
			"PurgeExpiredAll":      func() error { _, err := db.PurgeExpiredAll(ctx); return err },
		}
		for name, call := range calls {
			var err error
			require.NotPanics(t, func() { err = call() }, name)
			require.ErrorIs(t, err, kvstore.ErrClosed, name)
		}
		_, err = os.Stat(dest)
		require.True(t, os.IsNotExist(err), "no backup is written by a closed store")
	})
}

// firstErr returns the first error an iteration yields, or nil.
func firstErr(seq func(func(kvstore.Entry, error) bool)) error {
	var first error
	for _, err := range seq {
		if err != nil {
			first = err
			break
		}
	}
	return first
}

// TestReadOnlyStore: a read-only store reads everything and refuses every
// write with ErrReadOnly, leaving the file as it was.
func TestReadOnlyStore(t *testing.T) {
	ctx := context.Background()
	for _, journal := range []kvstore.JournalMode{kvstore.JournalWAL, kvstore.JournalDelete} {
		t.Run([]string{"wal", "delete"}[journal], func(t *testing.T) {
			path := tempPath(t)
			w := openAt(t, path, kvstore.Options{Journal: journal})
			users, err := w.CreateColumnFamily("users")
			require.NoError(t, err)
			require.NoError(t, users.Put(b("k"), b("v")))
			require.NoError(t, w.Put(b("d"), b("1")))
			want := snapshotAll(t, w)
			require.NoError(t, w.Close())

			db := openAt(t, path, kvstore.Options{ReadOnly: true})
			require.Equal(t, want, snapshotAll(t, db), "reads work")
			ru, err := db.OpenColumnFamily("users")
			require.NoError(t, err)
			require.NoError(t, db.View(ctx, func(tx *kvstore.Tx) error {
				v, err := tx.CF(ru).Get(b("k"))
				require.NoError(t, err)
				require.Equal(t, b("v"), v)
				return nil
			}))
			require.NoError(t, db.IntegrityCheck(ctx))

			writes := map[string]func() error{
				"Put":                  func() error { return db.Put(b("d"), b("2")) },
				"named Put":            func() error { return ru.Put(b("k"), b("2")) },
				"Delete":               func() error { return db.Delete(b("d")) },
				"PutIfAbsent":          func() error { _, err := db.PutIfAbsent(b("new"), b("v")); return err },
				"PutTTL":               func() error { return db.PutTTL(b("d"), b("v"), time.Hour) },
				"Clear":                func() error { return ru.Clear() },
				"Apply":                func() error { var bt kvstore.Batch; bt.Delete(b("d")); return db.Apply(ctx, &bt) },
				"CreateColumnFamily":   func() error { _, err := db.CreateColumnFamily("new"); return err },
				"ColumnFamilyOrCreate": func() error { _, err := db.ColumnFamilyOrCreate("new"); return err },
				"DropColumnFamily":     func() error { return db.DropColumnFamily("users") },
				"Update":               func() error { return db.Update(ctx, func(*kvstore.Tx) error { return nil }) },
				"Begin write":          func() error { _, err := db.Begin(ctx, true); return err },
				"Vacuum":               func() error { return db.Vacuum(ctx) },
				"IncrementalVacuum":    func() error { return db.IncrementalVacuum(ctx, 0) },
				"Checkpoint":           func() error { _, err := db.Checkpoint(ctx, kvstore.CheckpointFull); return err },
			}
			for name, write := range writes {
				var err error
				require.NotPanics(t, func() { err = write() }, name)
				require.ErrorIs(t, err, kvstore.ErrReadOnly, name)
			}
			require.Equal(t, want, snapshotAll(t, db), "nothing was written")
			copyPath := filepath.Join(t.TempDir(), "copy.db")
			require.NoError(t, db.Backup(ctx, copyPath), "a read-only store can be backed up")
			require.NoError(t, db.Close())
			require.Equal(t, want, snapshotAll(t, openAt(t, copyPath, kvstore.Options{ReadOnly: true})))

			db = openAt(t, path, kvstore.Options{})
			require.Equal(t, want, snapshotAll(t, db), "nothing was written to the file")
		})
	}
}

// TestOpenBadPaths: paths that are not usable stores fail Open with a typed
// error and are left as they were.
func TestOpenBadPaths(t *testing.T) {
	t.Run("directory", func(t *testing.T) {
		dir := t.TempDir()
		for _, ro := range []bool{false, true} {
			_, err := kvstore.Open(dir, kvstore.Options{ReadOnly: ro})
			require.ErrorIs(t, err, kvstore.ErrCantOpen)
		}
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Empty(t, entries)
	})
	t.Run("missing file read-only", func(t *testing.T) {
		path := tempPath(t)
		_, err := kvstore.Open(path, kvstore.Options{ReadOnly: true})
		require.ErrorIs(t, err, kvstore.ErrCantOpen)
		_, err = os.Stat(path)
		require.True(t, os.IsNotExist(err), "read-only Open must not create the file")
	})
	t.Run("missing directory", func(t *testing.T) {
		_, err := kvstore.Open(filepath.Join(t.TempDir(), "no", "such", "dir", "x.db"), kvstore.Options{})
		require.ErrorIs(t, err, kvstore.ErrCantOpen)
	})
	t.Run("garbage file", func(t *testing.T) {
		for _, size := range []int{10, 4096, 100_000} {
			path := filepath.Join(t.TempDir(), "garbage.db")
			garbage := bytes.Repeat([]byte("this is not a database, "), size/24+1)[:size]
			require.NoError(t, os.WriteFile(path, garbage, 0o644))
			for _, ro := range []bool{false, true} {
				var err error
				require.NotPanics(t, func() { _, err = kvstore.Open(path, kvstore.Options{ReadOnly: ro}) })
				require.ErrorIs(t, err, kvstore.ErrCorrupt, "size %d read-only %v", size, ro)
			}
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, garbage, after, "the garbage file is untouched")
		}
	})
	t.Run("plain SQLite database", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "app.db")
		rawExec(t, path, `CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)`, `INSERT INTO notes (body) VALUES ('hello')`)
		before, err := os.ReadFile(path)
		require.NoError(t, err)
		for _, ro := range []bool{false, true} {
			_, err := kvstore.Open(path, kvstore.Options{ReadOnly: ro})
			require.ErrorIs(t, err, kvstore.ErrNotStore)
		}
		requireRefusedUntouched(t, path, before)
		_, err = kvstore.Open(path, kvstore.Options{ReadOnly: true, Adopt: true})
		require.ErrorIs(t, err, kvstore.ErrNotStore, "a read-only store cannot adopt")
		var n int
		require.NoError(t, rawDB(t, path).QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name LIKE '\_\_snkv%' ESCAPE '\'`).Scan(&n))
		require.Zero(t, n, "a refused open adds nothing")

		db := openAt(t, path, kvstore.Options{Adopt: true})
		names, err := db.ListColumnFamilies()
		require.NoError(t, err)
		require.Equal(t, []string{"default"}, names, "the user's table is not a column family")
		require.NoError(t, db.Put(b("k"), b("v")))
		_, err = db.CreateColumnFamily("notes")
		require.ErrorIs(t, err, kvstore.ErrExists)
		require.NoError(t, db.Close())

		var body string
		require.NoError(t, rawDB(t, path).QueryRow(`SELECT body FROM notes WHERE id = 1`).Scan(&body))
		require.Equal(t, "hello", body, "the user's table survives adoption")
		db = openAt(t, path, kvstore.Options{}) // now a store: no Adopt needed
		v, err := db.Get(b("k"))
		require.NoError(t, err)
		require.Equal(t, b("v"), v)
	})
	t.Run("other application id", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "other.db")
		rawExec(t, path, `PRAGMA application_id = 1234`, `CREATE TABLE t (x)`)
		for _, adopt := range []bool{false, true} {
			_, err := kvstore.Open(path, kvstore.Options{Adopt: adopt})
			require.ErrorIs(t, err, kvstore.ErrNotStore)
		}
	})
	t.Run("newer format", func(t *testing.T) {
		path := tempPath(t)
		db := openAt(t, path, kvstore.Options{})
		require.NoError(t, db.Put(b("k"), b("v")))
		require.NoError(t, db.Close())
		// Format 3 (the TTL expiry copy) is the newest this library reads.
		rawExec(t, path, `UPDATE "__snkv_meta" SET value = 4 WHERE name = 'format'`, `PRAGMA user_version = 4`)
		before, err := os.ReadFile(path)
		require.NoError(t, err)
		for _, opts := range []kvstore.Options{{}, {ReadOnly: true}, {Adopt: true}} {
			_, err := kvstore.Open(path, opts)
			require.ErrorIs(t, err, kvstore.ErrVersion, "%+v", opts)
		}
		after, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, before, after, "the newer file is untouched")
	})
}

// TestTruncatedStore: a store file cut short fails with ErrCorrupt, at
// Open or at the first read of a missing page, and never panics.
func TestTruncatedStore(t *testing.T) {
	ctx := context.Background()
	path := tempPath(t)
	db := openAt(t, path, kvstore.Options{})
	cf, err := db.CreateColumnFamily("cf")
	require.NoError(t, err)
	var bt kvstore.Batch
	for i := range 2000 {
		bt.Put([]byte(strings.Repeat("k", 20)+string(rune('a'+i%26))+string(rune(i))), bytes.Repeat([]byte{byte(i)}, 200))
	}
	require.NoError(t, cf.Apply(ctx, &bt))
	require.NoError(t, db.Close())
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Greater(t, st.Size(), int64(100_000))

	for _, size := range []int64{st.Size() / 2, st.Size()/2 + 100, 4096 * 2, 4096 + 17, 100} {
		t.Run("", func(t *testing.T) {
			cut := filepath.Join(t.TempDir(), "cut.db")
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(cut, data[:size], 0o644))
			var failure error
			require.NotPanics(t, func() { failure = useWholeStore(ctx, cut) })
			require.ErrorIs(t, failure, kvstore.ErrCorrupt, "truncated to %d bytes", size)
		})
	}
}

// useWholeStore opens path and reads every column family, then runs the
// integrity check, returning the first error.
func useWholeStore(ctx context.Context, path string) error {
	db, err := kvstore.Open(path, kvstore.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	names, err := db.ListColumnFamilies()
	if err != nil {
		return err
	}
	for _, name := range names {
		cf, err := db.OpenColumnFamily(name)
		if err != nil {
			return err
		}
		for _, err := range cf.All() {
			if err != nil {
				return err
			}
		}
	}
	return db.IntegrityCheck(ctx)
}

// TestInvalidOptions: every out-of-range option fails Open with
// ErrInvalidOption and creates no file.
func TestInvalidOptions(t *testing.T) {
	cases := map[string]struct {
		opts kvstore.Options
		path string
	}{
		"journal":              {opts: kvstore.Options{Journal: 7}},
		"sync":                 {opts: kvstore.Options{Sync: 9}},
		"negative journal":     {opts: kvstore.Options{Journal: -1}},
		"negative sync":        {opts: kvstore.Options{Sync: -1}},
		"negative busy":        {opts: kvstore.Options{BusyTimeout: -time.Second}},
		"negative cache":       {opts: kvstore.Options{CacheSize: -1}},
		"page size odd":        {opts: kvstore.Options{PageSize: 1000}},
		"page size small":      {opts: kvstore.Options{PageSize: 256}},
		"page size large":      {opts: kvstore.Options{PageSize: 131072}},
		"auto-checkpoint":      {opts: kvstore.Options{WALAutoCheckpoint: -2}},
		"negative readers":     {opts: kvstore.Options{MaxReaders: -1}},
		"negative value limit": {opts: kvstore.Options{MaxValueSize: -1}},
		"huge value limit":     {opts: kvstore.Options{MaxValueSize: 1_000_000_000}},
		"negative purge":       {opts: kvstore.Options{PurgeInterval: -time.Second}},
		"read-only in memory":  {opts: kvstore.Options{ReadOnly: true}, path: ":memory:"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := tc.path
			if path == "" {
				path = tempPath(t)
			}
			db, err := kvstore.Open(path, tc.opts)
			require.ErrorIs(t, err, kvstore.ErrInvalidOption)
			require.Nil(t, db)
			if path != ":memory:" {
				_, err = os.Stat(path)
				require.True(t, os.IsNotExist(err), "no file is created")
			}
		})
	}
	ctx := context.Background()
	db := openTemp(t, kvstore.Options{})
	_, err := db.Checkpoint(ctx, kvstore.CheckpointMode(42))
	require.ErrorIs(t, err, kvstore.ErrInvalidOption)
	require.ErrorIs(t, db.IncrementalVacuum(ctx, -1), kvstore.ErrInvalidOption)
}

// TestErrorsCarryContext: errors are wrapped with context, yet match their
// sentinel.
func TestErrorsCarryContext(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	err := db.Put(nil, b("v"))
	require.ErrorIs(t, err, kvstore.ErrInvalidKey)
	require.NotEqual(t, kvstore.ErrInvalidKey.Error(), err.Error(), "wrapped with detail")
	_, err = db.OpenColumnFamily("ghost")
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	require.Contains(t, err.Error(), "ghost")
	require.False(t, errors.Is(err, kvstore.ErrClosed))
}
