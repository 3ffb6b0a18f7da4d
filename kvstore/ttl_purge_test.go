package kvstore_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// PurgeExpired: what it deletes, in which order and batches, inside a
// transaction, cancelled, at scale, and in the background.

func TestPurgeExpiredEmpty(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	plain := f.cf(t, "plain")
	require.NoError(t, plain.Put([]byte("k"), []byte("v")))

	// A column family that never used TTL: nothing to purge, nothing created.
	ttlPurge(t, plain, 0)
	require.Empty(t, ttlHidden(t, f.path, "plain"))
	require.False(t, plain.HasTTL())

	// A TTL column family with nothing expired.
	timed := f.cf(t, "timed")
	require.NoError(t, timed.PutTTL([]byte("k"), []byte("v"), time.Hour))
	ttlPurge(t, timed, 0)
	ttlGet(t, timed, "k", "v")

	// An emptied TTL column family.
	require.NoError(t, timed.Delete([]byte("k")))
	ttlPurge(t, timed, 0)

	total, err := f.db.PurgeExpiredAll(ctx)
	require.NoError(t, err)
	require.Zero(t, total)
}

func TestPurgeExpiredSome(t *testing.T) {
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
	ttlPurge(t, cf, 10)
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
	ttlPurge(t, cf, 0)
}

func TestPurgeExpiredAll(t *testing.T) {
	f := newTTLFixture(t)
	cf := f.cf(t, "all")
	for i := range 50 {
		require.NoError(t, cf.PutTTL(fmt.Appendf(nil, "k%02d", i), []byte("v"), time.Duration(i+1)*time.Second))
	}
	f.clk.Advance(50 * time.Second)
	ttlPurge(t, cf, 50)
	f.checkEmptied(t, cf)
}

