package kvstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/ttl"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // database/sql driver, to inspect the hidden tables as another tool would
)

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
// says so. The store is closed when the test ends.
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
	for i, name := range []string{cf, ttl.KeysPrefix + cf, ttl.ExpiryPrefix + cf} {
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
	if ttlTableExists(t, path, ttl.KeysPrefix+cf) {
		out[1] = ttlRawInt(t, path, `SELECT count(*) FROM `+ttlQuote(ttl.KeysPrefix+cf)+` WHERE key = ?`, []byte(key))
	}
	if ttlTableExists(t, path, ttl.ExpiryPrefix+cf) {
		out[2] = ttlRawInt(t, path, `SELECT count(*) FROM `+ttlQuote(ttl.ExpiryPrefix+cf)+` WHERE key = ?`, []byte(key))
	}
	return out
}

// ttlHidden lists the hidden schema objects that carry cf's TTL state.
func ttlHidden(t *testing.T, path, cf string) []string {
	t.Helper()
	var names []string
	ttlRawQuery(t, path, func(db *sql.DB) {
		rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE name IN (?, ?, ?, ?, ?) ORDER BY name`,
			ttl.KeysPrefix+cf, ttl.ExpiryPrefix+cf, ttl.OnUpdatePrefix+cf, ttl.OnDeletePrefix+cf, ttl.OnInsertPrefix+cf)
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
		rows, err := db.Query(`SELECT expire_ms, key FROM ` + ttlQuote(ttl.ExpiryPrefix+cf) + ` ORDER BY expire_ms, key`)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var eb, key []byte
			require.NoError(t, rows.Scan(&eb, &key))
			exp, err := ttl.Decode(eb)
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
		err := db.QueryRow(`SELECT expire_ms FROM `+ttlQuote(ttl.KeysPrefix+cf)+` WHERE key = ?`, []byte(key)).Scan(&raw)
		if errors.Is(err, sql.ErrNoRows) {
			found = false
			return
		}
		require.NoError(t, err)
	})
	if !found {
		return 0, false
	}
	exp, err := ttl.Decode(raw)
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

func TestTTLBasicExpiry(t *testing.T) {
	f := newTTLFixture(t)
	db := f.db
	require.NoError(t, db.PutTTL([]byte("session"), []byte("tok"), 10*time.Second))
	ttlGet(t, db.Default(), "session", "tok")
	ok, err := db.Exists([]byte("session"))
	require.NoError(t, err)
	require.True(t, ok)

	f.clk.Advance(10*time.Second - time.Millisecond)
	ttlGet(t, db.Default(), "session", "tok")
	v, left, err := db.GetTTL([]byte("session"))
	require.NoError(t, err)
	require.Equal(t, "tok", string(v))
	require.Equal(t, time.Millisecond, left)

	// A key is expired from its expiry instant on.
	f.clk.Advance(time.Millisecond)
	ttlGone(t, db.Default(), "session")
	ok, err = db.Exists([]byte("session"))
	require.NoError(t, err)
	require.False(t, ok)
	f.check(t)
}

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

func TestTTLPutMakesKeyPermanent(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	db := f.db
	require.NoError(t, db.PutTTL([]byte("k"), []byte("old"), time.Minute))
	require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, ttlDef, "k"))

	require.NoError(t, db.Put([]byte("k"), []byte("new")))
	ttlHas(t, db.Default(), "k", kvstore.NoTTL)
	require.Equal(t, [3]int64{1, 0, 0}, ttlKeyRows(t, f.path, ttlDef, "k"), "the index rows are gone")

	f.clk.Advance(2 * time.Minute)
	ttlGet(t, db.Default(), "k", "new")
	n, err := db.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "a stale index row would let purge delete a permanent key")
	ttlGet(t, db.Default(), "k", "new")
	f.check(t)
}

func TestTTLPutTTLAfterPutAppliesTTL(t *testing.T) {
	f := newTTLFixture(t)
	db := f.db
	require.NoError(t, db.Put([]byte("k"), []byte("plain")))
	ttlHas(t, db.Default(), "k", kvstore.NoTTL)

	require.NoError(t, db.PutTTL([]byte("k"), []byte("timed"), 30*time.Second))
	ttlHas(t, db.Default(), "k", 30*time.Second)
	ttlGet(t, db.Default(), "k", "timed")
	exp, ok := ttlKeyExpiry(t, f.path, ttlDef, "k")
	require.True(t, ok)
	require.Equal(t, ttlStart.Add(30*time.Second).UnixMilli(), exp)
	require.Equal(t, []ttlIndexEntry{{exp, "k"}}, ttlIndex(t, f.path, ttlDef))

	f.clk.Advance(30 * time.Second)
	ttlGone(t, db.Default(), "k")
	f.check(t)
}

func TestTTLChangeReplacesOldTTL(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "sessions")
	require.NoError(t, cf.PutTTL([]byte("k"), []byte("v1"), 60*time.Second))
	require.NoError(t, cf.PutTTL([]byte("k"), []byte("v2"), 120*time.Second))
	ttlHas(t, cf, "k", 120*time.Second)
	ttlGet(t, cf, "k", "v2")

	newExp := ttlStart.Add(120 * time.Second).UnixMilli()
	require.Equal(t, []ttlIndexEntry{{newExp, "k"}}, ttlIndex(t, f.path, "sessions"), "the old index row is gone")
	exp, ok := ttlKeyExpiry(t, f.path, "sessions", "k")
	require.True(t, ok)
	require.Equal(t, newExp, exp)

	// Past the old expiry the key lives on, and purge leaves it alone.
	f.clk.Advance(61 * time.Second)
	ttlGet(t, cf, "k", "v2")
	n, err := cf.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	ttlHas(t, cf, "k", 59*time.Second)

	// A shorter TTL replaces a longer one too.
	require.NoError(t, cf.PutTTL([]byte("k"), []byte("v3"), 5*time.Second))
	ttlHas(t, cf, "k", 5*time.Second)
	require.Len(t, ttlIndex(t, f.path, "sessions"), 1)
	f.clk.Advance(5 * time.Second)
	ttlGone(t, cf, "k")
	require.Equal(t, [3]int64{0, 0, 0}, ttlCounts(t, f.path, "sessions"))
	f.check(t)
}

func TestTTLDeleteRemovesAllRows(t *testing.T) {
	f := newTTLFixture(t)
	for _, cf := range []*kvstore.ColumnFamily{f.db.Default(), f.cf(t, "c")} {
		require.NoError(t, cf.PutTTL([]byte("k"), []byte("v"), time.Minute))
		require.NoError(t, cf.PutTTL([]byte("other"), []byte("v"), time.Minute))
		require.NoError(t, cf.Delete([]byte("k")))
		require.Equal(t, [3]int64{0, 0, 0}, ttlKeyRows(t, f.path, cf.Name(), "k"))
		require.Equal(t, [3]int64{1, 1, 1}, ttlCounts(t, f.path, cf.Name()))
		ttlGone(t, cf, "k")
		require.ErrorIs(t, cf.Delete([]byte("k")), kvstore.ErrNotFound)

		// Deleting an expired key reports it missing and removes it all the same.
		f.clk.Advance(2 * time.Minute)
		require.ErrorIs(t, cf.Delete([]byte("other")), kvstore.ErrNotFound)
		require.Equal(t, [3]int64{0, 0, 0}, ttlCounts(t, f.path, cf.Name()))
	}
	f.check(t)
}

func TestTTLClearRemovesAllRows(t *testing.T) {
	f := newTTLFixture(t)
	cf := f.cf(t, "c")
	for i := range 20 {
		require.NoError(t, cf.PutTTL(fmt.Appendf(nil, "t%02d", i), []byte("v"), time.Minute))
		require.NoError(t, cf.Put(fmt.Appendf(nil, "p%02d", i), []byte("v")))
	}
	require.Equal(t, [3]int64{40, 20, 20}, ttlCounts(t, f.path, "c"))
	require.NoError(t, cf.Clear())
	require.Equal(t, [3]int64{0, 0, 0}, ttlCounts(t, f.path, "c"))
	n, err := cf.Count()
	require.NoError(t, err)
	require.Zero(t, n)
	// TTL writes still work after a clear.
	require.NoError(t, cf.PutTTL([]byte("again"), []byte("v"), time.Second))
	ttlHas(t, cf, "again", time.Second)
	f.check(t)
}

func TestPurgeExpiredEmpty(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	plain := f.cf(t, "plain")
	require.NoError(t, plain.Put([]byte("k"), []byte("v")))

	// A column family that never used TTL: nothing to purge, nothing created.
	n, err := plain.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Empty(t, ttlHidden(t, f.path, "plain"))
	require.False(t, plain.HasTTL())

	// A TTL column family with nothing expired.
	timed := f.cf(t, "timed")
	require.NoError(t, timed.PutTTL([]byte("k"), []byte("v"), time.Hour))
	n, err = timed.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	ttlGet(t, timed, "k", "v")

	// An emptied TTL column family.
	require.NoError(t, timed.Delete([]byte("k")))
	n, err = timed.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Zero(t, n)

	total, err := f.db.PurgeExpiredAll(ctx)
	require.NoError(t, err)
	require.Zero(t, total)
	f.check(t)
}

func TestPurgeExpiredSome(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "mix")
	for i := range 30 {
		key := fmt.Appendf(nil, "k%02d", i)
		switch i % 3 {
		case 0:
			require.NoError(t, cf.PutTTL(key, []byte("short"), time.Second))
		case 1:
			require.NoError(t, cf.PutTTL(key, []byte("long"), time.Hour))
		default:
			require.NoError(t, cf.Put(key, []byte("plain")))
		}
	}
	f.clk.Advance(time.Minute)
	before := f.stats(t).Purged
	n, err := cf.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 10, n)
	require.Equal(t, before+10, f.stats(t).Purged)
	require.Equal(t, [3]int64{20, 10, 10}, ttlCounts(t, f.path, "mix"))
	for i := range 30 {
		key := fmt.Sprintf("k%02d", i)
		switch i % 3 {
		case 0:
			require.Equal(t, [3]int64{0, 0, 0}, ttlKeyRows(t, f.path, "mix", key))
		case 1:
			ttlGet(t, cf, key, "long")
			ttlHas(t, cf, key, time.Hour-time.Minute)
		default:
			ttlGet(t, cf, key, "plain")
			ttlHas(t, cf, key, kvstore.NoTTL)
		}
	}
	n, err = cf.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	f.check(t)
}

func TestPurgeExpiredAll(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "all")
	for i := range 50 {
		require.NoError(t, cf.PutTTL(fmt.Appendf(nil, "k%02d", i), []byte("v"), time.Duration(i+1)*time.Second))
	}
	f.clk.Advance(50 * time.Second)
	n, err := cf.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 50, n)
	require.Equal(t, [3]int64{0, 0, 0}, ttlCounts(t, f.path, "all"))
	c, err := cf.Count()
	require.NoError(t, err)
	require.Zero(t, c)
	// The column family works on as before.
	require.NoError(t, cf.PutTTL([]byte("new"), []byte("v"), time.Second))
	ttlHas(t, cf, "new", time.Second)
	f.check(t)
}

// Purge walks the expiry index in expiry order, not key order, and stops at
// the first live entry: live keys keep their values and TTLs, and the count
// is exact.
func TestPurgeExpiredOrder(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "order")
	// Key names run against expiry order: "k19" expires first.
	for i := range 20 {
		key := fmt.Appendf(nil, "k%02d", 19-i)
		require.NoError(t, cf.PutTTL(key, []byte("v"), time.Duration(i+1)*time.Second))
	}
	// Live keys that sort before and after every expiring one.
	require.NoError(t, cf.PutTTL([]byte("a-live"), []byte("a"), time.Hour))
	require.NoError(t, cf.Put([]byte("z-plain"), []byte("z")))

	idx := ttlIndex(t, f.path, "order")
	require.Len(t, idx, 21)
	for i := 1; i < len(idx); i++ {
		require.Less(t, idx[i-1].exp, idx[i].exp, "the index sorts by expiry")
	}
	require.Equal(t, "k19", idx[0].key)
	require.Equal(t, "a-live", idx[len(idx)-1].key)

	f.clk.Advance(10500 * time.Millisecond) // k19..k10 expired
	n, err := cf.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 10, n)

	var want []string
	for i := range 10 {
		want = append(want, fmt.Sprintf("k%02d", i))
	}
	want = append([]string{"a-live"}, append(want, "z-plain")...)
	require.Equal(t, want, ttlKeys(t, f.path, "order"))
	for i := range 10 {
		key := fmt.Sprintf("k%02d", i)
		ttlHas(t, cf, key, time.Duration(20-i)*time.Second-10500*time.Millisecond)
	}
	ttlHas(t, cf, "a-live", time.Hour-10500*time.Millisecond)
	ttlGet(t, cf, "z-plain", "z")
	idx = ttlIndex(t, f.path, "order")
	require.Len(t, idx, 11)
	require.Greater(t, idx[0].exp, f.clk.Now().UnixMilli(), "the oldest entry left is live")

	// One more second: exactly one more key.
	f.clk.Advance(time.Second)
	n, err = cf.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	ttlGone(t, cf, "k09")
	ttlGet(t, cf, "k08", "v")
	f.check(t)
}

func TestTTLRemaining(t *testing.T) {
	f := newTTLFixture(t)
	for _, cf := range []*kvstore.ColumnFamily{f.db.Default(), f.cf(t, "c")} {
		require.NoError(t, cf.PutTTL([]byte("live"), []byte("v"), 90*time.Second))
		require.NoError(t, cf.Put([]byte("perm"), []byte("p")))
		require.NoError(t, cf.PutTTL([]byte("short"), []byte("s"), time.Second))
		require.NoError(t, cf.PutTTL([]byte("frac"), []byte("f"), 1500*time.Microsecond))

		ttlHas(t, cf, "live", 90*time.Second)
		ttlHas(t, cf, "perm", kvstore.NoTTL)
		ttlHas(t, cf, "frac", 2*time.Millisecond) // rounded up, never early

		v, d, err := cf.GetTTL([]byte("perm"))
		require.NoError(t, err)
		require.Equal(t, "p", string(v))
		require.Equal(t, kvstore.NoTTL, d)

		f.clk.Advance(30 * time.Second)
		ttlHas(t, cf, "live", 60*time.Second)
		v, d, err = cf.GetTTL([]byte("live"))
		require.NoError(t, err)
		require.Equal(t, "v", string(v))
		require.Equal(t, 60*time.Second, d)

		// Expired and missing keys: ErrNotFound, never 0 or NoTTL.
		_, err = cf.TTL([]byte("short"))
		require.ErrorIs(t, err, kvstore.ErrNotFound)
		_, _, err = cf.GetTTL([]byte("frac"))
		require.ErrorIs(t, err, kvstore.ErrNotFound)
		_, err = cf.TTL([]byte("missing"))
		require.ErrorIs(t, err, kvstore.ErrNotFound)
		_, _, err = cf.GetTTL([]byte("missing"))
		require.ErrorIs(t, err, kvstore.ErrNotFound)
	}
	f.check(t)
}

func TestTTLTransactionCommit(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	db := f.db
	cf := f.cf(t, "sessions")
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		require.NoError(t, tx.PutTTL([]byte("a"), []byte("1"), time.Minute))
		require.NoError(t, tx.CF(cf).PutTTL([]byte("b"), []byte("2"), 2*time.Minute))
		require.NoError(t, tx.Put([]byte("c"), []byte("3")))
		// The transaction sees its own TTL writes.
		d, err := tx.TTL([]byte("a"))
		require.NoError(t, err)
		require.Equal(t, time.Minute, d)
		v, d, err := tx.CF(cf).GetTTL([]byte("b"))
		require.NoError(t, err)
		require.Equal(t, "2", string(v))
		require.Equal(t, 2*time.Minute, d)
		// Nobody else does before the commit.
		_, err = db.Get([]byte("a"))
		require.ErrorIs(t, err, kvstore.ErrNotFound)
		require.Equal(t, [3]int64{0, 0, 0}, ttlKeyRows(t, f.path, ttlDef, "a"))
		return nil
	}))
	ttlHas(t, db.Default(), "a", time.Minute)
	ttlHas(t, cf, "b", 2*time.Minute)
	ttlHas(t, db.Default(), "c", kvstore.NoTTL)
	require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, ttlDef, "a"))
	require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, "sessions", "b"))

	// Explicit Begin/Commit.
	tx, err := db.Begin(ctx, true)
	require.NoError(t, err)
	require.NoError(t, tx.CF(cf).PutTTL([]byte("d"), []byte("4"), time.Second))
	require.NoError(t, tx.Commit())
	ttlHas(t, cf, "d", time.Second)
	f.clk.Advance(time.Second)
	ttlGone(t, cf, "d")
	f.check(t)
}

// The reference breaks every later TTL write when the first TTL write of a
// column family is rolled back; here the rollback leaves nothing behind and
// later TTL writes work.
func TestTTLTransactionRollback(t *testing.T) {
	ctx := context.Background()
	errAbort := errors.New("abort")
	f := newTTLFixture(t)
	db := f.db
	fresh := f.cf(t, "fresh")
	require.NoError(t, fresh.Put([]byte("plain"), []byte("p")))

	// First TTL write of both column families, rolled back by Update.
	err := db.Update(ctx, func(tx *kvstore.Tx) error {
		require.NoError(t, tx.PutTTL([]byte("a"), []byte("1"), time.Minute))
		require.NoError(t, tx.CF(fresh).PutTTL([]byte("b"), []byte("2"), time.Minute))
		require.NoError(t, tx.CF(fresh).Expire([]byte("plain"), time.Minute))
		ttlHas(t, tx.CF(fresh), "plain", time.Minute)
		return errAbort
	})
	require.ErrorIs(t, err, errAbort)
	ttlGone(t, db.Default(), "a")
	ttlGone(t, fresh, "b")
	ttlHas(t, fresh, "plain", kvstore.NoTTL)
	require.False(t, fresh.HasTTL())
	require.False(t, db.HasTTL())
	require.Empty(t, ttlHidden(t, f.path, "fresh"), "the hidden tables were rolled back")
	require.Empty(t, ttlHidden(t, f.path, ttlDef))

	// Explicit Begin/Rollback, again as the first TTL write.
	tx, err := db.Begin(ctx, true)
	require.NoError(t, err)
	require.NoError(t, tx.CF(fresh).PutTTL([]byte("c"), []byte("3"), time.Minute))
	require.NoError(t, tx.Rollback())
	ttlGone(t, fresh, "c")
	require.False(t, fresh.HasTTL())
	require.Empty(t, ttlHidden(t, f.path, "fresh"))

	// Later TTL writes work, outside and inside transactions.
	require.NoError(t, fresh.PutTTL([]byte("d"), []byte("4"), time.Minute))
	ttlHas(t, fresh, "d", time.Minute)
	require.True(t, fresh.HasTTL())
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		return tx.PutTTL([]byte("e"), []byte("5"), time.Minute)
	}))
	ttlHas(t, db.Default(), "e", time.Minute)
	require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, "fresh", "d"))
	require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, ttlDef, "e"))

	// A rolled-back TTL write on a column family that already has TTL
	// tables leaves no rows and keeps the tables.
	err = db.Update(ctx, func(tx *kvstore.Tx) error {
		require.NoError(t, tx.CF(fresh).PutTTL([]byte("f"), []byte("6"), time.Minute))
		require.NoError(t, tx.CF(fresh).PutTTL([]byte("d"), []byte("changed"), time.Hour))
		return errAbort
	})
	require.ErrorIs(t, err, errAbort)
	ttlGone(t, fresh, "f")
	ttlGet(t, fresh, "d", "4")
	ttlHas(t, fresh, "d", time.Minute)
	require.True(t, fresh.HasTTL())
	require.Equal(t, [3]int64{2, 1, 1}, ttlCounts(t, f.path, "fresh"))

	// Expiry still works on what was committed.
	f.clk.Advance(time.Minute)
	ttlGone(t, fresh, "d")
	ttlGone(t, db.Default(), "e")
	f.check(t)
}

func TestTTLColumnFamilies(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	sessions := f.cf(t, "sessions")
	tokens := f.cf(t, "tokens")
	for i := range 5 {
		key := fmt.Appendf(nil, "k%d", i)
		require.NoError(t, sessions.PutTTL(key, []byte("s"), time.Second))
		require.NoError(t, tokens.PutTTL(key, []byte("t"), time.Second))
		require.NoError(t, f.db.PutTTL(key, []byte("d"), time.Second))
	}
	require.NoError(t, tokens.Put([]byte("stay"), []byte("t")))
	ttlGet(t, sessions, "k0", "s")
	ttlGet(t, tokens, "k0", "t")
	ttlGet(t, f.db.Default(), "k0", "d")
	require.ElementsMatch(t, []string{ttl.KeysPrefix + "sessions", ttl.ExpiryPrefix + "sessions",
		ttl.OnUpdatePrefix + "sessions", ttl.OnDeletePrefix + "sessions", ttl.OnInsertPrefix + "sessions"}, ttlHidden(t, f.path, "sessions"))

	f.clk.Advance(time.Second)
	// Purging one column family leaves the others' expired keys alone.
	n, err := sessions.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 5, n)
	require.Equal(t, [3]int64{0, 0, 0}, ttlCounts(t, f.path, "sessions"))
	require.Equal(t, [3]int64{6, 5, 5}, ttlCounts(t, f.path, "tokens"))
	require.Equal(t, [3]int64{5, 5, 5}, ttlCounts(t, f.path, ttlDef))

	// A read on one column family expires only its own key.
	ttlGone(t, tokens, "k0")
	require.Equal(t, [3]int64{5, 4, 4}, ttlCounts(t, f.path, "tokens"))
	require.Equal(t, [3]int64{5, 5, 5}, ttlCounts(t, f.path, ttlDef))

	total, err := f.db.PurgeExpiredAll(ctx)
	require.NoError(t, err)
	require.Equal(t, 9, total)
	require.Equal(t, [3]int64{1, 0, 0}, ttlCounts(t, f.path, "tokens"))
	require.Equal(t, [3]int64{0, 0, 0}, ttlCounts(t, f.path, ttlDef))
	ttlGet(t, tokens, "stay", "t")
	f.check(t)
}

func TestTTLDropColumnFamilyRemovesHiddenTables(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "cache")
	other := f.cf(t, "other")
	require.NoError(t, cf.PutTTL([]byte("k"), []byte("v"), time.Minute))
	require.NoError(t, other.PutTTL([]byte("k"), []byte("v"), time.Minute))
	require.Len(t, ttlHidden(t, f.path, "cache"), 5)

	require.NoError(t, f.db.DropColumnFamily("cache"))
	var left int64
	ttlRawQuery(t, f.path, func(db *sql.DB) {
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name LIKE '%cache'`).Scan(&left))
	})
	require.Zero(t, left, "no table, index, trigger or view of the dropped column family is left")
	require.Len(t, ttlHidden(t, f.path, "other"), 5, "other column families keep theirs")
	ttlHas(t, other, "k", time.Minute)
	err := cf.PutTTL([]byte("k"), []byte("v"), time.Minute)
	require.ErrorIs(t, err, kvstore.ErrNotFound, "a handle to a dropped column family fails")

	// A new column family of the same name starts without TTL state.
	again := f.cf(t, "cache")
	require.False(t, again.HasTTL())
	require.Empty(t, ttlHidden(t, f.path, "cache"))
	ttlGone(t, again, "k")
	require.NoError(t, again.PutTTL([]byte("k2"), []byte("v"), time.Second))
	ttlHas(t, again, "k2", time.Second)
	n, err := again.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	f.check(t)
}

