package ttl

import (
	"sync"
	"time"
)

// NoTTL is returned as the remaining time of a key that never expires.
const NoTTL time.Duration = -1

// Clock tells the time every expiry decision uses. Now must be safe for
// concurrent use.
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
