package kvstore_test

import (
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// ExpiryMs gives what the store's TTL writes store: a TTL or an expiry
// time rounded up to the millisecond, the same errors for the same input.
func TestExpiryMsFollowsTheStore(t *testing.T) {
	now := time.Unix(1_800_000_000, 500_400) // 0.4 µs past a millisecond
	clk := kvstore.NewManualClock(now)
	db := openTemp(t, kvstore.Options{Clock: clk})
	for _, c := range []struct {
		d  time.Duration
		at time.Time
	}{
		{d: time.Nanosecond}, {d: 1500 * time.Microsecond}, {d: time.Hour},
		{at: now.Add(time.Nanosecond)}, {at: now.Add(2 * time.Second)},
	} {
		got, err := layer.ExpiryMs(now, c.d, c.at)
		require.NoError(t, err)
		if c.d != 0 {
			require.NoError(t, db.PutTTL([]byte("k"), []byte("v"), c.d))
		} else {
			require.NoError(t, db.PutExpireAt([]byte("k"), []byte("v"), c.at))
		}
		left, err := db.TTL([]byte("k"))
		require.NoError(t, err)
		require.Equal(t, now.UnixMilli()+left.Milliseconds(), got, "%+v", c)
	}
	ms, err := layer.ExpiryMs(now, 0, time.Time{})
	require.NoError(t, err)
	require.Zero(t, ms, "no TTL, no expiry time: no expiry")
	_, err = layer.ExpiryMs(now, -time.Second, time.Time{})
	require.ErrorIs(t, err, kvstore.ErrInvalidTTL)
	_, err = layer.ExpiryMs(now, 0, now.Add(-time.Second))
	require.ErrorIs(t, err, kvstore.ErrInvalidTTL)
	_, err = layer.ExpiryMs(time.Unix(-10, 0), time.Second, time.Time{})
	require.ErrorIs(t, err, kvstore.ErrClockRange)
}

// A layer's expiry, made by ExpiryMs and read with NowMs and Expired,
// passes at the millisecond the store's own key with the same TTL
// vanishes, on the store's clock.
func TestLayerExpiresWithTheStore(t *testing.T) {
	now := time.Unix(1_800_000_000, 500_400)
	clk := kvstore.NewManualClock(now)
	db := openTemp(t, kvstore.Options{Clock: clk})
	require.NoError(t, db.PutTTL([]byte("k"), []byte("v"), 1500*time.Microsecond))
	exp, err := layer.ExpiryMs(now, 1500*time.Microsecond, time.Time{})
	require.NoError(t, err)
	clk.Set(time.UnixMilli(exp - 1))
	_, err = db.Get([]byte("k"))
	require.NoError(t, err, "one millisecond before")
	require.False(t, layer.Expired(exp, layer.NowMs(db)))
	clk.Set(time.UnixMilli(exp))
	_, err = db.Get([]byte("k"))
	require.ErrorIs(t, err, kvstore.ErrNotFound, "at the expiry")
	require.True(t, layer.Expired(exp, layer.NowMs(db)))
	require.False(t, layer.Expired(0, layer.NowMs(db)), "0: no expiry")
}
