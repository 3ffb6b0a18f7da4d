package kvstore_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // database/sql driver, to inspect the hidden tables as another tool would
)

// The TTL tests' fixture (a file store on a manual clock) and the helpers
// that look at its hidden TTL tables as another tool would. The tests are
// split by concern: ttl_expiry (when a key expires and what its TTL reads),
// ttl_tables (the hidden tables' rows and lifecycle), ttl_purge
// (PurgeExpired), ttl_lazy (expired keys deleted by the reads that meet
// them), ttl_iter (iteration and cursors), ttl_tx (transactions),
// ttl_concurrency (goroutines and other stores on the file), ttl_limits
// (the clock's and the expiry's ranges).

// ttlStart is where every manual clock of these tests starts.
var ttlStart = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// ttlFixture is a file store driven by a manual clock.
type ttlFixture struct {
	db   *kvstore.Store
	path string
	clk  *kvstore.ManualClock
	opts kvstore.Options
}

// newTTLFixture opens a new file store whose clock only moves when the test
// says so. The store is checked (as check does) and closed when the test
// ends.
func newTTLFixture(t *testing.T) *ttlFixture {
	t.Helper()
	clk := kvstore.NewManualClock(ttlStart)
	f := &ttlFixture{path: filepath.Join(t.TempDir(), "ttl.db"), clk: clk, opts: kvstore.Options{Clock: clk}}
	f.open(t)
	return f
}

func (f *ttlFixture) open(t *testing.T) {
	t.Helper()
	db, err := kvstore.Open(f.path, f.opts)
	require.NoError(t, err)
	f.db = db
	t.Cleanup(func() {
		// Every test ends with the integrity check of the store it left
		// open (SQLite's, and the agreement of the tables).
		if err := db.IntegrityCheck(context.Background()); err != nil && !errors.Is(err, kvstore.ErrClosed) {
			t.Errorf("integrity check at the end: %v", err)
		}
		if err := db.Close(); err != nil && !errors.Is(err, kvstore.ErrClosed) {
			t.Errorf("close: %v", err)
		}
	})
}

// reopen closes the store and opens the same file with the same clock.
func (f *ttlFixture) reopen(t *testing.T) {
	t.Helper()
	require.NoError(t, f.db.Close())
	f.open(t)
}

// cf creates column family name.
func (f *ttlFixture) cf(t *testing.T, name string) *kvstore.ColumnFamily {
	t.Helper()
	cf, err := f.db.CreateColumnFamily(name)
	require.NoError(t, err)
	return cf
}

// checkEmptied asserts that cf has no row left in any of its three
// tables and counts no key, that it takes TTL writes as before, and that
// the store passes its integrity check.
func (f *ttlFixture) checkEmptied(t *testing.T, cf *kvstore.ColumnFamily) {
	t.Helper()
	require.Equal(t, [3]int64{0, 0, 0}, ttlCounts(t, f.path, cf.Name()))
	n, err := cf.Count()
	require.NoError(t, err)
	require.Zero(t, n)
	require.NoError(t, cf.PutTTL([]byte("again"), []byte("v"), time.Second))
	ttlHas(t, cf, "again", time.Second)
}

// elsewhere runs fn on another store on the file, as another process
// would, and closes it.
func (f *ttlFixture) elsewhere(t *testing.T, fn func(other *kvstore.Store) error) {
	t.Helper()
	other, err := kvstore.Open(f.path, f.opts)
	require.NoError(t, err)
	require.NoError(t, errors.Join(fn(other), other.Close()))
}

// putTTLIn writes key (value "v") with ttl into column family cf of s,
// creating cf if it does not exist.
func putTTLIn(s *kvstore.Store, cf, key string, ttl time.Duration) error {
	c, err := s.ColumnFamilyOrCreate(cf)
	if err != nil {
		return err
	}
	return c.PutTTL([]byte(key), []byte("v"), ttl)
}

// check asserts that the store passes its integrity check (SQLite's, and
// the agreement of every column family's three tables).
func (f *ttlFixture) check(t *testing.T) {
	t.Helper()
	require.NoError(t, f.db.IntegrityCheck(context.Background()))
}

// stats returns the store's counters.
func (f *ttlFixture) stats(t *testing.T) kvstore.Stats {
	t.Helper()
	st, err := f.db.Stats(context.Background())
	require.NoError(t, err)
	return st
}

