package changelog

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/engine"
)

// dumpLog returns every row of the change log as SQL literals (quote():
// the storage class shows, a BLOB from a TEXT, an empty BLOB from NULL),
// and checks the file's integrity.
func dumpLog(t *testing.T, db *engine.DB) []string {
	t.Helper()
	var out []string
	require.NoError(t, db.WithReader(context.Background(), func(c *engine.Conn) error {
		rows, err := c.Query(context.Background(), `SELECT quote(seq) || ' ' || quote(tx) || ' ' || quote(at_ms) || ' ' || quote(cf) || ' ' || quote(op) || ' ' || quote(key) || ' ' || quote(value) || ' ' || quote(expiry_ms) FROM "__snkv_changelog" ORDER BY seq`)
		if err != nil {
			return err
		}
		for rows.Next() {
			out = append(out, string(rows.Bytes(0)))
		}
		if err := rows.Close(); err != nil {
			return err
		}
		ok, err := c.Query(context.Background(), `PRAGMA integrity_check`)
		if err != nil {
			return err
		}
		require.True(t, ok.Next())
		require.Equal(t, "ok", string(ok.Bytes(0)))
		return ok.Close()
	}))
	return out
}

// The rows the change log gets below SQL are the rows its INSERT writes:
// every storage class and integer size, NULL and empty keys and values,
// values that overflow their page, enough rows to split pages.
func TestRowsBelowSQLAreTheInsertsRows(t *testing.T) {
	ctx := context.Background()
	big := bytes.Repeat([]byte("v"), 70_000)
	ints := []int64{0, 1, 2, 127, 128, 255, 32767, 32768, 8388607, 8388608, 1<<31 - 1, 1 << 31, 1<<47 - 1, 1 << 47, 1<<63 - 1}
	record := func(db *engine.DB, r *Recorder) {
		for i := range 3 {
			tx := begin(t, db)
			for j := range 1000 {
				n := i*1000 + j
				var key, value []byte
				switch n % 5 {
				case 0:
					key = []byte(fmt.Sprintf("key:%d", n))
				case 1:
					key, value = []byte{}, []byte{}
				case 2:
					key, value = []byte{0, 0xff}, []byte(fmt.Sprintf("value %d", n))
				case 3:
					key = bytes.Repeat([]byte{byte(n)}, 5000)
				}
				if n%97 == 0 {
					value = big
				}
				exp := NoExpiry
				if n%3 != 0 {
					exp = ints[n%len(ints)]
				}
				cf := []string{"users", "", "données", "x"}[n%4]
				op := Op(1 + n%8)
				_, err := r.Record(ctx, tx, cf, op, key, value, exp)
				require.NoError(t, err)
			}
			require.NoError(t, tx.Commit())
		}
	}
	for _, now := range []int64{0, 1, 1_700_000_000_000} {
		sqlDB, fastDB := testDB(t), testDB(t)
		setup(t, sqlDB)
		setup(t, fastDB)
		record(sqlDB, &Recorder{Now: func() int64 { return now }, SQLOnly: true})
		before := engine.FastWrites()
		record(fastDB, &Recorder{Now: func() int64 { return now }})
		if engine.FastPath {
			require.Equal(t, uint64(3000), engine.FastWrites()-before, "every change went below SQL")
		}
		want, got := dumpLog(t, sqlDB), dumpLog(t, fastDB)
		require.Len(t, got, 3001)
		for i := 1; i < len(want); i++ { // row 0: the header, with its random epoch
			require.Equal(t, want[i], got[i], "row %d", i)
		}
	}
}

// Rows appended below SQL straight onto the last leaf (btree's appendCell)
// roll back with their transaction, follow trims of the log's front and SQL
// statements run between them, as the INSERT's rows do: the same rows both
// ways, and an intact file.
func TestRowsBelowSQLAcrossRollbacksAndTrims(t *testing.T) {
	ctx := context.Background()
	record := func(db *engine.DB, r *Recorder) {
		for i := range 6 {
			tx := begin(t, db)
			put := func(n int) {
				key := []byte(fmt.Sprintf("key:%d:%d", i, n))
				_, err := r.Record(ctx, tx, "users", OpPut, key, bytes.Repeat([]byte{byte(n)}, n%300), NoExpiry)
				require.NoError(t, err)
			}
			for n := range 700 {
				put(n)
				if n%97 == 0 { // a statement between two appends closes the cursor
					_, err := Read(ctx, tx.Conn(), 1, 1)
					require.NoError(t, err)
				}
			}
			if i == 2 { // all but the last row: the last leaf keeps free blocks
				_, err := Trim(ctx, tx.Conn(), 1_000_000, 1_000_000)
				require.NoError(t, err)
				for n := 700; n < 800; n++ {
					put(n)
				}
			}
			if i%2 == 1 {
				require.NoError(t, tx.Rollback())
				continue
			}
			require.NoError(t, tx.Commit())
		}
	}
	sqlDB, fastDB := testDB(t), testDB(t)
	setup(t, sqlDB)
	setup(t, fastDB)
	record(sqlDB, &Recorder{Now: func() int64 { return 5 }, SQLOnly: true})
	record(fastDB, &Recorder{Now: func() int64 { return 5 }})
	want, got := dumpLog(t, sqlDB), dumpLog(t, fastDB)
	require.Len(t, got, 1+1+100+700)
	require.Equal(t, len(want), len(got))
	for i := 1; i < len(want); i++ {
		require.Equal(t, want[i], got[i], "row %d", i)
	}
}