// Purge walks the expiry index in expiry order, not key order, and stops at
// the first live entry: live keys keep their values and TTLs, and the count
// is exact.
func TestPurgeExpiredOrder(t *testing.T) {
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
	ttlPurge(t, cf, 10)

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
	ttlPurge(t, cf, 1)
	ttlGone(t, cf, "k09")
	ttlGet(t, cf, "k08", "v")
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
			ttlPurge(t, cf, expired)
			after := f.stats(t)
			require.Equal(t, before.Purged+uint64(expired), after.Purged)
			batches := (expired + expiry.PurgeBatch - 1) / expiry.PurgeBatch
			require.GreaterOrEqual(t, after.Commits-before.Commits, uint64(batches), "one transaction per batch of %d", expiry.PurgeBatch)

			require.Equal(t, [3]int64{20, 10, 10}, ttlCounts(t, f.path, name))
			count, err := cf.Count()
			require.NoError(t, err)
			require.EqualValues(t, 20, count)
			for i := range 10 {
				ttlGet(t, cf, fmt.Sprintf("l%04d", i), "live")
				ttlGet(t, cf, fmt.Sprintf("p%04d", i), "perm")
			}
			ttlPurge(t, cf, 0)
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
		ttlPurge(t, tx, 300)
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
	ttlPurge(t, f.db, 290)
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
	require.GreaterOrEqual(t, n, expiry.PurgeBatch, "the first batch was done")
	require.Less(t, n, total, "the purge stopped early")
	require.Zero(t, n%expiry.PurgeBatch, "only whole batches are committed")
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
	ttlPurge(t, cf, expired)
	require.Equal(t, before+expired, f.stats(t).Purged)
	count, err := cf.Count()
	require.NoError(t, err)
	require.EqualValues(t, live, count)
	require.Equal(t, [3]int64{live, live, live}, ttlCounts(t, f.path, "big"))
	ttlPurge(t, cf, 0)
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

// A purge that finds nothing expired takes no write lock: the background
// purge of an idle store (every minute by default) must not make a writer
// of this or another process wait, nor wait for one. Before, every purge
// began a write transaction per TTL column family first, so with a write
// transaction open it waited out its context here.
func TestTTLPurgeNothingExpiredTakesNoWriteLock(t *testing.T) {
	f := newTTLFixture(t)
	cf := f.cf(t, "sessions")
	require.NoError(t, cf.PutTTL([]byte("k"), []byte("v"), time.Hour))
	require.NoError(t, f.db.PutTTL([]byte("d"), []byte("v"), time.Hour))

	tx, err := f.db.Begin(context.Background(), true) // holds the writer
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	n, err := f.db.PurgeExpiredAll(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Less(t, time.Since(start), time.Second, "the purge waited for the writer")

	// With something expired it purges as before, once the writer is free.
	require.NoError(t, tx.Rollback())
	f.clk.Advance(2 * time.Hour)
	n, err = f.db.PurgeExpiredAll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, [3]int64{0, 0, 0}, ttlCounts(t, f.path, "sessions"))
}

// A purge that finds nothing expired remembers the earliest expiry it saw
// and answers the next call without reading, but only while nothing has
// committed since: a key with an earlier expiry written by this store,
// by another store on the file (another process), or by another tool in
// SQL is purged once its time comes.
func TestPurgeNothingExpiredSeesLaterCommits(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "c")
	require.NoError(t, cf.PutTTL([]byte("late"), []byte("v"), 10*time.Hour))
	for range 3 {
		ttlPurge(t, cf, 0) // the second and third answer from what the first saw
	}

	// Another store (as another process would) writes an earlier expiry.
	f.elsewhere(t, func(other *kvstore.Store) error { return putTTLIn(other, "c", "soon", time.Hour) })
	f.clk.Advance(2 * time.Hour)
	ttlPurge(t, cf, 1)
	ttlPurge(t, cf, 0)

	// This store, through another handle of the same column family.
	again, err := f.db.OpenColumnFamily("c")
	require.NoError(t, err)
	require.NoError(t, again.PutTTL([]byte("soon2"), []byte("v"), time.Hour))
	f.clk.Advance(2 * time.Hour)
	ttlPurge(t, cf, 1)
	ttlPurge(t, cf, 0)

	// Another tool, in SQL: an expiry index row moved to now (the key
	// index row with it), as a user mending expiries in the shell would.
	exp := make([]byte, 8)
	binary.BigEndian.PutUint64(exp, uint64(f.clk.Now().UnixMilli()))
	execRaw(t, f.path, `UPDATE "__snkv_ttl_e__c" SET expire_ms = ?1 WHERE key = CAST('late' AS BLOB)`, exp)
	execRaw(t, f.path, `UPDATE "__snkv_ttl_k__c" SET expire_ms = ?1, crc = 4294967296 WHERE key = CAST('late' AS BLOB)`, exp)
	n, err := cf.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "a row changed in SQL after the last purge")
	ttlGone(t, cf, "late")
}