// ttlQuote quotes an SQL identifier.
func ttlQuote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// ttlRawQuery runs fn on a fresh read-only database/sql connection to the
// store file, as another tool would open it.
func ttlRawQuery(t *testing.T, path string, fn func(db *sql.DB)) {
	t.Helper()
	u := "file:" + (&url.URL{Path: filepath.ToSlash(path)}).EscapedPath() + "?mode=ro"
	db, err := sql.Open("sqlite", u)
	require.NoError(t, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	fn(db)
}

func ttlRawInt(t *testing.T, path, q string, args ...any) int64 {
	t.Helper()
	var n int64
	ttlRawQuery(t, path, func(db *sql.DB) {
		require.NoError(t, db.QueryRow(q, args...).Scan(&n), q)
	})
	return n
}

func ttlTableExists(t *testing.T, path, name string) bool {
	t.Helper()
	return ttlRawInt(t, path, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, name) > 0
}

// ttlCounts returns the row counts of a column family's data table, key
// index and expiry index; -1 for a table that does not exist.
func ttlCounts(t *testing.T, path, cf string) [3]int64 {
	t.Helper()
	var out [3]int64
	for i, name := range []string{cf, layout.KeysPrefix + cf, layout.ExpiryPrefix + cf} {
		if !ttlTableExists(t, path, name) {
			out[i] = -1
			continue
		}
		out[i] = ttlRawInt(t, path, `SELECT count(*) FROM `+ttlQuote(name))
	}
	return out
}

// ttlKeyRows returns how many rows key has in the data table, the key index
// and the expiry index of cf (0 where a hidden table does not exist).
func ttlKeyRows(t *testing.T, path, cf, key string) [3]int64 {
	t.Helper()
	var out [3]int64
	out[0] = ttlRawInt(t, path, `SELECT count(*) FROM `+ttlQuote(cf)+` WHERE key = ?`, []byte(key))
	if ttlTableExists(t, path, layout.KeysPrefix+cf) {
		out[1] = ttlRawInt(t, path, `SELECT count(*) FROM `+ttlQuote(layout.KeysPrefix+cf)+` WHERE key = ?`, []byte(key))
	}
	if ttlTableExists(t, path, layout.ExpiryPrefix+cf) {
		out[2] = ttlRawInt(t, path, `SELECT count(*) FROM `+ttlQuote(layout.ExpiryPrefix+cf)+` WHERE key = ?`, []byte(key))
	}
	return out
}

// ttlHidden lists the hidden schema objects that carry cf's TTL state.
func ttlHidden(t *testing.T, path, cf string) []string {
	t.Helper()
	var names []string
	ttlRawQuery(t, path, func(db *sql.DB) {
		rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE name IN (?, ?, ?, ?, ?) ORDER BY name`,
			layout.KeysPrefix+cf, layout.ExpiryPrefix+cf, layout.OnUpdatePrefix+cf, layout.OnDeletePrefix+cf, layout.OnInsertPrefix+cf)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var n string
			require.NoError(t, rows.Scan(&n))
			names = append(names, n)
		}
		require.NoError(t, rows.Err())
	})
	return names
}

// ttlIndexEntry is one decoded row of an expiry index.
type ttlIndexEntry struct {
	exp int64
	key string
}

// ttlIndex returns cf's expiry index in stored order, decoded.
func ttlIndex(t *testing.T, path, cf string) []ttlIndexEntry {
	t.Helper()
	var out []ttlIndexEntry
	ttlRawQuery(t, path, func(db *sql.DB) {
		rows, err := db.Query(`SELECT expire_ms, key FROM ` + ttlQuote(layout.ExpiryPrefix+cf) + ` ORDER BY expire_ms, key`)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var eb, key []byte
			require.NoError(t, rows.Scan(&eb, &key))
			exp, err := expiry.Decode(eb)
			require.NoError(t, err)
			out = append(out, ttlIndexEntry{exp, string(key)})
		}
		require.NoError(t, rows.Err())
	})
	return out
}

// ttlKeyExpiry returns the expiry stored in cf's key index for key.
func ttlKeyExpiry(t *testing.T, path, cf, key string) (int64, bool) {
	t.Helper()
	var raw []byte
	found := true
	ttlRawQuery(t, path, func(db *sql.DB) {
		err := db.QueryRow(`SELECT expire_ms FROM `+ttlQuote(layout.KeysPrefix+cf)+` WHERE key = ?`, []byte(key)).Scan(&raw)
		if errors.Is(err, sql.ErrNoRows) {
			found = false
			return
		}
		require.NoError(t, err)
	})
	if !found {
		return 0, false
	}
	exp, err := expiry.Decode(raw)
	require.NoError(t, err)
	return exp, true
}

// ttlKeys lists the keys of cf's data table, physically present or not yet
// purged, in order.
func ttlKeys(t *testing.T, path, cf string) []string {
	t.Helper()
	var out []string
	ttlRawQuery(t, path, func(db *sql.DB) {
		rows, err := db.Query(`SELECT key FROM ` + ttlQuote(cf) + ` ORDER BY key`)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var k []byte
			require.NoError(t, rows.Scan(&k))
			out = append(out, string(k))
		}
		require.NoError(t, rows.Err())
	})
	return out
}

func ttlCollect(t *testing.T, seq func(func(kvstore.Entry, error) bool)) []string {
	t.Helper()
	var keys []string
	for e, err := range seq {
		require.NoError(t, err)
		keys = append(keys, string(e.Key))
	}
	return keys
}

func ttlGet(t *testing.T, cf *kvstore.ColumnFamily, key, want string) {
	t.Helper()
	v, err := cf.Get([]byte(key))
	require.NoError(t, err, "get %q", key)
	require.Equal(t, want, string(v), "get %q", key)
}

func ttlGone(t *testing.T, cf *kvstore.ColumnFamily, key string) {
	t.Helper()
	_, err := cf.Get([]byte(key))
	require.ErrorIs(t, err, kvstore.ErrNotFound, "get %q", key)
}

func ttlHas(t *testing.T, cf *kvstore.ColumnFamily, key string, want time.Duration) {
	t.Helper()
	d, err := cf.TTL([]byte(key))
	require.NoError(t, err, "ttl %q", key)
	require.Equal(t, want, d, "ttl %q", key)
}

const ttlDef = kvstore.DefaultColumnFamily

// ttlPurge runs PurgeExpired of a column family (or of the store's default
// one) and requires it to purge want keys.
func ttlPurge(t *testing.T, cf interface {
	PurgeExpired(context.Context) (int, error)
}, want int) {
	t.Helper()
	n, err := cf.PurgeExpired(context.Background())
	require.NoError(t, err)
	require.Equal(t, want, n)
}
