package expiry_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/stretchr/testify/require"
)

// clockAt is a Clock that always reads t.
type clockAt time.Time

func (c clockAt) Now() time.Time { return time.Time(c) }

func TestEncodeDecodeRoundTrip(t *testing.T) {
	for _, ms := range []int64{0, 1, 255, 256, 1 << 32, 1_700_000_000_123, math.MaxInt64} {
		b := expiry.Encode(ms)
		require.Len(t, b, 8)
		require.Equal(t, uint64(ms), binary.BigEndian.Uint64(b), "big-endian layout of %d", ms)
		got, err := expiry.Decode(b)
		require.NoError(t, err)
		require.Equal(t, ms, got)
	}
}

func TestEncodeIsBigEndian(t *testing.T) {
	require.Equal(t, []byte{0, 0, 0, 0, 0, 0, 1, 2}, expiry.Encode(0x0102))
	require.Equal(t, []byte{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08}, expiry.Encode(0x0102030405060708))
}

func TestEncodeOrderMatchesNumericOrder(t *testing.T) {
	times := []int64{1_700_000_000_000, 0, 255, 256, 65535, 65536, 1, 1 << 40, 1_700_000_000_001, math.MaxInt64, 999}
	enc := make([][]byte, len(times))
	for i, ms := range times {
		enc[i] = expiry.Encode(ms)
	}
	sort.Slice(enc, func(i, j int) bool { return bytes.Compare(enc[i], enc[j]) < 0 })
	sorted := append([]int64(nil), times...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	for i := range enc {
		got, err := expiry.Decode(enc[i])
		require.NoError(t, err)
		require.Equal(t, sorted[i], got, "position %d", i)
	}
}

func TestDecodeRejectsWrongLength(t *testing.T) {
	for _, n := range []int{0, 1, 7, 9, 16} {
		_, err := expiry.Decode(make([]byte, n))
		require.Error(t, err, "length %d", n)
	}
	_, err := expiry.Decode(nil)
	require.Error(t, err)
}

func TestExpiryFromTTL(t *testing.T) {
	const now = int64(1_700_000_000_000)
	cases := []struct {
		d    time.Duration
		want int64
	}{
		{time.Millisecond, now + 1},
		{time.Second, now + 1000},
		{90 * time.Minute, now + 90*60*1000},
		{time.Nanosecond, now + 1},                      // rounds up to a whole millisecond
		{1500 * time.Microsecond, now + 2},              // never expires early
		{2*time.Millisecond + time.Nanosecond, now + 3}, // any remainder rounds up
		{999 * time.Microsecond, now + 1},               // below a millisecond
		{24 * time.Hour * 365, now + 365*24*3600*1000},  // a year
		{time.Duration(math.MaxInt64), now + math.MaxInt64/int64(time.Millisecond) + 1},
	}
	for _, c := range cases {
		got, err := expiry.ExpiryFromTTL(now, c.d)
		require.NoError(t, err, "ttl %v", c.d)
		require.Equal(t, c.want, got, "ttl %v", c.d)
		require.Greater(t, got, now)
	}
}

func TestExpiryFromTTLRejectsNonPositive(t *testing.T) {
	for _, d := range []time.Duration{0, -1, -time.Second, math.MinInt64} {
		_, err := expiry.ExpiryFromTTL(1_700_000_000_000, d)
		require.ErrorIs(t, err, engine.ErrInvalidTTL, "ttl %v", d)
		require.ErrorIs(t, err, engine.ErrInvalidTTL, "ttl %v", d)
	}
}

func TestExpiryFromTTLRejectsOverflow(t *testing.T) {
	_, err := expiry.ExpiryFromTTL(expiry.MaxExpiryMs-10, time.Second)
	require.ErrorIs(t, err, engine.ErrInvalidTTL)
	_, err = expiry.ExpiryFromTTL(math.MaxInt64-10, time.Second)
	require.ErrorIs(t, err, engine.ErrClockRange, "the clock itself is past the latest expiry")
	got, err := expiry.ExpiryFromTTL(expiry.MaxExpiryMs-1000, time.Second)
	require.NoError(t, err)
	require.Equal(t, int64(expiry.MaxExpiryMs), got)
	// A clock before 1970 counts from its own time; an expiry that would
	// fall before 1970 (or on the epoch itself) is refused, never wrapped
	// or moved.
	got, err = expiry.ExpiryFromTTL(-5000, 6*time.Second)
	require.NoError(t, err)
	require.Equal(t, int64(1000), got)
	got, err = expiry.ExpiryFromTTL(-5000, 5001*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, int64(1), got)
	for _, c := range []struct {
		now int64
		d   time.Duration
	}{{-5000, time.Second}, {-5000, 5 * time.Second}, {-1, time.Millisecond}, {math.MinInt64, time.Second}, {-expiry.MaxExpiryMs, time.Duration(math.MaxInt64)}} {
		_, err = expiry.ExpiryFromTTL(c.now, c.d)
		require.ErrorIs(t, err, engine.ErrClockRange, "%d + %v", c.now, c.d)
		require.NotErrorIs(t, err, engine.ErrInvalidTTL)
	}
	got, err = expiry.ExpiryFromTTL(-1, 2*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, int64(1), got)
}

// Expiry decisions at and around the epoch use the clock as it is.
func TestExpiredAroundEpoch(t *testing.T) {
	require.False(t, expiry.Expired(1, -1))
	require.False(t, expiry.Expired(1, 0))
	require.True(t, expiry.Expired(1, 1))
	require.Equal(t, 2*time.Millisecond, expiry.Remaining(1, -1))
	require.Equal(t, time.Hour+time.Millisecond, expiry.Remaining(1, -time.Hour.Milliseconds()))
	// Bounds for queries: a negative time encodes as 0, below every
	// stored expiry.
	require.Equal(t, expiry.Encode(0), expiry.Encode(-5))
	require.Equal(t, expiry.Encode(0), expiry.PurgeBound(-5))
	require.Equal(t, time.Duration(math.MaxInt64), expiry.Remaining(expiry.MaxExpiryMs, -expiry.MaxExpiryMs))
}

func TestRemainingNeverNegative(t *testing.T) {
	require.Equal(t, time.Duration(math.MaxInt64), expiry.Remaining(expiry.MaxExpiryMs, 0))
	require.Equal(t, time.Duration(math.MaxInt64), expiry.Remaining(math.MaxInt64, 0))
	require.Equal(t, time.Second, expiry.Remaining(2000, 1000))
	require.Zero(t, expiry.Remaining(1000, 1000))
	require.Zero(t, expiry.Remaining(1000, math.MaxInt64))
}

func TestNowMsIsClamped(t *testing.T) {
	require.Equal(t, time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), expiry.NowMs(clockAt(time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC))))
	require.Zero(t, expiry.StampMs(clockAt(time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC))))
	require.Equal(t, int64(-expiry.MaxExpiryMs), expiry.NowMs(clockAt(time.Date(-300_000_000, 1, 1, 0, 0, 0, 0, time.UTC))))
	require.Equal(t, int64(expiry.MaxExpiryMs), expiry.NowMs(clockAt(time.Date(300_000_000, 1, 1, 0, 0, 0, 0, time.UTC))))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	require.Equal(t, at.UnixMilli(), expiry.NowMs(clockAt(at)))
}

