package testutil

import (
	"iter"
	"testing"

	"github.com/stretchr/testify/require"
)

// Drain returns every item of an iteration, in its order (nil for none),
// failing the test at the first error.
func Drain[T any](t testing.TB, seq iter.Seq2[T, error]) []T {
	t.Helper()
	var out []T
	for v, err := range seq {
		require.NoError(t, err)
		out = append(out, v)
	}
	return out
}
