package changefeed

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/changelog"
)

// A reader's context watch wakes the waiting readers when the context it
// watches ends, is moved to the next context (the one before no longer
// wakes them), and stops for good at end (Close, or the collection of a
// dropped Reader).
func TestReaderEndsWatch(t *testing.T) {
	var pc changelog.PageCache
	woken := func() bool {
		select {
		case <-pc.Published():
			return true
		case <-time.After(50 * time.Millisecond):
			return false
		}
	}
	var e readerEnds
	first, cancelFirst := context.WithCancel(context.Background())
	defer cancelFirst()
	e.watch(first, first.Done(), &pc)
	e.watch(first, first.Done(), &pc) // watched already: one watch
	second, cancelSecond := context.WithCancel(context.Background())
	defer cancelSecond()
	e.watch(second, second.Done(), &pc)
	cancelFirst()
	require.False(t, woken(), "the first context's watch was moved to the second")
	cancelSecond()
	require.True(t, woken(), "the second context's end wakes the readers")

	third, cancelThird := context.WithCancel(context.Background())
	defer cancelThird()
	e.watch(third, third.Done(), &pc)
	e.end()
	cancelThird()
	require.False(t, woken(), "stopped at end")
	fourth, cancelFourth := context.WithCancel(context.Background())
	defer cancelFourth()
	e.watch(fourth, fourth.Done(), &pc)
	cancelFourth()
	require.False(t, woken(), "no watch after end")
}