func TestTTLHiddenTablesAreNotColumnFamilies(t *testing.T) {
	f := newTTLFixture(t)
	cf := f.cf(t, "c")
	require.NoError(t, cf.PutTTL([]byte("k"), []byte("v"), time.Minute))
	names, err := f.db.ListColumnFamilies()
	require.NoError(t, err)
	require.Equal(t, []string{"c", ttlDef}, names) // sorted bytewise
	for _, name := range []string{ttl.KeysPrefix + "c", ttl.ExpiryPrefix + "c", ttl.KeysPrefix + ttlDef, ttl.ExpiryPrefix + "new"} {
		_, err := f.db.OpenColumnFamily(name)
		require.ErrorIs(t, err, kvstore.ErrReservedName, name)
		_, err = f.db.CreateColumnFamily(name)
		require.ErrorIs(t, err, kvstore.ErrReservedName, name)
		require.ErrorIs(t, f.db.DropColumnFamily(name), kvstore.ErrReservedName, name)
	}
	require.Len(t, ttlHidden(t, f.path, "c"), 5)
	f.check(t)
}

// A zero or negative TTL, and a zero or past expiry time, are errors that
// write nothing: never "no TTL", never "already expired".
func TestTTLInvalid(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "fresh")
	require.NoError(t, cf.Put([]byte("perm"), []byte("p")))
	now := f.clk.Now()
	badTTLs := []time.Duration{0, -1, -time.Second}
	badTimes := []time.Time{{}, now, now.Add(-time.Millisecond), now.Add(-time.Hour)}

	for _, d := range badTTLs {
		require.ErrorIs(t, cf.PutTTL([]byte("k"), []byte("v"), d), kvstore.ErrInvalidTTL, "PutTTL %v", d)
		require.ErrorIs(t, cf.Expire([]byte("perm"), d), kvstore.ErrInvalidTTL, "Expire %v", d)
		_, err := cf.PutIfAbsentTTL([]byte("k"), []byte("v"), d)
		require.ErrorIs(t, err, kvstore.ErrInvalidTTL, "PutIfAbsentTTL %v", d)
		var batch kvstore.Batch
		batch.Put([]byte("b1"), []byte("v"))
		batch.PutTTL([]byte("b2"), []byte("v"), d)
		require.ErrorIs(t, cf.Apply(ctx, &batch), kvstore.ErrInvalidTTL, "batch %v", d)
	}
	for _, at := range badTimes {
		require.ErrorIs(t, cf.PutExpireAt([]byte("k"), []byte("v"), at), kvstore.ErrInvalidTTL, "PutExpireAt %v", at)
		require.ErrorIs(t, cf.ExpireAt([]byte("perm"), at), kvstore.ErrInvalidTTL, "ExpireAt %v", at)
	}
	// Nothing was written, and no TTL state was created.
	for _, k := range []string{"k", "b1", "b2"} {
		ttlGone(t, cf, k)
	}
	ttlGet(t, cf, "perm", "p")
	ttlHas(t, cf, "perm", kvstore.NoTTL)
	require.False(t, cf.HasTTL())
	require.Empty(t, ttlHidden(t, f.path, "fresh"))
	require.Equal(t, [3]int64{1, -1, -1}, ttlCounts(t, f.path, "fresh"))

	// On a key that has a TTL, a bad one leaves value and TTL as they were.
	require.NoError(t, cf.PutTTL([]byte("t"), []byte("old"), time.Minute))
	for _, d := range badTTLs {
		require.ErrorIs(t, cf.PutTTL([]byte("t"), []byte("new"), d), kvstore.ErrInvalidTTL)
		require.ErrorIs(t, cf.Expire([]byte("t"), d), kvstore.ErrInvalidTTL)
	}
	for _, at := range badTimes {
		require.ErrorIs(t, cf.PutExpireAt([]byte("t"), []byte("new"), at), kvstore.ErrInvalidTTL)
		require.ErrorIs(t, cf.ExpireAt([]byte("t"), at), kvstore.ErrInvalidTTL)
	}
	ttlGet(t, cf, "t", "old")
	ttlHas(t, cf, "t", time.Minute)

	// Inside a transaction the error leaves the transaction usable.
	require.NoError(t, f.db.Update(ctx, func(tx *kvstore.Tx) error {
		require.ErrorIs(t, tx.PutTTL([]byte("x"), []byte("v"), 0), kvstore.ErrInvalidTTL)
		require.ErrorIs(t, tx.PutExpireAt([]byte("x"), []byte("v"), time.Time{}), kvstore.ErrInvalidTTL)
		return tx.Put([]byte("y"), []byte("v"))
	}))
	ttlGone(t, f.db.Default(), "x")
	ttlGet(t, f.db.Default(), "y", "v")
	require.False(t, f.db.HasTTL())
	f.check(t)
}

