package tests

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/catalog"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// start is the fixed time of the manual clock every test uses.
var start = time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)

// shell runs SQL (or a dot-command) with the sqlite3 shell against the file
// and returns its output lines.
func shell(t *testing.T, file, sql string) []string {
	t.Helper()
	return testutil.Shell(t, sql, "-batch", "-bail", file)
}

// tables lists the tables and views the shell's .tables command shows.
func tables(t *testing.T, file string) []string {
	t.Helper()
	var names []string
	for _, line := range shell(t, file, ".tables") {
		names = append(names, strings.Fields(line)...)
	}
	slices.Sort(names)
	return names
}

// blobLiteral is key as an SQL blob literal, x'…'.
func blobLiteral(key []byte) string { return "x'" + hex.EncodeToString(key) + "'" }

func upperHex(b []byte) string { return strings.ToUpper(hex.EncodeToString(b)) }

func be64(ms int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(ms)) }

type fixture struct {
	path  string
	clock *kvstore.ManualClock
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	testutil.SQLite3(t) // skip (or fail) before doing any work
	return fixture{
		path:  filepath.Join(t.TempDir(), "store.db"),
		clock: kvstore.NewManualClock(start),
	}
}

func (f fixture) open(t *testing.T) *kvstore.Store {
	t.Helper()
	db, err := kvstore.Open(f.path, kvstore.Options{Clock: f.clock})
	require.NoError(t, err)
	return db
}

// openWithCF opens the store and creates column family "s" in it.
func (f fixture) openWithCF(t *testing.T) (*kvstore.Store, *kvstore.ColumnFamily) {
	t.Helper()
	db := f.open(t)
	cf, err := db.CreateColumnFamily("s")
	require.NoError(t, err)
	return db, cf
}

// sessionTTLs are the keys the TTL tests give a time-to-live, with it.
var sessionTTLs = map[string]time.Duration{
	"sess:alice": 90 * time.Minute,
	"sess:bob":   15 * time.Second,
	"sess:carol": 36 * time.Hour,
	"sess:dave":  1500 * time.Millisecond,
}

// writeSessions fills the "sessions" column family: the keys of sessionTTLs
// with their TTL and one permanent key.
func writeSessions(t *testing.T, db *kvstore.Store) *kvstore.ColumnFamily {
	t.Helper()
	sessions, err := db.CreateColumnFamily("sessions")
	require.NoError(t, err)
	for k, d := range sessionTTLs {
		require.NoError(t, sessions.PutTTL([]byte(k), []byte("token-"+k), d))
	}
	require.NoError(t, sessions.Put([]byte("sess:permanent"), []byte("forever")))
	return sessions
}

func TestShellListsTables(t *testing.T) {
	f := newFixture(t)
	db := f.open(t)
	_, err := db.CreateColumnFamily("users")
	require.NoError(t, err)
	require.NoError(t, db.Close())

	got := tables(t, f.path)
	for _, name := range []string{"default", "users", layout.CatalogTable, "__snkv_view__default", "__snkv_view__users"} {
		require.Contains(t, got, name)
	}
	for _, name := range got {
		require.NotContains(t, name, "__snkv_ttl_", "no TTL table before the first TTL write")
	}
	require.Equal(t, []string{"default", "users"},
		shell(t, f.path, `SELECT name FROM "__snkv_catalog" ORDER BY name;`))

	// The first TTL write adds the hidden tables of that column family only.
	db = f.open(t)
	writeSessions(t, db)
	require.NoError(t, db.Close())
	got = tables(t, f.path)
	for _, name := range []string{"sessions", "__snkv_ttl_k__sessions", "__snkv_ttl_e__sessions", "__snkv_view__sessions"} {
		require.Contains(t, got, name)
	}
	require.NotContains(t, got, "__snkv_ttl_k__users")
	require.NotContains(t, got, "__snkv_ttl_e__users")
	require.Equal(t, []string{"__snkv_crc__default", "__snkv_crc__sessions", "__snkv_crc__users",
		// the triggers that keep the expiry copy true
		"__snkv_ttl_cd__sessions", "__snkv_ttl_ci__sessions", "__snkv_ttl_cu__sessions", "__snkv_ttl_cw__sessions", "__snkv_ttl_cx__sessions",
		"__snkv_ttl_td__sessions", "__snkv_ttl_ti__sessions", "__snkv_ttl_tu__sessions"},
		shell(t, f.path, `SELECT name FROM sqlite_schema WHERE type = 'trigger' ORDER BY name;`))
	require.Equal(t, []string{"default", "sessions", "users"},
		shell(t, f.path, `SELECT name FROM "__snkv_catalog" ORDER BY name;`))

	// Dropping the column family removes its hidden tables and triggers too.
	db = f.open(t)
	require.NoError(t, db.DropColumnFamily("sessions"))
	require.NoError(t, db.Close())
	for _, name := range tables(t, f.path) {
		require.NotContains(t, name, "sessions")
	}
	require.Equal(t, []string{"__snkv_crc__default", "__snkv_crc__users"},
		shell(t, f.path, `SELECT name FROM sqlite_schema WHERE type = 'trigger' ORDER BY name;`))
}

