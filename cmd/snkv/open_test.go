package main

import (
	"bytes"
	"compress/gzip"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // database/sql driver: plays another application's SQLite files
)

// sqliteFile creates a SQLite database with one table of another
// application, with the given application_id (0: none).
func sqliteFile(t *testing.T, appID int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT); INSERT INTO orders (item) VALUES ('tea')`)
	require.NoError(t, err)
	if appID != 0 {
		_, err = db.Exec(`PRAGMA application_id = ` + itoa(int64(appID)))
		require.NoError(t, err)
	}
	return path
}

// TestBadInput runs commands on files that are not usable stores: each one
// fails with exit code 1 and a message saying what the file is, never a
// stack trace, and leaves the file exactly as it was (or absent).
func TestBadInput(t *testing.T) {
	gz := func() []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		_, _ = w.Write([]byte("hello"))
		_ = w.Close()
		return b.Bytes()
	}()
	store := func(t *testing.T) []byte {
		b, err := os.ReadFile(fixture(t))
		require.NoError(t, err)
		return b
	}
	newer := func(t *testing.T) []byte {
		// A newer format: snkv's version is in its meta table.
		path := filepath.Join(t.TempDir(), "newer.db")
		require.NoError(t, os.WriteFile(path, store(t), 0o600))
		db, err := sql.Open("sqlite", path)
		require.NoError(t, err)
		_, err = db.Exec(`UPDATE "__snkv_meta" SET value = 99 WHERE name = 'format'`)
		require.NoError(t, err)
		require.NoError(t, db.Close())
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		return b
	}
	cases := []struct {
		name    string
		content func(t *testing.T) []byte // nil: no file; the path of a directory if dir
		dir     bool
		sqlite  int // make a SQLite database with this application_id (-1: none)
		args    []string
		want    string
	}{
		{name: "missing file, read", args: []string{"ls"}, want: "no such file (pass --create to create a new store)"},
		{name: "missing file, write", args: []string{"put", "k", "v"}, want: "no such file (pass --create"},
		{name: "directory", dir: true, args: []string{"ls"}, want: "is a directory"},
		{name: "empty file", content: func(*testing.T) []byte { return nil }, args: []string{"put", "k", "v"}, want: "the file is empty, not an snkv store"},
		{name: "text file", content: func(*testing.T) []byte { return []byte("key,value\nname,alice\n") }, args: []string{"ls"}, want: `not an snkv store: it is not a SQLite database (it looks like text: "key,value")`},
		{name: "gzip file", content: func(*testing.T) []byte { return gz }, args: []string{"put", "k", "v"}, want: "not a SQLite database (it looks like a gzip file)"},
		{name: "truncated store", content: func(t *testing.T) []byte { return store(t)[:50] }, args: []string{"ls"}, want: "a truncated SQLite header (50 bytes)"},
		{name: "newer format", content: newer, args: []string{"ls"}, want: "the store was written by a newer snkv"},
		{name: "GeoPackage", sqlite: 0x47504B47, args: []string{"ls"}, want: "not an snkv store: it is a GeoPackage"},
		{name: "GeoPackage, adopt", sqlite: 0x47504B47, args: []string{"put", "--adopt", "k", "v"}, want: "it is a GeoPackage, which --adopt will not take over"},
		{name: "other application", sqlite: 0x12345678, args: []string{"ls"}, want: "a SQLite database of another application (application_id 0x12345678)"},
		{name: "plain SQLite, read", sqlite: -1, args: []string{"ls"}, want: "not an snkv store: a SQLite database of another kind: it has 1 schema objects and no snkv header (pass --adopt to a write command"},
		{name: "plain SQLite, write", sqlite: -1, args: []string{"put", "k", "v"}, want: "pass --adopt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "store.db")
			switch {
			case c.dir:
				require.NoError(t, os.Mkdir(path, 0o755))
			case c.sqlite != 0:
				path = sqliteFile(t, max(c.sqlite, 0))
			case c.content != nil:
				require.NoError(t, os.WriteFile(path, c.content(t), 0o644))
			}
			before, _ := os.ReadFile(path)
			args := append([]string{c.args[0], path}, c.args[1:]...)
			r := cli(t, nil, args...)
			require.Equal(t, 1, r.code, r.stderr)
			require.Contains(t, r.stderr, c.want)
			require.Contains(t, r.stderr, path, "the message names the file")
			require.Empty(t, r.stdout)
			requireClean(t, r)
			if c.content == nil && !c.dir && c.sqlite == 0 {
				_, err := os.Stat(path)
				require.ErrorIs(t, err, os.ErrNotExist, "a missing file is never created")
				return
			}
			if !c.dir {
				after, err := os.ReadFile(path)
				require.NoError(t, err)
				require.True(t, bytes.Equal(before, after), "the file is left as it was")
			}
		})
	}
}

// TestCreate creates a missing store, or initialises an empty file, only
// with --create.
func TestCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db")
	r := cli(t, nil, "put", path, "--create", "k", "v")
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "get", path, "k")
	require.Equal(t, result{"v", "", 0}, r, "get writes the exact bytes to a pipe")

	empty := filepath.Join(t.TempDir(), "empty.db")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	r = cli(t, nil, "ls", empty, "--create")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "default")

	// A read command with --create makes the store, then reads it read-only.
	fresh := filepath.Join(t.TempDir(), "fresh.db")
	r = cli(t, nil, "ls", fresh, "--create", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []map[string]any{{"cf": "default", "keys": 0.0, "stored": 0.0, "ttl_keys": 0.0, "expired": 0.0}}, jsonLines(t, r.stdout))
}

// TestAdopt takes over a plain SQLite database with --adopt: snkv's tables
// are added beside the application's, which stay untouched.
func TestAdopt(t *testing.T) {
	path := sqliteFile(t, 0)
	r := cli(t, nil, "put", path, "--adopt", "k", "v")
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "get", path, "k")
	require.Equal(t, result{"v", "", 0}, r)
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var item string
	require.NoError(t, db.QueryRow(`SELECT item FROM orders`).Scan(&item))
	require.Equal(t, "tea", item)
}

// TestCorruptFile damages a store's pages: check reports it with exit code
// 4 (damaged) and a message, and no command shows a stack trace.
func TestCorruptFile(t *testing.T) {
	path := fixture(t)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	for i := 4096; i < len(b); i++ {
		b[i] = 0xA5
	}
	require.NoError(t, os.WriteFile(path, b, 0o644))

	r := cli(t, nil, "check", path)
	require.Equal(t, exitDamaged, r.code, r.stderr)
	require.Contains(t, r.stderr, path)
	require.Regexp(t, `damaged|malformed|corrupt`, r.stderr)
	requireClean(t, r)
	for _, args := range [][]string{{"ls", path}, {"scan", path}, {"get", path, "user:1"}, {"export", path}, {"put", path, "k", "v"}} {
		r := cli(t, nil, args...)
		require.NotEqual(t, 0, r.code, "%v", args)
		require.NotEmpty(t, r.stderr)
		require.NotContains(t, r.stderr, "snkv: snkv:")
		requireClean(t, r)
	}
}

// emptySQLite creates a SQLite database with no tables: a header and an
// empty schema, as `sqlite3 x.db 'PRAGMA user_version = 7'` leaves it.
func emptySQLite(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "empty-sqlite.db")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`PRAGMA user_version = 7`)
	require.NoError(t, err)
	return path
}

// TestEmptySQLiteFile treats a SQLite database without tables as it does
// an empty file: a write command makes it a store only with --create or
// --adopt (put used to make it one silently), and a read command says
// what the file is (ls called it read-only); both leave it as it was.
func TestEmptySQLiteFile(t *testing.T) {
	for _, args := range [][]string{{"put", "k", "v"}, {"ls"}, {"get", "k"}, {"import"}} {
		path := emptySQLite(t)
		before, err := os.ReadFile(path)
		require.NoError(t, err)
		r := cli(t, nil, append([]string{args[0], path}, args[1:]...)...)
		require.Equal(t, 1, r.code, "%v: %s", args, r.stderr)
		require.Contains(t, r.stderr, path+": a SQLite database without tables, not an snkv store (pass --create to make it one)", "%v", args)
		requireClean(t, r)
		after, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, before, after, "%v leaves the file as it was", args)
	}
	for _, flag := range []string{"--create", "--adopt"} {
		path := emptySQLite(t)
		r := cli(t, nil, "put", path, "k", "v", flag)
		require.Equal(t, 0, r.code, "%s: %s", flag, r.stderr)
		r = cli(t, nil, "get", path, "k")
		require.Equal(t, result{"v", "", 0}, r)
	}
	path := emptySQLite(t)
	r := cli(t, nil, "ls", path, "--create")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "default")
}
