package ttl

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/snkv-go/snkv/internal/engine"
)

// NoTTL is returned as the remaining time of a key that never expires.
const NoTTL time.Duration = -1

// PurgeBatch is how many expired keys a purge deletes per transaction.
const PurgeBatch = 256

// Clock tells the time every expiry decision uses.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

// Now returns time.Now().
func (systemClock) Now() time.Time { return time.Now() }

// SystemClock is the wall clock; it is the default.
var SystemClock Clock = systemClock{}

// ManualClock is a Clock that moves only when told to. It is safe for
// concurrent use.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewManualClock returns a ManualClock set to t.
func NewManualClock(t time.Time) *ManualClock { return &ManualClock{now: t} }

// Now returns the clock's current time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to t.
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// MaxExpiryMs is the latest expiry a key can have, in milliseconds since
// the Unix epoch (about 292 million years from now): the largest whole
// second whose milliseconds fit an int64.
const MaxExpiryMs = (math.MaxInt64/1000 - 1) * 1000

// NowMs is the clock's time in milliseconds since the Unix epoch, limited
// to 0..MaxExpiryMs: expiries are stored as unsigned big-endian numbers, so
// a clock set before 1970 reads as 1970-01-01 (a TTL then counts from the
// epoch) and never produces a time that sorts after every real expiry.
func NowMs(c Clock) int64 { return clampMs(c.Now()) }

// clampMs converts t to milliseconds since the epoch, limited to
// 0..MaxExpiryMs, without the overflow of time.Time.UnixMilli far from
// 1970.
func clampMs(t time.Time) int64 {
	switch sec := t.Unix(); {
	case sec < 0:
		return 0
	case sec >= MaxExpiryMs/1000:
		return MaxExpiryMs
	}
	return t.UnixMilli()
}

// ErrInvalid is the error this package reports for a bad TTL; kvstore
// re-exports the same value as ErrInvalidTTL.
var ErrInvalid = engine.ErrInvalidTTL

// ExpiryFromTTL returns the absolute expiry (ms) of a key written at nowMs
// with time-to-live d. Sub-millisecond remainders round up, so a key never
// expires before d has passed. d <= 0 is an error, never "no TTL".
func ExpiryFromTTL(nowMs int64, d time.Duration) (int64, error) {
	if d <= 0 {
		return 0, fmt.Errorf("%w: ttl must be positive, got %v", ErrInvalid, d)
	}
	ms := int64(d / time.Millisecond)
	if d%time.Millisecond != 0 {
		ms++
	}
	nowMs = max(nowMs, 0)
	if nowMs > MaxExpiryMs || ms > MaxExpiryMs-nowMs {
		return 0, fmt.Errorf("%w: ttl %v puts the expiry past the latest one possible", ErrInvalid, d)
	}
	return nowMs + ms, nil
}

// ExpiryFromTime returns the expiry (ms) for an absolute time, which must be
// non-zero and later than nowMs.
func ExpiryFromTime(nowMs int64, at time.Time) (int64, error) {
	if at.IsZero() {
		return 0, fmt.Errorf("%w: expiry time is zero", ErrInvalid)
	}
	if sec := at.Unix(); sec >= MaxExpiryMs/1000 {
		return 0, fmt.Errorf("%w: expiry time %v is past the latest one possible", ErrInvalid, at)
	} else if sec < 0 {
		return 0, fmt.Errorf("%w: expiry time %v is before 1970 (not in the future)", ErrInvalid, at)
	}
	ms := at.UnixMilli()
	if at.Sub(time.UnixMilli(ms)) > 0 {
		ms++ // round up: never expire before the requested instant
	}
	if ms <= nowMs {
		return 0, fmt.Errorf("%w: expiry time %v is not in the future", ErrInvalid, at)
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
// equals numeric order for every non-negative time.
func Encode(expMs int64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, uint64(expMs))
	return b
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