func TestExpiryFromTime(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	now := base.UnixMilli()

	got, err := expiry.ExpiryFromTime(now, base.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, now+1000, got)

	got, err = expiry.ExpiryFromTime(now, base.Add(time.Millisecond))
	require.NoError(t, err)
	require.Equal(t, now+1, got)

	// A sub-millisecond instant rounds up, never down.
	got, err = expiry.ExpiryFromTime(now, base.Add(1500*time.Microsecond))
	require.NoError(t, err)
	require.Equal(t, now+2, got)

	// Rounding up can make an instant just after now valid.
	got, err = expiry.ExpiryFromTime(now, base.Add(time.Nanosecond))
	require.NoError(t, err)
	require.Equal(t, now+1, got)

	// Time zones do not matter.
	got, err = expiry.ExpiryFromTime(now, base.Add(time.Minute).In(time.FixedZone("x", 5*3600)))
	require.NoError(t, err)
	require.Equal(t, now+60_000, got)
}

func TestExpiryFromTimeRejectsZeroAndPast(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	now := base.UnixMilli()
	for _, at := range []time.Time{{}, base, base.Add(-time.Millisecond), base.Add(-time.Hour), time.Unix(0, 0)} {
		_, err := expiry.ExpiryFromTime(now, at)
		require.ErrorIs(t, err, engine.ErrInvalidTTL, "at %v", at)
	}
}