func TestTTLPutExpireAt(t *testing.T) {
	f := newTTLFixture(t)
	at := ttlStart.Add(90 * time.Second)
	require.NoError(t, f.db.PutExpireAt([]byte("k"), []byte("v"), at))
	ttlHas(t, f.db.Default(), "k", 90*time.Second)
	exp, ok := ttlKeyExpiry(t, f.path, ttlDef, "k")
	require.True(t, ok)
	require.Equal(t, at.UnixMilli(), exp)
	f.clk.Set(at.Add(-time.Millisecond))
	ttlGet(t, f.db.Default(), "k", "v")
	f.clk.Set(at)
	ttlGone(t, f.db.Default(), "k")
	f.check(t)
}

func TestTTLReopenPersistence(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "sessions")
	plain := f.cf(t, "plain")
	require.NoError(t, f.db.PutTTL([]byte("a"), []byte("1"), time.Minute))
	require.NoError(t, cf.PutTTL([]byte("b"), []byte("2"), 2*time.Minute))
	require.NoError(t, cf.PutTTL([]byte("c"), []byte("3"), 10*time.Second))
	require.NoError(t, cf.Put([]byte("p"), []byte("4")))
	require.NoError(t, plain.Put([]byte("q"), []byte("5")))

	f.reopen(t)
	cf, err := f.db.OpenColumnFamily("sessions")
	require.NoError(t, err)
	plain, err = f.db.OpenColumnFamily("plain")
	require.NoError(t, err)
	require.True(t, f.db.HasTTL())
	require.True(t, cf.HasTTL())
	require.False(t, plain.HasTTL())
	ttlHas(t, f.db.Default(), "a", time.Minute)
	ttlHas(t, cf, "b", 2*time.Minute)
	ttlHas(t, cf, "p", kvstore.NoTTL)

	// Time passes while the store is closed.
	require.NoError(t, f.db.Close())
	f.clk.Advance(90 * time.Second)
	f.open(t)
	cf, err = f.db.OpenColumnFamily("sessions")
	require.NoError(t, err)
	ttlGone(t, f.db.Default(), "a")
	ttlHas(t, cf, "b", 30*time.Second)
	n, err := cf.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "c expired while the store was closed")
	ttlGet(t, cf, "p", "4")

	f.reopen(t)
	cf, err = f.db.OpenColumnFamily("sessions")
	require.NoError(t, err)
	f.clk.Advance(30 * time.Second)
	ttlGone(t, cf, "b")
	require.Equal(t, [3]int64{1, 0, 0}, ttlCounts(t, f.path, "sessions"))
	require.Equal(t, [3]int64{1, -1, -1}, ttlCounts(t, f.path, "plain"))
	f.check(t)
}

