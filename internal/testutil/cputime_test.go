package testutil

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCPUTimeGrowsWithWork(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" {
		t.Skip("CPUTime is not measured here")
	}
	before := CPUTime()
	require.Positive(t, before)
	x := 0
	for i := range 50_000_000 {
		x += i ^ (x >> 3)
	}
	require.NotZero(t, x|1)
	require.Greater(t, CPUTime(), before)
}
