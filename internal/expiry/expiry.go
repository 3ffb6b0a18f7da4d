package expiry

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/layout"
)

// PurgeBatch is how many expired keys a purge deletes per transaction.
const PurgeBatch = 256

// Clock tells the time every expiry decision uses: ttl.Clock's method set,
// so that any ttl.Clock is one (this package cannot import ttl, which the
// public API is made of).
type Clock interface {
	Now() time.Time
}

// MaxExpiryMs is the latest expiry a key can have, in milliseconds since
// the Unix epoch (about 292 million years from now): the largest whole
// second whose milliseconds fit an int64.
const MaxExpiryMs = (math.MaxInt64/1000 - 1) * 1000

// NowMs is the clock's time in milliseconds since the Unix epoch, negative
// before 1970, limited to -MaxExpiryMs..MaxExpiryMs (without the overflow
// of time.Time.UnixMilli far from 1970). Every expiry decision compares
// stored expiries with it as it is, so a clock before 1970 sees every
// stored key as live until its expiry; Encode maps a negative time to 0
// for the comparisons SQL makes, which is exact because no stored expiry is
// below 1 (see ExpiryFromTTL).
func NowMs(c Clock) int64 { return clampMs(c.Now()) }

// Ms is t in milliseconds since the Unix epoch, limited as NowMs limits
// the clock's time.
func Ms(t time.Time) int64 { return clampMs(t) }

// StampMs is NowMs limited to 0 and up: the creation stamps in the catalog
// and the header count from the epoch.
func StampMs(c Clock) int64 { return max(NowMs(c), 0) }

// clampMs converts t to milliseconds since the epoch, limited to
// -MaxExpiryMs..MaxExpiryMs.
func clampMs(t time.Time) int64 {
	switch sec := t.Unix(); {
	case sec <= -MaxExpiryMs/1000:
		return -MaxExpiryMs
	case sec >= MaxExpiryMs/1000:
		return MaxExpiryMs
	}
	return t.UnixMilli()
}

// minExpiryMs is the earliest expiry a file holds: 1 ms after the epoch.
// Expiries are stored as unsigned big-endian numbers, so none may be
// negative, and 0 is what Encode makes of every time before the epoch.
const minExpiryMs = 1

// clockRange is the error of an expiry the file cannot hold because of
// where the clock stands.
func clockRange(nowMs int64, what string) error {
	return fmt.Errorf("%w: the clock reads %s, so %s; a store holds expiries from 1970-01-01T00:00:00.001Z on (set the clock, or write without a TTL)",
		engine.ErrClockRange, time.UnixMilli(nowMs).UTC().Format(time.RFC3339Nano), what)
}

// ExpiryFromTTL returns the absolute expiry (ms) of a key written at nowMs
// with time-to-live d. Sub-millisecond remainders round up, so a key never
// expires before d has passed. d <= 0 is an error, never "no TTL". An
// expiry the file cannot hold because of the clock (before 1970, or a
// clock at the latest expiry possible) is ErrClockRange.
func ExpiryFromTTL(nowMs int64, d time.Duration) (int64, error) {
	if d <= 0 {
		return 0, fmt.Errorf("%w: ttl must be positive, got %v", engine.ErrInvalidTTL, d)
	}
	ms := int64(d / time.Millisecond)
	if d%time.Millisecond != 0 {
		ms++
	}
	nowMs = max(nowMs, -MaxExpiryMs) // as NowMs limits it: no overflow below
	switch {
	case nowMs >= MaxExpiryMs:
		return 0, clockRange(nowMs, "every expiry is past the latest one possible")
	case nowMs < 0 && ms < minExpiryMs-nowMs:
		return 0, clockRange(nowMs, fmt.Sprintf("a TTL of %v expires before 1970", d))
	case nowMs < 0:
		return nowMs + ms, nil // no overflow: ms is at most ~2^53
	case ms > MaxExpiryMs-nowMs:
		return 0, fmt.Errorf("%w: ttl %v puts the expiry past the latest one possible", engine.ErrInvalidTTL, d)
	}
	return nowMs + ms, nil
}