// A column family that never used TTL has no hidden tables, whatever the
// other column families do, and its ordinary operations create none.
func TestTTLNoOverheadWithoutTTL(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	hot := f.cf(t, "hot")
	plain := f.cf(t, "plain")
	for i := range 100 {
		require.NoError(t, hot.PutTTL(fmt.Appendf(nil, "k%03d", i), []byte("v"), time.Second))
	}
	require.NoError(t, plain.Put([]byte("a"), []byte("1")))
	require.NoError(t, plain.Put([]byte("b"), []byte("2")))
	ttlGet(t, plain, "a", "1")
	ok, err := plain.Exists([]byte("b"))
	require.NoError(t, err)
	require.True(t, ok)
	ttlHas(t, plain, "a", kvstore.NoTTL)
	_, err = plain.PutIfAbsent([]byte("c"), []byte("3"))
	require.NoError(t, err)
	require.NoError(t, plain.Persist([]byte("a")))
	require.NoError(t, plain.Delete([]byte("c")))
	var batch kvstore.Batch
	batch.Put([]byte("d"), []byte("4"))
	batch.Delete([]byte("b"))
	require.NoError(t, plain.Apply(ctx, &batch))
	require.Equal(t, []string{"a", "d"}, ttlCollect(t, plain.All()))
	_, err = plain.GetMany([][]byte{[]byte("a"), []byte("zz")})
	require.NoError(t, err)
	n, err := plain.Count()
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	f.clk.Advance(time.Minute)
	purged, err := f.db.PurgeExpiredAll(ctx)
	require.NoError(t, err)
	require.Equal(t, 100, purged)

	require.False(t, plain.HasTTL())
	require.False(t, f.db.HasTTL())
	require.True(t, hot.HasTTL())
	require.Empty(t, ttlHidden(t, f.path, "plain"))
	require.Empty(t, ttlHidden(t, f.path, ttlDef))

	f.reopen(t)
	plain, err = f.db.OpenColumnFamily("plain")
	require.NoError(t, err)
	require.False(t, plain.HasTTL())
	require.Empty(t, ttlHidden(t, f.path, "plain"))
	f.check(t)
}

func TestExpireExpireAtPersist(t *testing.T) {
	f := newTTLFixture(t)
	for _, cf := range []*kvstore.ColumnFamily{f.db.Default(), f.cf(t, "c")} {
		name := cf.Name()
		require.NoError(t, cf.Put([]byte("perm"), []byte("p")))
		require.NoError(t, cf.PutTTL([]byte("timed"), []byte("t"), time.Minute))
		require.NoError(t, cf.PutTTL([]byte("dying"), []byte("d"), time.Second))

		// Expire on a permanent key gives it a TTL without touching the value.
		require.NoError(t, cf.Expire([]byte("perm"), 30*time.Second))
		ttlHas(t, cf, "perm", 30*time.Second)
		ttlGet(t, cf, "perm", "p")
		require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, name, "perm"))

		// Expire on a key with a TTL replaces it; the old index row goes.
		now := f.clk.Now()
		require.NoError(t, cf.Expire([]byte("timed"), 2*time.Hour))
		ttlHas(t, cf, "timed", 2*time.Hour)
		ttlGet(t, cf, "timed", "t")
		exp, ok := ttlKeyExpiry(t, f.path, name, "timed")
		require.True(t, ok)
		require.Equal(t, now.Add(2*time.Hour).UnixMilli(), exp)
		require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, name, "timed"))

		// ExpireAt to an absolute instant.
		at := f.clk.Now().Add(45 * time.Second)
		require.NoError(t, cf.ExpireAt([]byte("timed"), at))
		ttlHas(t, cf, "timed", 45*time.Second)
		exp, _ = ttlKeyExpiry(t, f.path, name, "timed")
		require.Equal(t, at.UnixMilli(), exp)
		require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, name, "timed"))

		// Persist removes the TTL; on a permanent key it changes nothing.
		require.NoError(t, cf.Persist([]byte("perm")))
		ttlHas(t, cf, "perm", kvstore.NoTTL)
		require.Equal(t, [3]int64{1, 0, 0}, ttlKeyRows(t, f.path, name, "perm"))
		require.NoError(t, cf.Persist([]byte("perm")))
		ttlHas(t, cf, "perm", kvstore.NoTTL)
		ttlGet(t, cf, "perm", "p")

		// Missing keys.
		require.ErrorIs(t, cf.Expire([]byte("missing"), time.Minute), kvstore.ErrNotFound)
		require.ErrorIs(t, cf.ExpireAt([]byte("missing"), at), kvstore.ErrNotFound)
		require.ErrorIs(t, cf.Persist([]byte("missing")), kvstore.ErrNotFound)
		ttlGone(t, cf, "missing")

		// Expired keys count as missing and are not brought back.
		f.clk.Advance(time.Second)
		require.ErrorIs(t, cf.Expire([]byte("dying"), time.Hour), kvstore.ErrNotFound)
		require.Equal(t, [3]int64{0, 0, 0}, ttlKeyRows(t, f.path, name, "dying"), "met expired, the key was deleted")
		require.ErrorIs(t, cf.ExpireAt([]byte("dying"), f.clk.Now().Add(time.Hour)), kvstore.ErrNotFound)
		require.ErrorIs(t, cf.Persist([]byte("dying")), kvstore.ErrNotFound)
		ttlGone(t, cf, "dying")
		require.Equal(t, [3]int64{0, 0, 0}, ttlKeyRows(t, f.path, name, "dying"))

		// A persisted key outlives its old expiry; an expired one is gone.
		require.NoError(t, cf.PutTTL([]byte("saved"), []byte("s"), time.Second))
		require.NoError(t, cf.Persist([]byte("saved")))
		f.clk.Advance(time.Minute)
		ttlGet(t, cf, "saved", "s")
		ttlGone(t, cf, "timed")
		require.Equal(t, [3]int64{2, 0, 0}, ttlCounts(t, f.path, name))
	}
	f.check(t)
}

func TestExpireInsideTransaction(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	require.NoError(t, f.db.Put([]byte("k"), []byte("v")))
	require.NoError(t, f.db.Update(ctx, func(tx *kvstore.Tx) error {
		require.NoError(t, tx.Expire([]byte("k"), time.Minute))
		ttlHas(t, tx.Default(), "k", time.Minute)
		require.NoError(t, tx.Persist([]byte("k")))
		ttlHas(t, tx.Default(), "k", kvstore.NoTTL)
		return tx.Expire([]byte("k"), 2*time.Minute)
	}))
	ttlHas(t, f.db.Default(), "k", 2*time.Minute)
	require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, ttlDef, "k"))
	f.check(t)
}

// PutIfAbsent counts an expired key as absent.
func TestTTLPutIfAbsentExpiredIsAbsent(t *testing.T) {
	f := newTTLFixture(t)
	cf := f.cf(t, "c")
	require.NoError(t, cf.PutTTL([]byte("a"), []byte("old"), time.Second))
	require.NoError(t, cf.PutTTL([]byte("b"), []byte("old"), time.Second))
	require.NoError(t, cf.PutTTL([]byte("live"), []byte("old"), time.Hour))

	// A live key is present: nothing changes, its TTL stays.
	wrote, err := cf.PutIfAbsent([]byte("live"), []byte("new"))
	require.NoError(t, err)
	require.False(t, wrote)
	wrote, err = cf.PutIfAbsentTTL([]byte("live"), []byte("new"), time.Second)
	require.NoError(t, err)
	require.False(t, wrote)
	ttlGet(t, cf, "live", "old")
	ttlHas(t, cf, "live", time.Hour)

	f.clk.Advance(time.Second)
	// PutIfAbsent over an expired key writes a permanent key.
	wrote, err = cf.PutIfAbsent([]byte("a"), []byte("new"))
	require.NoError(t, err)
	require.True(t, wrote)
	ttlGet(t, cf, "a", "new")
	ttlHas(t, cf, "a", kvstore.NoTTL)
	require.Equal(t, [3]int64{1, 0, 0}, ttlKeyRows(t, f.path, "c", "a"), "the old TTL rows are gone")

	// PutIfAbsentTTL over an expired key writes the key with its new TTL.
	wrote, err = cf.PutIfAbsentTTL([]byte("b"), []byte("new"), time.Minute)
	require.NoError(t, err)
	require.True(t, wrote)
	ttlGet(t, cf, "b", "new")
	ttlHas(t, cf, "b", time.Minute)
	require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, "c", "b"))

	// On a missing key.
	wrote, err = cf.PutIfAbsentTTL([]byte("fresh"), []byte("v"), 5*time.Second)
	require.NoError(t, err)
	require.True(t, wrote)
	ttlHas(t, cf, "fresh", 5*time.Second)
	wrote, err = cf.PutIfAbsentTTL([]byte("fresh"), []byte("again"), time.Hour)
	require.NoError(t, err)
	require.False(t, wrote)
	ttlHas(t, cf, "fresh", 5*time.Second)

	// Nothing stale is left for purge to act on.
	f.clk.Advance(5 * time.Second)
	n, err := cf.PurgeExpired(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, n) // "fresh"
	ttlGet(t, cf, "a", "new")
	ttlGet(t, cf, "b", "new")
	f.check(t)
}

