package testutil_test

import (
	"errors"
	"iter"
	"runtime"
	"testing"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/stretchr/testify/require"
)

func seqOf(vs ...int) iter.Seq2[int, error] {
	return func(yield func(int, error) bool) {
		for _, v := range vs {
			if v < 0 {
				if !yield(0, errors.New("negative")) {
					return
				}
				continue
			}
			if !yield(v, nil) {
				return
			}
		}
	}
}

// Drain returns the items in order, nil for none, and fails the test on an
// error.
func TestDrain(t *testing.T) {
	require.Equal(t, []int{3, 1, 2}, testutil.Drain(t, seqOf(3, 1, 2)))
	require.Nil(t, testutil.Drain(t, seqOf()))

	failed := &failRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		testutil.Drain[int](failed, seqOf(1, -1, 2))
	}()
	<-done
	require.True(t, failed.failed, "an error of the iteration fails the test")
}

// failRecorder is a testing.TB that records a failure instead of failing.
type failRecorder struct {
	testing.TB
	failed bool
}

func (r *failRecorder) Helper()               {}
func (r *failRecorder) Errorf(string, ...any) { r.failed = true }
func (r *failRecorder) FailNow()              { r.failed = true; runtime.Goexit() }
