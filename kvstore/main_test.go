package kvstore_test

import (
	"os"
	"testing"
)

// TestMain removes what the benchmarks kept for all their -count rounds.
func TestMain(m *testing.M) {
	code := m.Run()
	removeEncScanStores()
	os.Exit(code)
}
