package ttl_test

import (
	"sync"
	"testing"
	"time"

	"github.com/snkv-go/snkv/ttl"
	"github.com/stretchr/testify/require"
)

func TestManualClock(t *testing.T) {
	start := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	c := ttl.NewManualClock(start)
	require.True(t, c.Now().Equal(start))
	require.Equal(t, start.UnixMilli(), c.Now().UnixMilli())

	c.Advance(1500 * time.Millisecond)
	require.True(t, c.Now().Equal(start.Add(1500*time.Millisecond)))
	require.Equal(t, start.UnixMilli()+1500, c.Now().UnixMilli())

	later := start.Add(time.Hour)
	c.Set(later)
	require.True(t, c.Now().Equal(later))

	// It never moves on its own.
	a := c.Now()
	b := c.Now()
	require.True(t, a.Equal(b))

	var _ ttl.Clock = c
}

func TestManualClockConcurrent(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	c := ttl.NewManualClock(start)
	const workers, steps = 8, 200
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range steps {
				c.Advance(time.Millisecond)
				_ = c.Now()
			}
		}()
	}
	wg.Wait()
	require.Equal(t, start.UnixMilli()+workers*steps, c.Now().UnixMilli())
}

func TestSystemClock(t *testing.T) {
	before := time.Now()
	got := ttl.SystemClock.Now()
	after := time.Now()
	require.False(t, got.Before(before.Add(-time.Second)))
	require.False(t, got.After(after.Add(time.Second)))
}

func TestNoTTL(t *testing.T) {
	require.Equal(t, time.Duration(-1), ttl.NoTTL)
}