// ExpiryFromTime returns the expiry (ms) for an absolute time, which must be
// non-zero and later than nowMs.
func ExpiryFromTime(nowMs int64, at time.Time) (int64, error) {
	if at.IsZero() {
		return 0, fmt.Errorf("%w: expiry time is zero", engine.ErrInvalidTTL)
	}
	if sec := at.Unix(); sec >= MaxExpiryMs/1000 {
		return 0, fmt.Errorf("%w: expiry time %v is past the latest one possible", engine.ErrInvalidTTL, at)
	} else if sec < -MaxExpiryMs/1000 {
		return 0, fmt.Errorf("%w: expiry time %v is not in the future", engine.ErrInvalidTTL, at)
	}
	ms := at.UnixMilli()
	if at.Sub(time.UnixMilli(ms)) > 0 {
		ms++ // round up: never expire before the requested instant
	}
	switch {
	case ms <= nowMs:
		return 0, fmt.Errorf("%w: expiry time %v is not in the future", engine.ErrInvalidTTL, at)
	case ms < minExpiryMs:
		return 0, clockRange(nowMs, fmt.Sprintf("the expiry time %v, before 1970, is in the future", at))
	}
	return ms, nil
}

// Expired reports whether a key with expiry expMs is expired at nowMs. A key
// is expired from its expiry instant on.
func Expired(expMs, nowMs int64) bool { return expMs <= nowMs }

// Remaining is the time left before expMs, as seen at nowMs: never
// negative, and at most the longest time.Duration (about 292 years), which
// stands for "longer than that" for an expiry further away.
func Remaining(expMs, nowMs int64) time.Duration {
	if expMs <= nowMs {
		return 0
	}
	left := uint64(expMs) - uint64(nowMs) // no overflow: expMs > nowMs
	if left > uint64(math.MaxInt64/int64(time.Millisecond)) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(left) * time.Millisecond
}

// Encode returns expMs as 8 bytes big-endian, the stored form: byte order
// equals numeric order for every non-negative time. A negative time (a
// clock before 1970, as a bound in a query) is encoded as 0, which orders
// the same against every stored expiry (all are at least 1).
func Encode(expMs int64) []byte {
	var b [8]byte
	return bytes.Clone(EncodeTo(&b, expMs))
}

// EncodeTo is Encode into dst (8 bytes), which it returns: a write below
// SQL encodes an expiry per row without allocating.
func EncodeTo(dst *[8]byte, expMs int64) []byte {
	binary.BigEndian.PutUint64(dst[:], uint64(max(expMs, 0)))
	return dst[:]
}

// Decode reads an 8-byte big-endian expiry. Any other length is corrupt.
func Decode(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("snkv: expiry value of %d bytes, want 8", len(b))
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

// IndexKey is the expiry-index key of key: the 8-byte expiry then the key,
// so that the index sorts by expiry time.
func IndexKey(expMs int64, key []byte) []byte {
	b := make([]byte, 8+len(key))
	binary.BigEndian.PutUint64(b, uint64(expMs))
	copy(b[8:], key)
	return b
}

// SplitIndexKey is the inverse of IndexKey.
func SplitIndexKey(ik []byte) (expMs int64, key []byte, err error) {
	if len(ik) < 9 {
		return 0, nil, fmt.Errorf("snkv: expiry index key of %d bytes is too short", len(ik))
	}
	return int64(binary.BigEndian.Uint64(ik)), ik[8:], nil
}

// PurgeBound is the smallest expiry-index key that is still live at nowMs:
// every index key below it belongs to an expired key.
func PurgeBound(nowMs int64) []byte { return Encode(nowMs + 1) }

// IndexArgs are the bound parameters that name key's expiry index row for
// the statements layout.Objects.SetIndexSQL and DelIndexSQL.
func IndexArgs(t *layout.Objects, expMs int64, key []byte) []any {
	if t.V2 {
		return []any{Encode(expMs), key}
	}
	return []any{IndexKey(expMs, key)}
}
