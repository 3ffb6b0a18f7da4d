package testutil

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// A loop runs its step with 0, 1, … until the step returns false or Stop,
// and Stop waits for every loop and may be called again.
func TestLoops(t *testing.T) {
	l := NewLoops()
	var bounded []int
	ended := make(chan struct{})
	l.Go(func(i int) bool {
		bounded = append(bounded, i)
		if i == 4 {
			close(ended)
		}
		return i < 4
	})
	var spins atomic.Int64
	started := make(chan struct{})
	l.Go(func(i int) bool {
		if i == 0 {
			close(started)
		}
		spins.Add(1)
		return true
	})
	<-started
	<-ended // a loop that ends on its own runs every step (Stop may come before one has begun)
	l.Stop()
	n := spins.Load()
	require.Positive(t, n)
	require.Equal(t, []int{0, 1, 2, 3, 4}, bounded, "read after Stop: the loop has ended")
	l.Stop()
	require.Equal(t, n, spins.Load(), "no step after Stop returned")
}
