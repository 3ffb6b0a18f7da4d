package kvstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // database/sql driver, to inspect the hidden tables as another tool would
)

// The hidden TTL tables: every row of a key's TTL state goes with the key,
// the tables come and go with the column family's first TTL write and its
// drop, and damage to them is reported.

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
	f.checkEmptied(t, cf)
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
	require.ElementsMatch(t, []string{layout.KeysPrefix + "sessions", layout.ExpiryPrefix + "sessions",
		layout.OnUpdatePrefix + "sessions", layout.OnDeletePrefix + "sessions", layout.OnInsertPrefix + "sessions"}, ttlHidden(t, f.path, "sessions"))

	f.clk.Advance(time.Second)
	// Purging one column family leaves the others' expired keys alone.
	ttlPurge(t, sessions, 5)
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
}

func TestTTLDropColumnFamilyRemovesHiddenTables(t *testing.T) {
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
	ttlPurge(t, again, 0)
}

func TestTTLHiddenTablesAreNotColumnFamilies(t *testing.T) {
	f := newTTLFixture(t)
	cf := f.cf(t, "c")
	require.NoError(t, cf.PutTTL([]byte("k"), []byte("v"), time.Minute))
	names, err := f.db.ListColumnFamilies()
	require.NoError(t, err)
	require.Equal(t, []string{"c", ttlDef}, names) // sorted bytewise
	for _, name := range []string{layout.KeysPrefix + "c", layout.ExpiryPrefix + "c", layout.KeysPrefix + ttlDef, layout.ExpiryPrefix + "new"} {
		_, err := f.db.OpenColumnFamily(name)
		require.ErrorIs(t, err, kvstore.ErrReservedName, name)
		_, err = f.db.CreateColumnFamily(name)
		require.ErrorIs(t, err, kvstore.ErrReservedName, name)
		require.ErrorIs(t, f.db.DropColumnFamily(name), kvstore.ErrReservedName, name)
	}
	require.Len(t, ttlHidden(t, f.path, "c"), 5)
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
	rawExec(t, f.path, `PRAGMA ignore_check_constraints = ON`, `UPDATE "`+layout.KeysPrefix+`c" SET expire_ms = x'00010203040506'`)
	_, err := cf.Get([]byte("k"))
	require.ErrorIs(t, err, kvstore.ErrCorrupt)
	iterErr := lastErr(cf.All())
	require.ErrorIs(t, iterErr, kvstore.ErrCorrupt)
	require.ErrorIs(t, f.db.IntegrityCheck(context.Background()), kvstore.ErrCorrupt)
	require.NoError(t, f.db.Close()) // corrupt on purpose: no check at the end
}