// PutIfAbsent on a column family that never used TTL, and PutIfAbsentTTL as
// its first TTL write.
func TestTTLPutIfAbsentFirstTTLWrite(t *testing.T) {
	f := newTTLFixture(t)
	cf := f.cf(t, "c")
	wrote, err := cf.PutIfAbsent([]byte("p"), []byte("v"))
	require.NoError(t, err)
	require.True(t, wrote)
	require.False(t, cf.HasTTL())
	wrote, err = cf.PutIfAbsentTTL([]byte("t"), []byte("v"), time.Second)
	require.NoError(t, err)
	require.True(t, wrote)
	require.True(t, cf.HasTTL())
	ttlHas(t, cf, "t", time.Second)
	f.clk.Advance(time.Second)
	wrote, err = cf.PutIfAbsentTTL([]byte("t"), []byte("v2"), time.Second)
	require.NoError(t, err)
	require.True(t, wrote)
	ttlGet(t, cf, "t", "v2")
	f.check(t)
}

func TestTTLBatch(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "c")
	require.NoError(t, cf.PutTTL([]byte("old-ttl"), []byte("o"), time.Hour))
	require.NoError(t, cf.PutTTL([]byte("to-delete"), []byte("x"), time.Hour))
	require.NoError(t, cf.PutTTL([]byte("retimed"), []byte("r"), time.Hour))

	var batch kvstore.Batch
	batch.Put([]byte("plain"), []byte("p"))
	batch.PutTTL([]byte("short"), []byte("s"), 10*time.Second)
	batch.PutTTL([]byte("long"), []byte("l"), 20*time.Second)
	batch.Put([]byte("old-ttl"), []byte("now permanent"))
	batch.Delete([]byte("to-delete"))
	batch.PutTTL([]byte("retimed"), []byte("r2"), 5*time.Second)
	batch.Delete([]byte("never-existed"))
	require.Equal(t, 7, batch.Len())
	require.NoError(t, cf.Apply(ctx, &batch))

	ttlHas(t, cf, "plain", kvstore.NoTTL)
	ttlHas(t, cf, "short", 10*time.Second)
	ttlHas(t, cf, "long", 20*time.Second)
	ttlHas(t, cf, "old-ttl", kvstore.NoTTL)
	ttlHas(t, cf, "retimed", 5*time.Second)
	ttlGet(t, cf, "retimed", "r2")
	ttlGone(t, cf, "to-delete")
	require.Equal(t, [3]int64{0, 0, 0}, ttlKeyRows(t, f.path, "c", "to-delete"))
	require.Equal(t, [3]int64{1, 0, 0}, ttlKeyRows(t, f.path, "c", "old-ttl"))
	require.Equal(t, [3]int64{5, 3, 3}, ttlCounts(t, f.path, "c"))

	f.clk.Advance(15 * time.Second)
	n, err := cf.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n) // short and retimed
	ttlGet(t, cf, "long", "l")

	// A batch inside a transaction rolls back with it, first TTL write included.
	fresh := f.cf(t, "fresh")
	batch.Reset()
	batch.PutTTL([]byte("k"), []byte("v"), time.Minute)
	err = f.db.Update(ctx, func(tx *kvstore.Tx) error {
		require.NoError(t, tx.CF(fresh).Apply(ctx, &batch))
		ttlHas(t, tx.CF(fresh), "k", time.Minute)
		return errors.New("abort")
	})
	require.Error(t, err)
	ttlGone(t, fresh, "k")
	require.Empty(t, ttlHidden(t, f.path, "fresh"))
	require.NoError(t, f.db.Update(ctx, func(tx *kvstore.Tx) error { return tx.CF(fresh).Apply(ctx, &batch) }))
	ttlHas(t, fresh, "k", time.Minute)
	f.check(t)
}

// 300 expired keys and 10 live ones: a purge crosses the 256-key batch
// boundary and removes exactly the expired keys; so do 255, 256 and 257.
func TestPurgeExpiredAcrossBatches(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	for _, expired := range []int{300, 255, 256, 257, 512, 513} {
		t.Run(fmt.Sprint(expired), func(t *testing.T) {
			name := fmt.Sprintf("cf%d", expired)
			cf := f.cf(t, name)
			var batch kvstore.Batch
			for i := range expired {
				batch.PutTTL(fmt.Appendf(nil, "e%04d", i), []byte("x"), time.Duration(1+i%7)*time.Second)
			}
			for i := range 10 {
				batch.PutTTL(fmt.Appendf(nil, "l%04d", i), []byte("live"), time.Hour)
				batch.Put(fmt.Appendf(nil, "p%04d", i), []byte("perm"))
			}
			require.NoError(t, cf.Apply(ctx, &batch))
			f.clk.Advance(10 * time.Second)

			before := f.stats(t)
			n, err := cf.PurgeExpired(ctx)
			require.NoError(t, err)
			require.Equal(t, expired, n)
			after := f.stats(t)
			require.Equal(t, before.Purged+uint64(expired), after.Purged)
			batches := (expired + ttl.PurgeBatch - 1) / ttl.PurgeBatch
			require.GreaterOrEqual(t, after.Commits-before.Commits, uint64(batches), "one transaction per batch of %d", ttl.PurgeBatch)

			require.Equal(t, [3]int64{20, 10, 10}, ttlCounts(t, f.path, name))
			count, err := cf.Count()
			require.NoError(t, err)
			require.EqualValues(t, 20, count)
			for i := range 10 {
				ttlGet(t, cf, fmt.Sprintf("l%04d", i), "live")
				ttlGet(t, cf, fmt.Sprintf("p%04d", i), "perm")
			}
			n, err = cf.PurgeExpired(ctx)
			require.NoError(t, err)
			require.Zero(t, n)
			f.check(t)
		})
	}
}

func TestPurgeExpiredN(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "bounded")
	const total = 600
	var batch kvstore.Batch
	// Key names run against expiry order: "k599" expires first.
	for i := range total {
		batch.PutTTL(fmt.Appendf(nil, "k%03d", total-1-i), []byte("v"), time.Duration(i+1)*time.Millisecond)
	}
	batch.Put([]byte("perm"), []byte("p"))
	require.NoError(t, cf.Apply(ctx, &batch))
	f.clk.Advance(time.Hour)

	remaining := func() []string {
		keys := ttlKeys(t, f.path, "bounded")
		return slices.DeleteFunc(keys, func(k string) bool { return k == "perm" })
	}
	expect := func(left int) []string {
		var out []string
		for i := range left {
			out = append(out, fmt.Sprintf("k%03d", i))
		}
		return out
	}

	n, err := cf.PurgeExpiredN(ctx, 100)
	require.NoError(t, err)
	require.Equal(t, 100, n)
	require.Equal(t, expect(500), remaining(), "the oldest 100 went first")

	n, err = cf.PurgeExpiredN(ctx, 300) // more than one batch
	require.NoError(t, err)
	require.Equal(t, 300, n)
	require.Equal(t, expect(200), remaining())

	n, err = cf.PurgeExpiredN(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, expect(199), remaining())

	n, err = cf.PurgeExpiredN(ctx, 256)
	require.NoError(t, err)
	require.Equal(t, 199, n, "the bound is a maximum")
	require.Empty(t, remaining())

	n, err = cf.PurgeExpiredN(ctx, 10)
	require.NoError(t, err)
	require.Zero(t, n)
	ttlGet(t, cf, "perm", "p")
	require.Equal(t, [3]int64{1, 0, 0}, ttlCounts(t, f.path, "bounded"))
	f.check(t)
}

// PurgeExpired on a handle bound to a write transaction purges inside it
// and rolls back with it.
func TestPurgeExpiredInsideTransaction(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	for i := range 300 {
		require.NoError(t, f.db.PutTTL(fmt.Appendf(nil, "k%03d", i), []byte("v"), time.Second))
	}
	f.clk.Advance(time.Second)
	err := f.db.Update(ctx, func(tx *kvstore.Tx) error {
		n, err := tx.PurgeExpired(ctx)
		require.NoError(t, err)
		require.Equal(t, 300, n)
		return errors.New("abort")
	})
	require.Error(t, err)
	require.Equal(t, [3]int64{300, 300, 300}, ttlCounts(t, f.path, ttlDef))
	require.NoError(t, f.db.Update(ctx, func(tx *kvstore.Tx) error {
		n, err := tx.PurgeExpiredN(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, 10, n)
		return nil
	}))
	require.Equal(t, [3]int64{290, 290, 290}, ttlCounts(t, f.path, ttlDef))
	n, err := f.db.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 290, n)
	f.check(t)
}

// ttlIterCase is one way of iterating a column family.
type ttlIterCase struct {
	name    string
	run     func(t *testing.T, cf *kvstore.ColumnFamily) []string
	want    []string
	visited []string // expired keys the iteration passes over
}

