package kvstore_test

import (
	"database/sql"
	"errors"
	"os"
	"testing"

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

// scanSQLRaw is scanSQL reading each row into sql.RawBytes: no copies, as
// a borrowing scan of snkv.
func scanSQLRaw(b *testing.B, st *sql.Stmt, args ...any) int {
	rows, err := st.Query(args...)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	var k, v sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&k, &v); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		b.Fatal(err)
	}
	return n
}
