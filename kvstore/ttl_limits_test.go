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

// A clock set before 1970 reads as the epoch: TTL writes work, live keys
// report a positive TTL, and purge never removes a live key.
func TestClockBefore1970(t *testing.T) {
	clk := kvstore.NewManualClock(time.Date(1960, 6, 1, 0, 0, 0, 0, time.UTC))
	db := openTemp(t, kvstore.Options{Clock: clk})
	require.NoError(t, db.Put(b("perm"), b("v")))
	require.NoError(t, db.PutTTL(b("short"), b("v"), time.Minute))
	require.NoError(t, db.PutTTL(b("long"), b("v"), 24*time.Hour))
	ok, err := db.PutIfAbsentTTL(b("pia"), b("v"), time.Hour)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, db.Expire(b("perm"), 48*time.Hour))
	var b2 kvstore.Batch
	b2.PutTTL(b("batch"), b("v"), time.Hour)
	require.NoError(t, db.Apply(context.Background(), &b2))
	for _, k := range []string{"perm", "short", "long", "pia", "batch"} {
		d, err := db.TTL(b(k))
		require.NoError(t, err, k)
		require.Positive(t, d, k)
	}
	n, err := db.PurgeExpired(context.Background())
	require.NoError(t, err)
	require.Zero(t, n)
	require.Len(t, contents(t, db.Default()), 5)
	// The clock reaches the epoch and goes on: TTLs count from there.
	clk.Set(time.Unix(0, 0).Add(2 * time.Minute))
	n, err = db.PurgeExpired(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, n)
	_, err = db.Get(b("short"))
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	require.Len(t, contents(t, db.Default()), 4)
	require.NoError(t, db.IntegrityCheck(context.Background()))
}
