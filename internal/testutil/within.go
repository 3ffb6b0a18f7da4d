package testutil

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ReturnsWithin runs f in a goroutine and fails the test when it has not
// returned within d (reporting what, e.g. "Close hangs") or returned an
// error. For calls that must not wait on something a test holds.
func ReturnsWithin(t testing.TB, d time.Duration, what string, f func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(d):
		t.Fatal(what)
	}
}
