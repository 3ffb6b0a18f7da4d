package kvstore_test

import (
	"os"

	"github.com/snkv-go/snkv/internal/engine"
)

// SNKV_FASTPATH=0 runs the benchmarks (and tests) of this package with
// every write and scan as an SQL statement, for before/after tables of the
// B-tree fast path from one binary (docs/benchmarks.md).
func init() {
	if os.Getenv("SNKV_FASTPATH") == "0" {
		engine.SetFastPath(false)
	}
}