func ttlIterCases() []ttlIterCase {
	cursor := func(opts kvstore.IterOptions, steps func(t *testing.T, c *kvstore.Cursor) []string) func(t *testing.T, cf *kvstore.ColumnFamily) []string {
		return func(t *testing.T, cf *kvstore.ColumnFamily) []string {
			c, err := cf.Cursor(opts)
			require.NoError(t, err)
			got := steps(t, c)
			require.NoError(t, c.Err())
			require.NoError(t, c.Close())
			return got
		}
	}
	pos := func(t *testing.T, c *kvstore.Cursor, ok bool) string {
		t.Helper()
		if !ok {
			require.False(t, c.Valid())
			return "<end>"
		}
		require.True(t, c.Valid())
		return string(c.Key())
	}
	return []ttlIterCase{
		{
			name:    "All",
			run:     func(t *testing.T, cf *kvstore.ColumnFamily) []string { return ttlCollect(t, cf.All()) },
			want:    []string{"a2", "k00", "k02", "k04", "k06", "k08", "z2"},
			visited: []string{"a1", "k01", "k03", "k05", "k07", "k09", "z1"},
		},
		{
			name:    "Backward",
			run:     func(t *testing.T, cf *kvstore.ColumnFamily) []string { return ttlCollect(t, cf.Backward()) },
			want:    []string{"z2", "k08", "k06", "k04", "k02", "k00", "a2"},
			visited: []string{"a1", "k01", "k03", "k05", "k07", "k09", "z1"},
		},
		{
			name:    "Prefix",
			run:     func(t *testing.T, cf *kvstore.ColumnFamily) []string { return ttlCollect(t, cf.Prefix([]byte("k"))) },
			want:    []string{"k00", "k02", "k04", "k06", "k08"},
			visited: []string{"k01", "k03", "k05", "k07", "k09"},
		},
		{
			name: "PrefixReverse",
			run: func(t *testing.T, cf *kvstore.ColumnFamily) []string {
				return ttlCollect(t, cf.Scan(kvstore.IterOptions{Prefix: []byte("k"), Reverse: true}))
			},
			want:    []string{"k08", "k06", "k04", "k02", "k00"},
			visited: []string{"k01", "k03", "k05", "k07", "k09"},
		},
		{
			name: "Range",
			run: func(t *testing.T, cf *kvstore.ColumnFamily) []string {
				return ttlCollect(t, cf.Range([]byte("k03"), []byte("k08")))
			},
			want:    []string{"k04", "k06"},
			visited: []string{"k03", "k05", "k07"},
		},
		{
			name: "RangeReverse",
			run: func(t *testing.T, cf *kvstore.ColumnFamily) []string {
				return ttlCollect(t, cf.Scan(kvstore.IterOptions{Start: []byte("k03"), End: []byte("k08"), Reverse: true}))
			},
			want:    []string{"k06", "k04"},
			visited: []string{"k03", "k05", "k07"},
		},
		{
			name: "CursorSeekNextPrev",
			run: cursor(kvstore.IterOptions{Prefix: []byte("k")}, func(t *testing.T, c *kvstore.Cursor) []string {
				return []string{
					pos(t, c, c.Seek([]byte("k05"))), // expired: lands on k06
					pos(t, c, c.Next()),
					pos(t, c, c.Next()),
					pos(t, c, c.Prev()), // from the end: the last key
					pos(t, c, c.Prev()),
					pos(t, c, c.Prev()),
					pos(t, c, c.Seek([]byte("k07"))),
				}
			}),
			want:    []string{"k06", "k08", "<end>", "k08", "k06", "k04", "k08"},
			visited: []string{"k05", "k07", "k09"},
		},
		{
			name: "CursorReverse",
			run: cursor(kvstore.IterOptions{Prefix: []byte("k"), Reverse: true}, func(t *testing.T, c *kvstore.Cursor) []string {
				return []string{
					pos(t, c, c.Seek([]byte("k05"))), // largest <= k05 that is live
					pos(t, c, c.Next()),
					pos(t, c, c.Prev()),
					pos(t, c, c.First()),
					pos(t, c, c.Last()),
				}
			}),
			want:    []string{"k04", "k02", "k04", "k08", "k00"},
			visited: []string{"k05", "k03", "k09"},
		},
	}
}

// ttlIterSetup writes k00..k09 (odd keys expire soon, even keys are
// permanent or expire late) and a1/a2/z1/z2 around them, then moves the
// clock so that the odd keys, a1 and z1 are expired.
func ttlIterSetup(t *testing.T, f *ttlFixture, cf *kvstore.ColumnFamily) {
	t.Helper()
	for i := range 10 {
		key := fmt.Appendf(nil, "k%02d", i)
		switch {
		case i%2 == 1:
			require.NoError(t, cf.PutTTL(key, []byte("old"), time.Second))
		case i%4 == 0:
			require.NoError(t, cf.Put(key, []byte("perm")))
		default:
			require.NoError(t, cf.PutTTL(key, []byte("late"), time.Hour))
		}
	}
	require.NoError(t, cf.PutTTL([]byte("a1"), []byte("old"), time.Second))
	require.NoError(t, cf.Put([]byte("a2"), []byte("perm")))
	require.NoError(t, cf.PutTTL([]byte("z1"), []byte("old"), time.Second))
	require.NoError(t, cf.PutTTL([]byte("z2"), []byte("late"), time.Hour))
	f.clk.Advance(time.Second)
}

// Every kind of iteration skips expired keys; outside a transaction the
// keys it skipped are deleted once it ends, and no others.
func TestTTLIteratorsSkipExpired(t *testing.T) {
	for _, c := range ttlIterCases() {
		t.Run(c.name, func(t *testing.T) {
			f := newTTLFixture(t)
			cf := f.cf(t, "it")
			ttlIterSetup(t, f, cf)
			before := f.stats(t).ExpiredOnRead
			require.Equal(t, c.want, c.run(t, cf))
			require.GreaterOrEqual(t, f.stats(t).ExpiredOnRead-before, uint64(len(c.visited)))

			for _, k := range c.visited {
				require.Equal(t, [3]int64{0, 0, 0}, ttlKeyRows(t, f.path, "it", k), "skipped key %s is deleted", k)
			}
			if !slices.Contains(c.visited, "z1") {
				require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, "it", "z1"), "a key outside the iteration stays for purge")
			}
			for _, k := range []string{"k00", "k02", "k04", "k06", "k08", "a2", "z2"} {
				require.Equal(t, int64(1), ttlKeyRows(t, f.path, "it", k)[0], "live key %s", k)
			}
			count, err := cf.Count()
			require.NoError(t, err)
			require.EqualValues(t, 7, count)
			n, err := cf.PurgeExpired(context.Background())
			require.NoError(t, err)
			require.Equal(t, 7-len(c.visited), n, "purge removes exactly the expired keys the iteration left")
			f.check(t)
		})
	}
}

// While a cursor is open its skipped keys are only hidden: the deletion
// waits for Close, so the cursor's snapshot never blocks on the writer.
func TestTTLCursorDefersDeletionUntilClose(t *testing.T) {
	f := newTTLFixture(t)
	cf := f.cf(t, "it")
	ttlIterSetup(t, f, cf)
	c, err := cf.Cursor(kvstore.IterOptions{})
	require.NoError(t, err)
	var got []string
	for ok := c.First(); ok; ok = c.Next() {
		got = append(got, string(c.Key()))
	}
	require.NoError(t, c.Err())
	require.Equal(t, []string{"a2", "k00", "k02", "k04", "k06", "k08", "z2"}, got)
	require.Equal(t, [3]int64{14, 10, 10}, ttlCounts(t, f.path, "it"), "still there while the cursor is open")
	// Writers are not blocked by the open cursor.
	require.NoError(t, cf.PutTTL([]byte("new"), []byte("v"), time.Minute))
	require.NoError(t, c.Close())
	require.Equal(t, [3]int64{8, 4, 4}, ttlCounts(t, f.path, "it"))
	require.NoError(t, c.Close())
	f.check(t)
}

// A loop that breaks early still deletes the expired keys it passed.
func TestTTLIteratorBreakDeletesSkipped(t *testing.T) {
	f := newTTLFixture(t)
	cf := f.cf(t, "it")
	ttlIterSetup(t, f, cf)
	var got []string
	for e, err := range cf.Prefix([]byte("k")) {
		require.NoError(t, err)
		got = append(got, string(e.Key))
		if len(got) == 3 {
			break
		}
	}
	require.Equal(t, []string{"k00", "k02", "k04"}, got)
	for _, k := range []string{"k01", "k03"} {
		require.Equal(t, [3]int64{0, 0, 0}, ttlKeyRows(t, f.path, "it", k))
	}
	require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, "it", "k09"))
	f.check(t)
}

// Inside Update every iteration skips expired keys; the deletes join the
// transaction: committed with it, or rolled back with it.
func TestTTLIteratorsInsideUpdate(t *testing.T) {
	ctx := context.Background()
	for _, commit := range []bool{false, true} {
		t.Run(fmt.Sprintf("commit=%v", commit), func(t *testing.T) {
			f := newTTLFixture(t)
			cf := f.cf(t, "it")
			ttlIterSetup(t, f, cf)
			errAbort := errors.New("abort")
			err := f.db.Update(ctx, func(tx *kvstore.Tx) error {
				for _, c := range ttlIterCases() {
					require.Equal(t, c.want, c.run(t, tx.CF(cf)), c.name)
				}
				require.Equal(t, [3]int64{14, 10, 10}, ttlCounts(t, f.path, "it"), "nothing is committed during the transaction")
				if commit {
					return nil
				}
				return errAbort
			})
			if commit {
				require.NoError(t, err)
				require.Equal(t, [3]int64{7, 3, 3}, ttlCounts(t, f.path, "it"))
			} else {
				require.ErrorIs(t, err, errAbort)
				require.Equal(t, [3]int64{14, 10, 10}, ttlCounts(t, f.path, "it"), "the lazy deletes rolled back")
			}
			f.check(t)
		})
	}
}

