package kvstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// Expiry: when a key with a TTL stops being readable, what each write does
// to a key's TTL, and what TTL and Stats report.

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
}

func TestTTLChangeReplacesOldTTL(t *testing.T) {
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
	ttlPurge(t, cf, 0)
	ttlHas(t, cf, "k", 59*time.Second)

	// A shorter TTL replaces a longer one too.
	require.NoError(t, cf.PutTTL([]byte("k"), []byte("v3"), 5*time.Second))
	ttlHas(t, cf, "k", 5*time.Second)
	require.Len(t, ttlIndex(t, f.path, "sessions"), 1)
	f.clk.Advance(5 * time.Second)
	ttlGone(t, cf, "k")
	require.Equal(t, [3]int64{0, 0, 0}, ttlCounts(t, f.path, "sessions"))
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
}

func TestTTLStatsCounters(t *testing.T) {
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

	ttlPurge(t, f.db, 3)
	st3 := f.stats(t)
	require.Equal(t, st2.Purged+3, st3.Purged)
	require.Equal(t, st2.ExpiredOnRead, st3.ExpiredOnRead)
}