func TestShellReadsRows(t *testing.T) {
	f := newFixture(t)
	db := f.open(t)
	users, err := db.CreateColumnFamily("users")
	require.NoError(t, err)
	data := map[string][]byte{
		"user:alice":       []byte(`{"name":"Alice"}`),
		"user:bob":         {0x00, 0x01, 0xfe, 0xff},
		"\x00binary\xff":   []byte("binary key"),
		"\xff\xff":         []byte("sorts last"),
		"user:empty-value": {},
	}
	for k, v := range data {
		require.NoError(t, users.Put([]byte(k), v))
	}
	require.NoError(t, db.Put([]byte("in-default"), []byte("x")))
	require.NoError(t, db.Close())

	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return bytes.Compare([]byte(a), []byte(b)) })
	var want []string
	for _, k := range keys {
		want = append(want, upperHex([]byte(k))+"|"+upperHex(data[k]))
	}
	require.Equal(t, want, shell(t, f.path, `SELECT hex(key), hex(value) FROM "users" ORDER BY key;`))

	// Keys and values are BLOBs: text must be cast to match.
	require.Equal(t, []string{"blob|blob"},
		shell(t, f.path, `SELECT DISTINCT typeof(key), typeof(value) FROM "users";`))
	require.Equal(t, []string{`{"name":"Alice"}`},
		shell(t, f.path, `SELECT CAST(value AS TEXT) FROM "users" WHERE key = CAST('user:alice' AS BLOB);`))
	require.Equal(t, []string{"0"},
		shell(t, f.path, `SELECT count(*) FROM "users" WHERE key = 'user:alice';`))
	require.Equal(t, []string{"0"},
		shell(t, f.path, `SELECT length(value) FROM "users" WHERE key = CAST('user:empty-value' AS BLOB);`))
	require.Equal(t, []string{"in-default|x"},
		shell(t, f.path, `SELECT CAST(key AS TEXT), CAST(value AS TEXT) FROM "default";`))
}

func TestShellHeader(t *testing.T) {
	f := newFixture(t)
	db := f.open(t)
	require.NoError(t, db.Put([]byte("k"), []byte("v")))
	require.NoError(t, db.Close())

	got := shell(t, f.path, "PRAGMA application_id;\nPRAGMA user_version;\nPRAGMA auto_vacuum;\nPRAGMA journal_mode;")
	require.Equal(t, []string{
		strconv.Itoa(catalog.ApplicationID),
		strconv.Itoa(catalog.BaseFormat), // no column family has used TTL yet
		"2",                              // INCREMENTAL
		"wal",
	}, got)
	require.Equal(t, "snkv", string(be64(catalog.ApplicationID)[4:]))
	require.Equal(t, []string{"ok"}, shell(t, f.path, "PRAGMA integrity_check;"))
}