// Inside View expired keys are hidden from every read and iteration;
// nothing is written during the View; the deletion happens after it.
func TestTTLExpiryInsideView(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "it")
	ttlIterSetup(t, f, cf)
	commits := f.stats(t).Commits
	require.NoError(t, f.db.View(ctx, func(tx *kvstore.Tx) error {
		v := tx.CF(cf)
		for _, c := range ttlIterCases() {
			require.Equal(t, c.want, c.run(t, v), c.name)
		}
		ttlGone(t, v, "a1")
		_, err := v.TTL([]byte("z1"))
		require.ErrorIs(t, err, kvstore.ErrNotFound)
		ok, err := v.Exists([]byte("k01"))
		require.NoError(t, err)
		require.False(t, ok)
		vs, err := v.GetMany([][]byte{[]byte("k00"), []byte("k01")})
		require.NoError(t, err)
		require.Equal(t, []byte("perm"), vs[0])
		require.Nil(t, vs[1])
		n, err := v.Count()
		require.NoError(t, err)
		require.EqualValues(t, 7, n)

		require.Equal(t, [3]int64{14, 10, 10}, ttlCounts(t, f.path, "it"), "nothing is deleted during the View")
		require.Equal(t, commits, f.stats(t).Commits, "nothing is committed during the View")
		return nil
	}))
	// Afterwards the expired keys the View met are gone.
	require.Equal(t, [3]int64{7, 3, 3}, ttlCounts(t, f.path, "it"))
	f.check(t)
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

// Writes inside View fail with ErrReadOnlyTx, write nothing, and leave the
// View usable; nothing is auto-committed.
func TestTTLWritesInsideViewFail(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "fresh")
	require.NoError(t, f.db.PutTTL([]byte("t"), []byte("v"), time.Minute))
	require.NoError(t, f.db.Put([]byte("p"), []byte("v")))
	f.clk.Advance(30 * time.Second)
	commits := f.stats(t).Commits
	future := f.clk.Now().Add(time.Hour)
	require.NoError(t, f.db.View(ctx, func(tx *kvstore.Tx) error {
		for _, h := range []*kvstore.ColumnFamily{tx.Default(), tx.CF(cf)} {
			writes := map[string]func() error{
				"Put":         func() error { return h.Put([]byte("x"), []byte("v")) },
				"PutTTL":      func() error { return h.PutTTL([]byte("x"), []byte("v"), time.Minute) },
				"PutExpireAt": func() error { return h.PutExpireAt([]byte("x"), []byte("v"), future) },
				"Delete":      func() error { return h.Delete([]byte("p")) },
				"Expire":      func() error { return h.Expire([]byte("p"), time.Minute) },
				"ExpireAt":    func() error { return h.ExpireAt([]byte("p"), future) },
				"Persist":     func() error { return h.Persist([]byte("t")) },
				"PutIfAbsent": func() error { _, err := h.PutIfAbsent([]byte("x"), []byte("v")); return err },
				"PutIfAbsentTTL": func() error {
					_, err := h.PutIfAbsentTTL([]byte("x"), []byte("v"), time.Minute)
					return err
				},
				"PurgeExpired":  func() error { _, err := h.PurgeExpired(ctx); return err },
				"PurgeExpiredN": func() error { _, err := h.PurgeExpiredN(ctx, 5); return err },
				"Clear":         func() error { return h.Clear() },
				"Apply": func() error {
					var batch kvstore.Batch
					batch.PutTTL([]byte("x"), []byte("v"), time.Minute)
					return h.Apply(ctx, &batch)
				},
			}
			for name, w := range writes {
				require.ErrorIs(t, w(), kvstore.ErrReadOnlyTx, "%s on %s", name, h.Name())
			}
		}
		// The View is still usable.
		ttlHas(t, tx.Default(), "t", 30*time.Second)
		ttlGet(t, tx.Default(), "p", "v")
		return nil
	}))
	require.Equal(t, commits, f.stats(t).Commits, "nothing was committed")
	ttlGone(t, f.db.Default(), "x")
	ttlGet(t, f.db.Default(), "p", "v")
	ttlHas(t, f.db.Default(), "t", 30*time.Second)
	ttlHas(t, f.db.Default(), "p", kvstore.NoTTL)
	require.False(t, cf.HasTTL())
	require.Empty(t, ttlHidden(t, f.path, "fresh"))
	f.check(t)
}

// ttlCancelClock is a manual clock that cancels a context on the n-th
// reading after it is armed, to cancel a purge between two batches.
type ttlCancelClock struct {
	*kvstore.ManualClock
	mu     sync.Mutex
	left   int // readings left before cancel; 0: disarmed
	cancel context.CancelFunc
}

func (c *ttlCancelClock) Now() time.Time {
	c.mu.Lock()
	if c.left > 0 {
		c.left--
		if c.left == 0 {
			c.cancel()
		}
	}
	c.mu.Unlock()
	return c.ManualClock.Now()
}

func (c *ttlCancelClock) arm(n int, cancel context.CancelFunc) {
	c.mu.Lock()
	c.left, c.cancel = n, cancel
	c.mu.Unlock()
}

func TestPurgeExpiredCancelled(t *testing.T) {
	const total = 1000
	clk := &ttlCancelClock{ManualClock: kvstore.NewManualClock(ttlStart)}
	path := filepath.Join(t.TempDir(), "cancel.db")
	db, err := kvstore.Open(path, kvstore.Options{Clock: clk})
	require.NoError(t, err)
	defer db.Close()
	var batch kvstore.Batch
	for i := range total {
		batch.PutTTL(fmt.Appendf(nil, "k%04d", i), []byte("v"), time.Second)
	}
	batch.Put([]byte("perm"), []byte("p"))
	require.NoError(t, db.Apply(context.Background(), &batch))
	clk.Advance(time.Second)

	// Already cancelled: nothing is purged.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n, err := db.PurgeExpired(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, n)
	require.Equal(t, [3]int64{total + 1, total, total}, ttlCounts(t, path, ttlDef))

	// Cancelled while the second batch starts: the first batch stays
	// committed and is counted.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	before, err := db.Stats(context.Background())
	require.NoError(t, err)
	clk.arm(2, cancel)
	n, err = db.PurgeExpired(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.GreaterOrEqual(t, n, ttl.PurgeBatch, "the first batch was done")
	require.Less(t, n, total, "the purge stopped early")
	require.Zero(t, n%ttl.PurgeBatch, "only whole batches are committed")
	t.Logf("cancelled after %d of %d keys", n, total)
	after, err := db.Stats(context.Background())
	require.NoError(t, err)
	require.Equal(t, before.Purged+uint64(n), after.Purged)
	require.Equal(t, [3]int64{int64(total - n + 1), int64(total - n), int64(total - n)}, ttlCounts(t, path, ttlDef))
	require.NoError(t, db.IntegrityCheck(context.Background()))

	// A later purge finishes the job with an exact count.
	rest, err := db.PurgeExpired(context.Background())
	require.NoError(t, err)
	require.Equal(t, total, n+rest)
	ttlGet(t, db.Default(), "perm", "p")
	require.Equal(t, [3]int64{1, 0, 0}, ttlCounts(t, path, ttlDef))

	// Cancelling PurgeExpiredAll stops it too.
	require.NoError(t, db.PutTTL([]byte("x"), []byte("v"), time.Second))
	clk.Advance(time.Second)
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	n, err = db.PurgeExpiredAll(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, n)
	require.NoError(t, db.IntegrityCheck(context.Background()))
}

func TestPurgeExpired100k(t *testing.T) {
	if testing.Short() {
		t.Skip("100k keys: long mode only")
	}
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "big")
	const expired, live = 100_000, 1_000
	var batch kvstore.Batch
	for i := range expired + live {
		d := time.Duration(1+i%1000) * time.Millisecond
		if i >= expired {
			d = time.Hour
		}
		batch.PutTTL(fmt.Appendf(nil, "key:%07d", (i*7919)%(expired+live)), []byte("value"), d)
		if batch.Len() == 10_000 {
			require.NoError(t, cf.Apply(ctx, &batch))
			batch.Reset()
		}
	}
	require.NoError(t, cf.Apply(ctx, &batch))
	f.clk.Advance(time.Second)

	before := f.stats(t).Purged
	n, err := cf.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, expired, n)
	require.Equal(t, before+expired, f.stats(t).Purged)
	count, err := cf.Count()
	require.NoError(t, err)
	require.EqualValues(t, live, count)
	require.Equal(t, [3]int64{live, live, live}, ttlCounts(t, f.path, "big"))
	n, err = cf.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	f.check(t)
}

func TestTTLCountExcludesExpired(t *testing.T) {
	f := newTTLFixture(t)
	cf := f.cf(t, "c")
	for i := range 10 {
		require.NoError(t, cf.PutTTL(fmt.Appendf(nil, "t%d", i), []byte("v"), time.Duration(i+1)*time.Second))
		require.NoError(t, cf.Put(fmt.Appendf(nil, "p%d", i), []byte("v")))
	}
	for i := range 11 {
		n, err := cf.Count()
		require.NoError(t, err)
		require.EqualValues(t, 20-i, n, "after %ds", i)
		f.clk.Advance(time.Second)
	}
	// Count neither deletes nor needs a purge first.
	require.Equal(t, [3]int64{20, 10, 10}, ttlCounts(t, f.path, "c"))
	f.check(t)
}

func TestTTLStatsCounters(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	for i := range 5 {
		require.NoError(t, f.db.PutTTL(fmt.Appendf(nil, "k%d", i), []byte("v"), time.Second))
	}
	f.clk.Advance(time.Second)
	st0 := f.stats(t)
	ttlGone(t, f.db.Default(), "k0")
	ttlGone(t, f.db.Default(), "k1")
	st1 := f.stats(t)
	require.Equal(t, st0.ExpiredOnRead+2, st1.ExpiredOnRead)
	require.Equal(t, st0.Misses+2, st1.Misses)
	require.Equal(t, st0.Purged, st1.Purged)
	// A missing key is a miss, not an expiry.
	ttlGone(t, f.db.Default(), "k0")
	st2 := f.stats(t)
	require.Equal(t, st1.ExpiredOnRead, st2.ExpiredOnRead)
	require.Equal(t, st1.Misses+1, st2.Misses)

	n, err := f.db.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	st3 := f.stats(t)
	require.Equal(t, st2.Purged+3, st3.Purged)
	require.Equal(t, st2.ExpiredOnRead, st3.ExpiredOnRead)
}

