package kvstore_test

// Benchmarks of the targets of the write path below SQL (docs/benchmarks.md,
// "Below the SQL layer"): a random bulk load against database/sql, and
// PutTTL against Put inside one transaction.

import (
	"context"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

const bulkN = 200_000

// bulkData returns n random 16-byte keys and a 100-byte value.
func bulkData(n int) ([][]byte, []byte) {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = make([]byte, 16)
		_, _ = rand.Read(keys[i])
	}
	v := make([]byte, benchValueLen)
	_, _ = rand.Read(v)
	return keys, v
}

// BenchmarkBulkLoad loads 200k random 16-byte keys with 100-byte values in
// one transaction into a new store (snkv: Update and Tx.Put, zero
// Options) and into a new plain table (baseline: database/sql, a prepared
// upsert in one transaction, the same pragmas).
func BenchmarkBulkLoad(b *testing.B) {
	keys, v := bulkData(bulkN)
	ctx := context.Background()
	b.Run("snkv", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			s := benchOpenStore(b, b.TempDir(), fmt.Sprintf("bulk%d.db", i), kvstore.Options{})
			b.StartTimer()
			require.NoError(b, s.Update(ctx, func(tx *kvstore.Tx) error {
				for _, k := range keys {
					if err := tx.Put(k, v); err != nil {
						return err
					}
				}
				return nil
			}))
		}
		reportKeys(b, b.N*bulkN)
	})
	// baseline: the documented pragmas; baseline-spill: also the
	// writer's cache_spill of zero Options, to show what the fast path
	// below SQL gains alone.
	for _, base := range []struct{ name, extra string }{
		{"baseline", ""},
		{"baseline-spill", fmt.Sprintf("&_pragma=cache_spill(%d)", kvstore.DefaultSpillPages)},
	} {
		b.Run(base.name, func(b *testing.B) { bulkLoadSQL(b, keys, v, base.extra) })
	}
}

// bulkLoadSQL is BenchmarkBulkLoad's baseline: a new plain table loaded
// through database/sql, a prepared upsert in one transaction.
func bulkLoadSQL(b *testing.B, keys [][]byte, v []byte, extra string) {
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		db := benchOpenSQLWith(b, b.TempDir(), fmt.Sprintf("bulk%d.db", i), true, extra)
		b.StartTimer()
		tx, err := db.Begin()
		require.NoError(b, err)
		st, err := tx.Prepare(baseUpsert)
		require.NoError(b, err)
		for _, k := range keys {
			if _, err := st.Exec(k, v); err != nil {
				b.Fatal(err)
			}
		}
		require.NoError(b, tx.Commit())
	}
	reportKeys(b, b.N*bulkN)
}

// BenchmarkTxPutTTL compares, in transactions of 1,000, Put of existing
// keys of a column family without TTL and PutTTL of existing keys of one
// whose keys all have a TTL (random order, the same keys and values): the
// target is PutTTL at most twice the cost of Put. Random keys make it a
// count of pages: each write dirties a leaf of every B-tree it touches.
func BenchmarkTxPutTTL(b *testing.B) {
	d := newBenchData(benchN)
	s := benchOpenStore(b, b.TempDir(), "ttl.db", kvstore.Options{})
	benchLoad(b, s.Default(), d, 0, benchN, 0)
	expiring, err := s.CreateColumnFamily("expiring")
	require.NoError(b, err)
	benchLoad(b, expiring, d, 0, benchN, 24*time.Hour)
	ctx := context.Background()
	bufs := freshBufs(benchBatch)
	// Put: a column family without TTL; PutTTL: the one whose keys all
	// have a TTL; PutClearingTTL: a Put on that one, which must remove each
	// key's TTL rows (it dirties the same three B-trees as PutTTL).
	for _, op := range []string{"Put", "PutTTL", "PutClearingTTL"} {
		b.Run(op, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				err := s.Update(ctx, func(tx *kvstore.Tx) error {
					for j := range benchBatch {
						n := i*benchBatch + j
						var err error
						switch op {
						case "PutTTL":
							err = tx.CF(expiring).PutTTL(d.key(n), d.fresh(n, bufs[j]), 24*time.Hour)
						case "PutClearingTTL":
							err = tx.CF(expiring).Put(d.key(n), d.fresh(n, bufs[j]))
						default:
							err = tx.Put(d.key(n), d.fresh(n, bufs[j]))
						}
						if err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			reportKeys(b, b.N*benchBatch)
		})
	}
}