func TestShellIntegrityCheckAfterTTLWork(t *testing.T) {
	f := newFixture(t)
	db := f.open(t)
	sessions := writeSessions(t, db)
	require.NoError(t, db.PutTTL([]byte("d"), []byte("1"), time.Minute))
	f.clock.Advance(time.Minute)
	n, err := db.PurgeExpiredAll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 3, n, "sess:bob, sess:dave and d expired")
	require.NoError(t, sessions.Delete([]byte("sess:alice")))
	require.NoError(t, db.Close())

	require.Equal(t, []string{"ok"}, shell(t, f.path, "PRAGMA integrity_check;"))
	require.Equal(t, []string{"sess:carol", "sess:permanent"},
		shell(t, f.path, `SELECT CAST(key AS TEXT) FROM "sessions" ORDER BY key;`))
	require.Equal(t, []string{"sess:carol"},
		shell(t, f.path, `SELECT CAST(key AS TEXT) FROM "__snkv_ttl_k__sessions";`))
	require.Equal(t, []string{"0|0|0"},
		shell(t, f.path, `SELECT (SELECT count(*) FROM "default"), (SELECT count(*) FROM "__snkv_ttl_k__default"), (SELECT count(*) FROM "__snkv_ttl_e__default");`))
}

func TestShellTTLRows(t *testing.T) {
	f := newFixture(t)
	db := f.open(t)
	writeSessions(t, db)
	require.NoError(t, db.Close())

	// Key index: key -> 8-byte big-endian expiry in ms since the epoch.
	type row struct {
		key   string
		expMs int64
	}
	var want []row
	for k, d := range sessionTTLs {
		want = append(want, row{k, start.Add(d).UnixMilli()})
	}
	slices.SortFunc(want, func(a, b row) int { return strings.Compare(a.key, b.key) })
	var got []row
	for _, line := range shell(t, f.path, `SELECT hex(key), hex(expire_ms) FROM "__snkv_ttl_k__sessions" ORDER BY key;`) {
		k, e, ok := strings.Cut(line, "|")
		require.True(t, ok, line)
		key, err := hex.DecodeString(k)
		require.NoError(t, err)
		exp, err := hex.DecodeString(e)
		require.NoError(t, err)
		require.Len(t, exp, 8)
		got = append(got, row{string(key), int64(binary.BigEndian.Uint64(exp))})
	}
	require.Equal(t, want, got)

	// Expiry index: (BE64 expiry, key), so that it sorts by expiry time.
	slices.SortFunc(want, func(a, b row) int { return int(a.expMs - b.expMs) })
	var wantIndex []string
	for _, r := range want {
		wantIndex = append(wantIndex, upperHex(be64(r.expMs))+"|"+upperHex([]byte(r.key)))
	}
	require.Equal(t, wantIndex, shell(t, f.path, `SELECT hex(expire_ms), hex(key) FROM "__snkv_ttl_e__sessions" ORDER BY expire_ms, key;`))

	// The listing of docs/format.md: expiring keys, soonest first, decoded.
	var wantListing []string
	for _, r := range want {
		wantListing = append(wantListing, fmt.Sprintf("%s|%d|%s", r.key, r.expMs,
			time.UnixMilli(r.expMs).UTC().Format("2006-01-02 15:04:05.000")))
	}
	require.Equal(t, wantListing, shell(t, f.path, `WITH RECURSIVE e(key, hx, ms) AS (
  SELECT key, hex(expire_ms), 0 FROM "__snkv_ttl_e__sessions"
  UNION ALL
  SELECT key, substr(hx, 2), ms * 16 + instr('0123456789ABCDEF', substr(hx, 1, 1)) - 1
  FROM e WHERE hx <> '')
SELECT CAST(key AS TEXT) AS key, ms AS expire_ms,
       strftime('%Y-%m-%d %H:%M:%f', ms / 1000.0, 'unixepoch') AS expires_utc
FROM e WHERE hx = '' ORDER BY ms, key;`))

	// The read view joins the expiry in; permanent keys have NULL.
	require.Equal(t, []string{"sess:permanent|forever|1"},
		shell(t, f.path, `SELECT CAST(key AS TEXT), CAST(value AS TEXT), expire_ms IS NULL FROM "__snkv_view__sessions" WHERE expire_ms IS NULL;`))
}