func TestExpiredAndRemaining(t *testing.T) {
	const exp = int64(1_700_000_001_000)
	require.False(t, expiry.Expired(exp, exp-1))
	require.True(t, expiry.Expired(exp, exp), "a key is expired from its expiry instant on")
	require.True(t, expiry.Expired(exp, exp+1))

	require.Equal(t, time.Second, expiry.Remaining(exp, exp-1000))
	require.Equal(t, time.Millisecond, expiry.Remaining(exp, exp-1))
	require.Equal(t, time.Duration(0), expiry.Remaining(exp, exp))
	require.Equal(t, time.Duration(0), expiry.Remaining(exp, exp+5000))
}

func TestIndexKey(t *testing.T) {
	const exp = int64(1_700_000_000_123)
	key := []byte("session:alice")
	ik := expiry.IndexKey(exp, key)
	require.Len(t, ik, 8+len(key))
	require.Equal(t, expiry.Encode(exp), ik[:8])
	require.Equal(t, key, ik[8:])

	gotExp, gotKey, err := expiry.SplitIndexKey(ik)
	require.NoError(t, err)
	require.Equal(t, exp, gotExp)
	require.Equal(t, key, gotKey)

	// The index key must not alias the caller's key.
	key[0] = 'X'
	require.Equal(t, byte('s'), ik[8])

	// Binary keys survive, including NUL and 0xFF bytes.
	bin := []byte{0, 0xff, 0, 1}
	gotExp, gotKey, err = expiry.SplitIndexKey(expiry.IndexKey(7, bin))
	require.NoError(t, err)
	require.Equal(t, int64(7), gotExp)
	require.Equal(t, bin, gotKey)

	for _, n := range []int{0, 7, 8} {
		_, _, err := expiry.SplitIndexKey(make([]byte, n))
		require.Error(t, err, "length %d", n)
	}
}

func TestIndexKeySortsByExpiryThenKey(t *testing.T) {
	type entry struct {
		exp int64
		key string
	}
	entries := []entry{
		{1_735_001_000_000, "token:xyz"},
		{1_735_000_000_500, "session:bob"},
		{1_735_000_000_000, "session:zed"},
		{1_735_000_000_000, "session:alice"},
		{256, "b"},
		{255, "zzzz"},
		{1_735_000_000_000, "a"},
	}
	iks := make([][]byte, len(entries))
	for i, e := range entries {
		iks[i] = expiry.IndexKey(e.exp, []byte(e.key))
	}
	sort.Slice(iks, func(i, j int) bool { return bytes.Compare(iks[i], iks[j]) < 0 })
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].exp != entries[j].exp {
			return entries[i].exp < entries[j].exp
		}
		return entries[i].key < entries[j].key
	})
	for i, ik := range iks {
		exp, key, err := expiry.SplitIndexKey(ik)
		require.NoError(t, err)
		require.Equal(t, entries[i].exp, exp, "position %d", i)
		require.Equal(t, entries[i].key, string(key), "position %d", i)
	}
}

func TestPurgeBound(t *testing.T) {
	const now = int64(1_700_000_000_000)
	bound := expiry.PurgeBound(now)
	key := []byte("k")
	// Expired at now: below the bound.
	require.Negative(t, bytes.Compare(expiry.IndexKey(now, key), bound))
	require.Negative(t, bytes.Compare(expiry.IndexKey(now-1, []byte{0xff, 0xff, 0xff}), bound))
	// Live at now: at or above the bound, whatever the key bytes.
	require.GreaterOrEqual(t, bytes.Compare(expiry.IndexKey(now+1, key), bound), 0)
	require.GreaterOrEqual(t, bytes.Compare(expiry.IndexKey(now+1, []byte{0}), bound), 0)
	// The bound agrees with Expired for expiries around now.
	for exp := now - 3; exp <= now+3; exp++ {
		below := bytes.Compare(expiry.IndexKey(exp, key), bound) < 0
		require.Equal(t, expiry.Expired(exp, now), below, "expiry %d", exp)
	}
}

func TestConstants(t *testing.T) {
	require.Equal(t, 256, expiry.PurgeBatch)
}
