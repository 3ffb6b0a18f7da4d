package tests

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TestFastPathWritesWhatSQLWrites runs one random sequence of writes (puts
// of new and existing keys, empty and overflowing values, deletes, batches,
// keys of 1 byte to 2 KiB) on two stores, one with the B-tree fast path and
// one with every write as an SQL statement, and requires identical tables:
// the same keys, values and checksums, with the same SQLite storage
// classes, and both files clean under PRAGMA integrity_check and
// CheckIntegrity.
func TestFastPathWritesWhatSQLWrites(t *testing.T) {
	if !engine.FastPath {
		t.Skip("built with snkv_nofast: there is one path only")
	}
	was := engine.SetFastPath(true)
	t.Cleanup(func() { engine.SetFastPath(was) })
	ctx := context.Background()
	dir := t.TempDir()
	open := func(name string) *kvstore.Store {
		db, err := kvstore.Open(filepath.Join(dir, name), kvstore.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	fast, slow := open("fast.db"), open("sql.db")
	cfs := map[*kvstore.Store][]*kvstore.ColumnFamily{}
	for _, db := range []*kvstore.Store{fast, slow} {
		users, err := db.CreateColumnFamily("users")
		require.NoError(t, err)
		cfs[db] = []*kvstore.ColumnFamily{db.Default(), users}
	}
	// A third column family with TTL, where every write must take SQL.
	for _, db := range []*kvstore.Store{fast, slow} {
		ttlcf, err := db.CreateColumnFamily("expiring")
		require.NoError(t, err)
		require.NoError(t, ttlcf.PutTTL([]byte("seed"), []byte("x"), time.Hour))
		cfs[db] = append(cfs[db], ttlcf)
	}

	rng := rand.New(rand.NewPCG(17, 4))
	key := func() []byte {
		switch rng.IntN(10) {
		case 0:
			return []byte{byte(rng.IntN(256))}
		case 1:
			return bytes.Repeat([]byte{byte(rng.IntN(256))}, 1+rng.IntN(2048))
		}
		return fmt.Appendf(nil, "k%05d", rng.IntN(3000))
	}
	value := func() []byte {
		switch rng.IntN(8) {
		case 0:
			return nil
		case 1:
			return bytes.Repeat([]byte{byte(rng.IntN(256))}, 1000+rng.IntN(20000)) // overflow pages
		}
		return fmt.Appendf(nil, "v%d-%x", rng.IntN(1e6), rng.Uint64())
	}
	type op struct {
		cf   int
		del  bool
		k, v []byte
	}
	for round := range 60 {
		ops := make([]op, 1+rng.IntN(200))
		for i := range ops {
			ops[i] = op{cf: rng.IntN(3), del: rng.IntN(6) == 0, k: key(), v: value()}
		}
		batch := round%3 == 2
		for _, db := range []*kvstore.Store{fast, slow} {
			engine.SetFastPath(db == fast)
			before := engine.FastWrites()
			err := db.Update(ctx, func(tx *kvstore.Tx) error {
				if batch {
					var b kvstore.Batch
					for _, o := range ops {
						if o.del {
							b.Delete(o.k)
						} else {
							b.Put(o.k, o.v)
						}
					}
					return tx.CF(cfs[db][0]).Apply(ctx, &b)
				}
				for _, o := range ops {
					h := tx.CF(cfs[db][o.cf])
					if o.del {
						if err := h.Delete(o.k); err != nil && err != kvstore.ErrNotFound {
							return err
						}
						continue
					}
					if err := h.Put(o.k, o.v); err != nil {
						return err
					}
				}
				return nil
			})
			require.NoError(t, err)
			if db == slow {
				require.Equal(t, before, engine.FastWrites(), "the SQL side wrote below SQL")
			}
		}
	}
	engine.SetFastPath(true)
	require.Greater(t, engine.FastWrites(), uint64(2000), "the fast side's puts went below SQL")
	for _, db := range []*kvstore.Store{fast, slow} {
		rep, err := db.CheckIntegrity(ctx)
		require.NoError(t, err)
		require.Empty(t, rep.Problems)
		require.Zero(t, rep.Unverified)
	}
	require.NoError(t, fast.Close())
	require.NoError(t, slow.Close())
	for _, table := range []string{"default", "users", "expiring"} {
		a := dumpTable(t, filepath.Join(dir, "fast.db"), table)
		b := dumpTable(t, filepath.Join(dir, "sql.db"), table)
		require.Greater(t, len(a), 10, table)
		require.Equal(t, b, a, "table %q differs between the paths", table)
	}
}

// dumpTable reads every row of table with its storage classes, after
// checking the file with PRAGMA integrity_check.
func dumpTable(t *testing.T, path, table string) []string {
	t.Helper()
	db, err := engine.Open(engine.Config{Path: path, ReadOnly: true, Journal: "WAL", Sync: "NORMAL",
		BusyTimeout: time.Second, MaxReaders: 1})
	require.NoError(t, err)
	defer db.Close()
	var out []string
	require.NoError(t, db.WithReader(context.Background(), func(c *engine.Conn) error {
		rows, err := c.Query(context.Background(), `SELECT integrity_check FROM pragma_integrity_check`)
		require.NoError(t, err)
		for rows.Next() {
			require.Equal(t, "ok", string(rows.Bytes(0)))
		}
		require.NoError(t, rows.Close())
		rows, err = c.Query(context.Background(), `SELECT typeof(key), hex(key), typeof(value), hex(value), typeof(crc), crc FROM `+engine.Quote(table)+` ORDER BY key`)
		require.NoError(t, err)
		for rows.Next() {
			out = append(out, fmt.Sprintf("%s %s %s %s %s %d", rows.Bytes(0), rows.Bytes(1), rows.Bytes(2), rows.Bytes(3), rows.Bytes(4), rows.Int(5)))
		}
		return rows.Close()
	}))
	return out
}