func TestShellWritesKeepTTLTablesInStep(t *testing.T) {
	f := newFixture(t)
	db := f.open(t)
	writeSessions(t, db)
	require.NoError(t, db.Close())

	countFor := func(key string) string {
		lit := blobLiteral([]byte(key))
		lines := shell(t, f.path, fmt.Sprintf(`SELECT (SELECT count(*) FROM "sessions" WHERE key = %[1]s), (SELECT count(*) FROM "__snkv_ttl_k__sessions" WHERE key = %[1]s), (SELECT count(*) FROM "__snkv_ttl_e__sessions" WHERE key = %[1]s);`, lit))
		require.Len(t, lines, 1)
		return lines[0]
	}
	require.Equal(t, "1|1|1", countFor("sess:alice"))
	require.Equal(t, "1|1|1", countFor("sess:bob"))

	// A DELETE typed into the shell also removes the key's TTL rows (the
	// triggers); an UPDATE of the value drops its TTL (the key becomes
	// permanent), as Put does.
	shell(t, f.path, `DELETE FROM "sessions" WHERE key = CAST('sess:alice' AS BLOB);`)
	require.Equal(t, "0|0|0", countFor("sess:alice"))
	shell(t, f.path, `UPDATE "sessions" SET value = CAST('rewritten' AS BLOB) WHERE key = CAST('sess:bob' AS BLOB);`)
	require.Equal(t, "1|0|0", countFor("sess:bob"))
	require.Equal(t, "1|1|1", countFor("sess:carol"))
	require.Equal(t, []string{"ok"}, shell(t, f.path, "PRAGMA integrity_check;"))

	// A table of the user's own, added beside the store, is never taken
	// for a column family.
	shell(t, f.path, `CREATE TABLE audit (at INTEGER, what TEXT); INSERT INTO audit VALUES (1, 'shell edits');`)

	db = f.open(t)
	defer db.Close()
	ctx := context.Background()
	require.NoError(t, db.IntegrityCheck(ctx))
	names, err := db.ListColumnFamilies()
	require.NoError(t, err)
	require.Equal(t, []string{"default", "sessions"}, names)
	sessions, err := db.OpenColumnFamily("sessions")
	require.NoError(t, err)

	_, err = sessions.Get([]byte("sess:alice"))
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	v, d, err := sessions.GetTTL([]byte("sess:bob"))
	require.NoError(t, err)
	require.Equal(t, "rewritten", string(v))
	require.Equal(t, kvstore.NoTTL, d)
	d, err = sessions.TTL([]byte("sess:carol"))
	require.NoError(t, err)
	require.Equal(t, sessionTTLs["sess:carol"], d)

	// Past every TTL, only the permanent keys remain, and purge finds
	// exactly the two expired keys the shell left alone.
	f.clock.Advance(48 * time.Hour)
	n, err := sessions.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n, "sess:carol and sess:dave")
	var keys []string
	for e, err := range sessions.All() {
		require.NoError(t, err)
		keys = append(keys, string(e.Key))
	}
	require.Equal(t, []string{"sess:bob", "sess:permanent"}, keys)
	require.NoError(t, db.IntegrityCheck(ctx))
}

// shellErr runs SQL with the sqlite3 shell and returns its combined output
// and error, for statements that are meant to fail.
func shellErr(t *testing.T, file, sql string) (string, error) {
	t.Helper()
	out, errs, err := testutil.RunShell(t, sql, "-batch", "-bail", file)
	return out + errs, err
}