// ttlCountingClock is a manual clock that counts its readings.
type ttlCountingClock struct {
	*kvstore.ManualClock
	reads atomic.Int64
}

func (c *ttlCountingClock) Now() time.Time {
	c.reads.Add(1)
	return c.ManualClock.Now()
}

func TestPurgeExpiredBackground(t *testing.T) {
	ctx := context.Background()
	clk := &ttlCountingClock{ManualClock: kvstore.NewManualClock(ttlStart)}
	path := filepath.Join(t.TempDir(), "bg.db")
	var purgeErrs atomic.Int64
	db, err := kvstore.Open(path, kvstore.Options{
		Clock:         clk,
		PurgeInterval: 5 * time.Millisecond,
		OnPurgeError:  func(error) { purgeErrs.Add(1) },
	})
	require.NoError(t, err)
	cf, err := db.CreateColumnFamily("sessions")
	require.NoError(t, err)
	for i := range 300 {
		key := fmt.Appendf(nil, "k%03d", i)
		require.NoError(t, db.PutTTL(key, []byte("v"), time.Second))
		require.NoError(t, cf.PutTTL(key, []byte("v"), time.Second))
	}
	require.NoError(t, cf.PutTTL([]byte("live"), []byte("v"), time.Hour))
	require.NoError(t, cf.Put([]byte("perm"), []byte("v")))

	// Nothing has expired yet: the purger removes nothing.
	require.Never(t, func() bool {
		st, err := db.Stats(ctx)
		return err != nil || st.Purged != 0
	}, 50*time.Millisecond, 5*time.Millisecond)

	clk.Advance(time.Second) // the clock already says expired; only the purger has to run
	require.Eventually(t, func() bool {
		st, err := db.Stats(ctx)
		return err == nil && st.Purged == 600
	}, 10*time.Second, 5*time.Millisecond)
	require.Equal(t, [3]int64{0, 0, 0}, ttlCounts(t, path, ttlDef))
	require.Equal(t, [3]int64{2, 1, 1}, ttlCounts(t, path, "sessions"))
	ttlHas(t, cf, "live", time.Hour-time.Second)
	require.Zero(t, purgeErrs.Load())
	require.NoError(t, db.IntegrityCheck(ctx))

	// Close stops the purger: the clock is never read again.
	require.NoError(t, db.Close())
	reads := clk.reads.Load()
	time.Sleep(50 * time.Millisecond) // ten purge intervals
	require.Equal(t, reads, clk.reads.Load(), "no purge ran after Close")
	require.Zero(t, purgeErrs.Load())
}

// The background purge is off on a store whose clock is injected, unless
// asked for (a store on the system clock purges every
// DefaultPurgeInterval: TestBackgroundPurgeByDefault).
func TestPurgeExpiredBackgroundOffByDefault(t *testing.T) {
	ctx := context.Background()
	clk := &ttlCountingClock{ManualClock: kvstore.NewManualClock(ttlStart)}
	path := filepath.Join(t.TempDir(), "nobg.db")
	db, err := kvstore.Open(path, kvstore.Options{Clock: clk})
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.PutTTL([]byte("k"), []byte("v"), time.Second))
	clk.Advance(time.Second)
	reads := clk.reads.Load()
	time.Sleep(30 * time.Millisecond)
	require.Equal(t, reads, clk.reads.Load(), "nothing reads the clock on its own")
	require.Equal(t, [3]int64{1, 1, 1}, ttlCounts(t, path, ttlDef))
	st, err := db.Stats(ctx)
	require.NoError(t, err)
	require.Zero(t, st.Purged)
}

// Concurrent TTL writers, readers and purgers leave the tables in step.
func TestTTLConcurrentPurgeAndWrites(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "c")
	rounds := 200
	if testing.Short() {
		rounds = 40
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	report := func(err error) {
		if err != nil && !errors.Is(err, kvstore.ErrNotFound) {
			select {
			case errs <- err:
			default:
			}
		}
	}
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				key := fmt.Appendf(nil, "w%d-%03d", w, i%50)
				switch i % 5 {
				case 0, 1:
					report(cf.PutTTL(key, []byte("v"), time.Duration(1+i%3)*time.Second))
				case 2:
					report(cf.Put(key, []byte("v")))
				case 3:
					report(cf.Expire(key, time.Second))
				case 4:
					report(cf.Persist(key))
				}
				f.clk.Advance(100 * time.Millisecond)
			}
		}()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range rounds {
			_, err := cf.PurgeExpired(ctx)
			report(err)
		}
	}()
	go func() {
		defer wg.Done()
		for i := range rounds {
			_, err := cf.Get(fmt.Appendf(nil, "w%d-%03d", i%2, i%50))
			report(err)
			for _, err := range cf.All() {
				report(err)
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	f.check(t)
	probs, err := cf.CheckTTL(ctx)
	require.NoError(t, err)
	require.Empty(t, probs)
}

// Two stores on one file (as two processes would have): TTL state that one
// creates is honoured by the other, whose handles were opened before.
func TestTTLSharedFileTwoStores(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cfB := f.cf(t, "c")
	require.NoError(t, cfB.Put([]byte("perm"), []byte("p")))
	require.False(t, cfB.HasTTL())

	other, err := kvstore.Open(f.path, kvstore.Options{Clock: f.clk})
	require.NoError(t, err)
	defer other.Close()
	cfA, err := other.OpenColumnFamily("c")
	require.NoError(t, err)
	for _, k := range []string{"a", "b", "d", "e", "f"} {
		require.NoError(t, cfA.PutTTL([]byte(k), []byte("old"), time.Second))
	}
	f.clk.Advance(time.Second)

	ttlGone(t, cfB, "a")
	require.Equal(t, [3]int64{0, 0, 0}, ttlKeyRows(t, f.path, "c", "a"))
	wrote, err := cfB.PutIfAbsent([]byte("b"), []byte("new"))
	require.NoError(t, err)
	require.True(t, wrote, "an expired key counts as absent")
	ttlGet(t, cfB, "b", "new")
	ttlHas(t, cfB, "b", kvstore.NoTTL)
	require.Equal(t, [3]int64{1, 0, 0}, ttlKeyRows(t, f.path, "c", "b"))
	require.ErrorIs(t, cfB.Delete([]byte("d")), kvstore.ErrNotFound, "an expired key counts as missing")
	require.ErrorIs(t, cfB.Expire([]byte("e"), time.Minute), kvstore.ErrNotFound)
	require.Equal(t, [3]int64{0, 0, 0}, ttlKeyRows(t, f.path, "c", "e"))
	n, err := cfB.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n) // f
	require.True(t, cfB.HasTTL())
	require.NoError(t, f.db.IntegrityCheck(ctx))
	require.NoError(t, other.IntegrityCheck(ctx))
}

// A function given to Update that ends its goroutine (runtime.Goexit, as
// t.FailNow does) rolls the transaction back, TTL state included, and frees
// the writer.
func TestTTLUpdateGoexitRollsBack(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "fresh")
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.db.Update(ctx, func(tx *kvstore.Tx) error {
			if err := tx.CF(cf).PutTTL([]byte("k"), []byte("v"), time.Minute); err != nil {
				return err
			}
			runtime.Goexit()
			return nil
		})
	}()
	<-done
	ttlGone(t, cf, "k")
	require.False(t, cf.HasTTL())
	require.Empty(t, ttlHidden(t, f.path, "fresh"))
	require.NoError(t, cf.PutTTL([]byte("k2"), []byte("v"), time.Minute), "the writer is free")
	ttlHas(t, cf, "k2", time.Minute)
	f.check(t)
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
	n, err := f.db.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, [3]int64{0, 0, 0}, ttlCounts(t, f.path, "default"))
}

// A handle whose column family another store (another process) dropped and
// recreated without TTL tables: its TTL writes recreate them and its purge
// finds nothing, instead of failing on tables that no longer exist.
func TestTTLColumnFamilyRecreatedElsewhere(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "x")
	require.NoError(t, cf.PutTTL([]byte("k"), []byte("v"), time.Second))
	require.True(t, cf.HasTTL())

	other, err := kvstore.Open(f.path, f.opts)
	require.NoError(t, err)
	require.NoError(t, other.DropColumnFamily("x"))
	_, err = other.CreateColumnFamily("x")
	require.NoError(t, err)
	require.NoError(t, other.Close())

	n, err := cf.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	require.NoError(t, cf.PutTTL([]byte("k2"), []byte("v2"), time.Second))
	ttlHas(t, cf, "k2", time.Second)
	f.clk.Advance(2 * time.Second)
	n, err = cf.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	f.check(t)
}

// An expiry that is not 8 bytes (written by hand with the sqlite3 shell) is
// reported as corruption by point reads and iterations alike, never taken
// for a live key.
func TestTTLCorruptExpiryIsReported(t *testing.T) {
	f := newTTLFixture(t)
	cf := f.cf(t, "c")
	require.NoError(t, cf.PutTTL([]byte("k"), []byte("v"), time.Hour))
	// The table's CHECK refuses a 7-byte expiry; a tool that turns checks
	// off (or damage) can still put one there.
	rawExec(t, f.path, `PRAGMA ignore_check_constraints = ON`, `UPDATE "`+ttl.KeysPrefix+`c" SET expire_ms = x'00010203040506'`)
	_, err := cf.Get([]byte("k"))
	require.ErrorIs(t, err, kvstore.ErrCorrupt)
	var iterErr error
	for _, err := range cf.All() {
		if err != nil {
			iterErr = err
		}
	}
	require.ErrorIs(t, iterErr, kvstore.ErrCorrupt)
	require.ErrorIs(t, f.db.IntegrityCheck(context.Background()), kvstore.ErrCorrupt)
}
