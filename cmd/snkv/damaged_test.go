package main

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
)

// damage runs SQL statements on the store at path, as another tool would.
func damage(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	for _, s := range stmts {
		_, err := db.Exec(s)
		require.NoError(t, err, s)
	}
}

// requireDamaged checks the report of a damaged store: exit code 4, one
// "snkv: " prefix, and what to run, naming the file.
func requireDamaged(t *testing.T, r result, path string) {
	t.Helper()
	requireClean(t, r)
	require.Equal(t, exitDamaged, r.code, "stderr: %s", r.stderr)
	require.True(t, strings.HasPrefix(r.stderr, "snkv: "), r.stderr)
	require.Contains(t, r.stderr, "the store is damaged: 'snkv check "+path+"' lists what is wrong; 'snkv repair "+path+"'")
}

// TestDamagedRow gives a row a wrong checksum: every read that meets it
// reports a damaged store (exit code 4), ls included, and check lists it.
func TestDamagedRow(t *testing.T) {
	path := fixture(t)
	damage(t, path, `UPDATE "sessions" SET crc = 1 WHERE key = CAST('perm' AS BLOB)`)
	for _, args := range [][]string{
		{"get", path, "--cf", "sessions", "perm"},
		{"get", path, "--cf", "sessions", "perm", "tok-a"},
		{"scan", path, "--cf", "sessions"},
		{"count", path, "--cf", "sessions", "--prefix", "p"},
		{"export", path},
		{"ls", path},
	} {
		r := cli(t, nil, args...)
		requireDamaged(t, r, path)
		require.Contains(t, r.stderr, "row checksum mismatch", "%v", args)
	}
	r := cli(t, nil, "check", path)
	require.Equal(t, exitDamaged, r.code, r.stderr)
	require.Contains(t, r.stderr, "check failed")
	require.Contains(t, r.stderr, `1 row fails its checksum: key "perm"`, "a printable key is shown as text")
	require.NotContains(t, r.stderr, "snkv check", "check does not tell the user to run check")
	require.Contains(t, r.stderr, "'snkv repair "+path+"'")

	// Every bad key is named, up to a bound.
	damage(t, path, `UPDATE "default" SET crc = 1`)
	r = cli(t, nil, "check", path)
	require.Equal(t, exitDamaged, r.code, r.stderr)
	require.Contains(t, r.stderr, `column family "default": 7 rows fail their checksum: keys "back\\slash", x'62696e00ff', "config", "user:1", "user:2", "user:3", "zero"`)
	r = cli(t, nil, "get", path, "--hex", "62696e00ff")
	require.Contains(t, r.stderr, "key x'62696e00ff': row checksum mismatch", "a key that is not text is shown in hex")
	r = cli(t, nil, "get", path, "user:1")
	requireDamaged(t, r, path)
}

// TestDamagedMissingView drops a column family's hidden read view, as a
// careless session in the sqlite3 shell would: the column family must not
// read as empty or its keys as missing; each command says the store is
// damaged and what to run, and repair mends it.
func TestDamagedMissingView(t *testing.T) {
	path := fixture(t)
	damage(t, path, `DROP VIEW "__snkv_view__sessions"`)
	for _, args := range [][]string{
		{"ls", path},
		{"scan", path, "--cf", "sessions"},
		{"count", path, "--cf", "sessions", "--prefix", "tok"},
		{"export", path, "--cf", "sessions"},
	} {
		requireDamaged(t, cli(t, nil, args...), path)
	}
	requireDamaged(t, cli(t, nil, "get", path, "--cf", "sessions", "perm"), path)

	r := cli(t, nil, "repair", path)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "sessions")
	r = cli(t, nil, "get", path, "--cf", "sessions", "perm")
	require.Equal(t, result{"P", "", 0}, r)
	r = cli(t, nil, "ls", path)
	require.Equal(t, 0, r.code, r.stderr)
}

// TestDamagedTimelogPage flips a byte inside a time-series page, keeping
// the row's own checksum right (the page is rewritten through the store):
// the page's checksum fails, and every timelog command that reads it
// reports a damaged store with exit code 4, as the key-value commands do.
func TestDamagedTimelogPage(t *testing.T) {
	path := logFixture(t)
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	pages, err := layer.OpenHiddenTable(context.Background(), db, "timelog", "cpu/pages")
	require.NoError(t, err)
	flipped := 0
	for e, err := range pages.All() {
		require.NoError(t, err)
		v := slices.Clone(e.Value)
		v[len(v)/2] ^= 0x10
		require.NoError(t, pages.Put(slices.Clone(e.Key), v))
		flipped++
	}
	require.NoError(t, db.Close())
	require.Positive(t, flipped, "the fixture's log has pages")

	for _, args := range [][]string{
		{"timelog", "range", path, "cpu"},
		{"timelog", "count", path, "cpu", "--start", "0"},
	} {
		r := cli(t, nil, args...)
		require.Equal(t, exitDamaged, r.code, "%v: stderr: %s", args, r.stderr)
		require.Contains(t, r.stderr, "cpu", "%v names the log", args)
	}
}

// TestDamagedEncryptionHeaderRow rewrites an encrypted store's header row
// as TEXT, as a flipped type bit or a tool would: with the right password
// every command reports a damaged store (exit code 4), never a wrong
// password (exit code 5).
func TestDamagedEncryptionHeaderRow(t *testing.T) {
	path, _ := markedFixture(t)
	const pw = "correct horse battery"
	pwFile := secretFile(t, pw+"\n")
	r := encryptWith(t, path, pwFile)
	damage(t, path, `UPDATE __snkv_meta SET value = CAST(value AS TEXT) WHERE name = 'encryption'`)
	for _, args := range [][]string{{"get", path, "marked"}, {"stats", path}} {
		r = cli(t, nil, append(args, "--password-file", pwFile)...)
		require.Equal(t, exitDamaged, r.code, "%v: %s", args, r.stderr)
		require.NotContains(t, r.stderr, "password does not open", "%v", args)
		requireNoLeak(t, r, pw)
	}
}