// A column family without TTL tables that a purge looked at gives no
// answer from memory once another store (another process) has given it a
// TTL: the whole-store purge, which keeps its list of column families
// while nothing commits, finds the new column family and the new expiry.
func TestPurgeNothingExpiredSeesTTLGivenElsewhere(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	plain := f.cf(t, "plain")
	require.NoError(t, plain.Put([]byte("k"), []byte("v")))
	for range 2 {
		ttlPurge(t, plain, 0)
		n, err := f.db.PurgeExpiredAll(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
	}

	f.elsewhere(t, func(other *kvstore.Store) error {
		if err := putTTLIn(other, "plain", "soon", time.Hour); err != nil {
			return err
		}
		return putTTLIn(other, "fresh", "soon", time.Hour) // a new column family
	})

	f.clk.Advance(2 * time.Hour)
	// The handle that looked before: its column family's horizon said
	// "no TTL tables" as of a commit mark that has changed since (the
	// schema change that created the TTL tables also renews the handle's
	// state, so this checks the behaviour, not which of the two saw it).
	ttlPurge(t, plain, 1)
	n, err := f.db.PurgeExpiredAll(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "the key in the new column family")
	ttlGone(t, plain, "soon")
	ttlGet(t, plain, "k", "v")
}

// A key that another handle deletes, rewrites, or rewrites with a later
// expiry between two batches of a purge is not deleted by a later batch:
// each batch re-checks, at its own clock, that its keys' expiries are
// still there and passed. Key i expires after 2000-i ms, so that the keys
// changed (k0500–k0503) are in the second batch whether the batches go in
// expiry order or in key order; or every key expires after 1 s, so that
// the index's order is the keys'. With a change feed, each purged key is
// recorded once as expired, with its deadline, and no spared one is.
func TestPurgeExpiredSparesKeysChangedBetweenBatches(t *testing.T) {
	for _, oneExpiry := range []bool{false, true} {
		for _, withFeed := range []bool{false, true} {
			t.Run(fmt.Sprintf("oneExpiry=%v/feed=%v", oneExpiry, withFeed), func(t *testing.T) {
				testPurgeSparesChanged(t, oneExpiry, withFeed)
			})
		}
	}
}

func testPurgeSparesChanged(t *testing.T, oneExpiry, withFeed bool) {
	ttlOf := func(i int) time.Duration {
		if oneExpiry {
			return time.Second
		}
		return time.Duration(2000-i) * time.Millisecond
	}
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "between")
	if withFeed {
		require.NoError(t, changefeed.Enable(ctx, f.db, "between", changefeed.Options{}))
	}
	var batch kvstore.Batch
	for i := range 1000 {
		batch.PutTTL(fmt.Appendf(nil, "k%04d", i), []byte("x"), ttlOf(i))
	}
	batch.Put([]byte("plain"), []byte("p"))
	require.NoError(t, cf.Apply(ctx, &batch))
	f.clk.Advance(10 * time.Second)

	other := openAt(t, f.path, f.opts)
	ocf, err := other.ColumnFamilyOrCreate("between")
	require.NoError(t, err)
	calls := 0
	defer expiry.SetBetweenBatches(func() {
		calls++
		if calls > 1 {
			return
		}
		require.NoError(t, ocf.PutTTL([]byte("k0500"), []byte("refreshed"), time.Hour))
		// An expired key reads as missing (so Delete reports it): a
		// live one is deleted.
		require.NoError(t, ocf.Put([]byte("k0501"), []byte("live")))
		require.NoError(t, ocf.Delete([]byte("k0501")))
		require.NoError(t, ocf.Put([]byte("k0502"), []byte("rewritten")))
		require.NoError(t, ocf.PutTTL([]byte("k0503"), []byte("again"), 2*time.Hour))
	})()

	ttlPurge(t, cf, 996)
	require.GreaterOrEqual(t, calls, 3, "a hook call between each two of the 4 batches")
	ttlGet(t, cf, "k0500", "refreshed")
	ttlHas(t, cf, "k0500", time.Hour)
	ttlGone(t, cf, "k0501")
	ttlGet(t, cf, "k0502", "rewritten")
	ttlHas(t, cf, "k0502", kvstore.NoTTL)
	ttlGet(t, cf, "k0503", "again")
	ttlHas(t, cf, "k0503", 2*time.Hour)
	ttlGet(t, cf, "plain", "p")
	require.Equal(t, [3]int64{4, 2, 2}, ttlCounts(t, f.path, "between"))
	require.NoError(t, other.Close())
	if !withFeed {
		return
	}
	r, err := changefeed.NewReader(ctx, f.db, changefeed.Position{}, changefeed.ReaderOptions{})
	require.NoError(t, err)
	defer r.Close()
	expired := map[string]time.Time{}
	for {
		chs, err := r.Read(ctx)
		require.NoError(t, err)
		if len(chs) == 0 {
			break
		}
		for _, c := range chs {
			if c.Op == changefeed.OpExpired {
				_, twice := expired[string(c.Key)]
				require.False(t, twice, "key %s recorded twice", c.Key)
				expired[string(c.Key)] = c.Expiry
			}
		}
	}
	require.Len(t, expired, 996)
	for i := range 1000 {
		k := fmt.Sprintf("k%04d", i)
		if i >= 500 && i <= 503 {
			require.NotContains(t, expired, k)
			continue
		}
		require.Contains(t, expired, k)
		require.True(t, ttlStart.Add(ttlOf(i)).Equal(expired[k]), "deadline of %s", k)
	}
}
