package kvstore_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// Expiries far in the future never report a negative remaining time; the
// longest time.Duration stands for "at least that long".
func TestFarExpiriesNeverReportNegativeTTL(t *testing.T) {
	clk := kvstore.NewManualClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	db := openTemp(t, kvstore.Options{Clock: clk})
	require.NoError(t, db.PutTTL(b("max"), b("v"), time.Duration(math.MaxInt64)))
	require.NoError(t, db.PutExpireAt(b("y2500"), b("v"), time.Date(2500, 1, 1, 0, 0, 0, 0, time.UTC)))
	require.NoError(t, db.PutExpireAt(b("y100000"), b("v"), time.Date(100000, 1, 1, 0, 0, 0, 0, time.UTC)))
	require.NoError(t, db.Put(b("e"), b("v")))
	require.NoError(t, db.ExpireAt(b("e"), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)))
	for _, k := range []string{"max", "y2500", "y100000", "e"} {
		d, err := db.TTL(b(k))
		require.NoError(t, err, k)
		require.Positive(t, d, k)
		_, d, err = db.GetTTL(b(k))
		require.NoError(t, err, k)
		require.Positive(t, d, k)
	}
	d, err := db.TTL(b("max"))
	require.NoError(t, err)
	require.Equal(t, time.Duration(math.MaxInt64), d, "capped at the longest Duration")
	d, err = db.TTL(b("y2500"))
	require.NoError(t, err)
	require.Equal(t, time.Duration(math.MaxInt64), d, "more than 292 years away: capped")

	// Times that cannot be represented are refused, not wrapped.
	require.ErrorIs(t, db.PutExpireAt(b("x"), b("v"), time.Date(300_000_000, 1, 1, 0, 0, 0, 0, time.UTC)), kvstore.ErrInvalidTTL)
	require.ErrorIs(t, db.PutExpireAt(b("x"), b("v"), time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)), kvstore.ErrInvalidTTL)

	// Purge removes none of them, and the integrity check agrees.
	clk.Advance(100 * 365 * 24 * time.Hour)
	n, err := db.PurgeExpired(context.Background())
	require.NoError(t, err)
	require.Zero(t, n)
	require.NoError(t, db.IntegrityCheck(context.Background()))
}

// Expiry is exact for every clock value: a clock before 1970 (a device
// without a real-time clock boots near the epoch) counts TTLs from its own
// time, and a TTL write whose expiry would fall before 1970-01-01 UTC, which
// the file cannot hold, fails with ErrClockRange and stores nothing.
func TestClockBefore1970(t *testing.T) {
	epoch := time.Unix(0, 0).UTC()
	for _, start := range []time.Time{
		epoch,
		epoch.Add(-time.Hour),        // 1969-12-31 23:00 UTC
		epoch.Add(-time.Millisecond), // just before
		epoch.Add(time.Millisecond),  // just after
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		t.Run(start.Format(time.RFC3339Nano), func(t *testing.T) {
			ctx := context.Background()
			clk := kvstore.NewManualClock(start)
			db := openTemp(t, kvstore.Options{Clock: clk})
			require.NoError(t, db.Put(b("perm"), b("v")))

			// A minute from now: before 1970 unless the clock is at or past
			// the epoch less a minute.
			fits := start.Add(time.Minute).After(epoch)
			err := db.PutTTL(b("min"), b("v"), time.Minute)
			ok, pErr := db.PutIfAbsentTTL(b("pia"), b("v"), time.Minute)
			eErr := db.Expire(b("perm"), time.Minute)
			var batch kvstore.Batch
			batch.PutTTL(b("batch"), b("v"), time.Minute)
			bErr := db.Apply(ctx, &batch)
			if !fits {
				for _, e := range []error{err, pErr, eErr, bErr} {
					require.ErrorIs(t, e, kvstore.ErrClockRange)
					require.Contains(t, e.Error(), "1970")
				}
				require.False(t, ok)
				for _, k := range []string{"min", "pia", "batch"} {
					_, err := db.Get(b(k))
					require.ErrorIs(t, err, kvstore.ErrNotFound, "nothing stored for %s", k)
				}
				d, err := db.TTL(b("perm"))
				require.NoError(t, err)
				require.Equal(t, kvstore.NoTTL, d, "Expire changed nothing")
			} else {
				require.NoError(t, err)
				require.NoError(t, pErr)
				require.True(t, ok)
				require.NoError(t, eErr)
				require.NoError(t, bErr)
			}

			// Two hours from now always fits (the clock is at most an hour
			// before the epoch, or far before it and refused).
			err = db.PutTTL(b("two"), b("v"), 2*time.Hour)
			if start.Add(2 * time.Hour).After(epoch) {
				require.NoError(t, err)
				d, err := db.TTL(b("two"))
				require.NoError(t, err)
				require.Equal(t, 2*time.Hour, d, "counted from the clock's own time")
			} else {
				require.ErrorIs(t, err, kvstore.ErrClockRange)
			}

			// Half a minute on: nothing has expired yet.
			clk.Advance(30 * time.Second)
			ttlPurge(t, db, 0)
			if fits {
				for _, k := range []string{"min", "pia", "batch", "perm"} {
					d, err := db.TTL(b(k))
					require.NoError(t, err, k)
					require.Equal(t, 30*time.Second, d, k)
				}
			}
			// A minute and a second on: the one-minute keys are gone, the
			// two-hour one lives on.
			clk.Advance(31 * time.Second)
			for _, k := range []string{"min", "pia", "batch"} {
				_, err := db.Get(b(k))
				require.ErrorIs(t, err, kvstore.ErrNotFound, k)
			}
			_, err = db.Get(b("perm"))
			if fits {
				require.ErrorIs(t, err, kvstore.ErrNotFound, "perm expired after its minute")
			} else {
				require.NoError(t, err)
			}
			clk.Advance(time.Hour)
			if start.Add(2 * time.Hour).After(epoch) {
				d, err := db.TTL(b("two"))
				require.NoError(t, err)
				require.Equal(t, 2*time.Hour-time.Hour-61*time.Second, d)
			}
			clk.Advance(time.Hour)
			_, err = db.PurgeExpired(ctx)
			require.NoError(t, err)
			_, err = db.Get(b("two"))
			require.ErrorIs(t, err, kvstore.ErrNotFound)
			require.NoError(t, db.IntegrityCheck(ctx))
		})
	}
}

// A clock at or past the latest expiry the file can hold refuses TTL
// writes with ErrClockRange; every key with a TTL reads as expired.
func TestClockFarFuture(t *testing.T) {
	clk := kvstore.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	db := openTemp(t, kvstore.Options{Clock: clk})
	require.NoError(t, db.PutTTL(b("k"), b("v"), time.Hour))
	clk.Set(time.Date(300_000_000, 1, 1, 0, 0, 0, 0, time.UTC))
	require.ErrorIs(t, db.PutTTL(b("x"), b("v"), time.Minute), kvstore.ErrClockRange)
	_, err := db.Get(b("x"))
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	_, err = db.Get(b("k"))
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	require.NoError(t, db.Put(b("p"), b("v")), "writes without TTL go on")
}
