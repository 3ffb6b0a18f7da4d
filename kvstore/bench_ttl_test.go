package kvstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// BenchmarkTTLPaths pairs each TTL path with its plain counterpart in the
// same run, on two column families of one store holding the same benchN
// keys: "plain" without TTL, "ttl" with every key carrying a live one-hour
// TTL. Each pair's names end in /plain and /ttl; cpu-ns/op is the CPU time
// of the process per operation. The targets read as ratios of a
// pair: tx-new, autocommit and expire-persist ≤ 1.5×, tx-refresh ≤ 2×,
// get, getmany and exists ≥ 0.8× the rate, scan ≥ 0.7× (scan-borrow is
// the same scan lending its rows).
func BenchmarkTTLPaths(b *testing.B) {
	ctx := context.Background()
	d, s, plain, ttl := benchTTLPair(b, "paths.db", kvstore.Options{PurgeInterval: -1})
	_, err := s.Checkpoint(ctx, kvstore.CheckpointTruncate)
	require.NoError(b, err)
	cfs := []struct {
		name string
		cf   *kvstore.ColumnFamily
	}{{"plain", plain}, {"ttl", ttl}}
	buf := make([]byte, benchValueLen)
	// put writes key through h: Put on the plain family, PutTTL on the other.
	put := func(h *kvstore.ColumnFamily, isTTL bool, key, value []byte) error {
		if isTTL {
			return h.PutTTL(key, value, time.Hour)
		}
		return h.Put(key, value)
	}
	// txRun times benchBatch writes in one Update, the key and the value of
	// the i-th write of the run from kv.
	txRun := func(label string, kv func(i int) ([]byte, []byte)) {
		for _, c := range cfs {
			cpuRun(b, label+"/"+c.name, func(b *testing.B) {
				i := 0
				for b.Loop() {
					require.NoError(b, s.Update(ctx, func(tx *kvstore.Tx) error {
						h := tx.CF(c.cf)
						for range benchBatch {
							i++
							k, v := kv(i)
							if err := put(h, c.name == "ttl", k, v); err != nil {
								return err
							}
						}
						return nil
					}))
				}
				reportKeys(b, b.N*benchBatch)
			})
		}
	}
	// 1,000 keys never stored before in one Update: the table grows.
	fresh := 0
	txRun("tx-new", func(i int) ([]byte, []byte) {
		fresh++ // across both families and every run: always a new key
		return fmt.Appendf(nil, "n%015d", fresh), d.fresh(i, buf)
	})
	// 1,000 random existing keys in one Update: a refresh of each key's TTL.
	txRun("tx-refresh", func(i int) ([]byte, []byte) { return d.key(i), d.fresh(i, buf) })
	// One write transaction per call, an existing key.
	for _, c := range cfs {
		cpuRun(b, "autocommit/"+c.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				require.NoError(b, put(c.cf, c.name == "ttl", d.key(i), d.fresh(i, buf)))
			}
		})
	}
	// Expire and Persist in turn on existing keys, against Put on the plain
	// family; both are one write transaction a call.
	cpuRun(b, "expire-persist/plain", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			require.NoError(b, plain.Put(d.key(i/2), d.fresh(i, buf)))
		}
	})
	cpuRun(b, "expire-persist/ttl", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if i%2 == 1 {
				require.NoError(b, ttl.Persist(d.key(i/2)))
			} else {
				require.NoError(b, ttl.Expire(d.key(i/2), time.Hour))
			}
		}
	})
	_, err = s.Checkpoint(ctx, kvstore.CheckpointTruncate)
	require.NoError(b, err)
	// Point reads of one key: its value, and whether it exists.
	for _, r := range []struct {
		name string
		read func(cf *kvstore.ColumnFamily, key []byte) error
	}{
		{"get", func(cf *kvstore.ColumnFamily, key []byte) error {
			if v, err := cf.Get(key); err != nil || len(v) != benchValueLen {
				return fmt.Errorf("get: %d bytes, %v", len(v), err)
			}
			return nil
		}},
		{"exists", func(cf *kvstore.ColumnFamily, key []byte) error {
			if ok, err := cf.Exists(key); err != nil || !ok {
				return fmt.Errorf("exists: %v, %v", ok, err)
			}
			return nil
		}},
	} {
		for _, c := range cfs {
			cpuRun(b, r.name+"/"+c.name, func(b *testing.B) {
				i := 0
				for b.Loop() {
					i++
					if err := r.read(c.cf, d.key(i)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
	keys := make([][]byte, 100)
	for _, c := range cfs {
		cpuRun(b, "getmany/"+c.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				for j := range keys {
					i++
					keys[j] = d.key(i)
				}
				vs, err := c.cf.GetMany(keys)
				if err != nil || len(vs) != len(keys) || vs[0] == nil {
					b.Fatalf("getmany: %d values, %v", len(vs), err)
				}
			}
			reportKeys(b, b.N*len(keys))
		})
	}
	// A full scan copying each row, and one lending them (Borrow): the
	// read without the copies and the collector's work they bring.
	for _, form := range []struct {
		name string
		opts kvstore.IterOptions
	}{{"scan", kvstore.IterOptions{}}, {"scan-borrow", kvstore.IterOptions{Borrow: true}}} {
		for _, c := range cfs {
			cpuRun(b, form.name+"/"+c.name, func(b *testing.B) {
				for b.Loop() {
					n := 0
					for _, err := range c.cf.Scan(form.opts) {
						if err != nil {
							b.Fatal(err)
						}
						n++
					}
					if n < benchN {
						b.Fatalf("scanned %d keys, want at least %d", n, benchN)
					}
				}
			})
		}
	}
}

// BenchmarkTTLWALPages counts the WAL pages (frames) the write paths of
// BenchmarkTTLPaths append per operation, TTL beside plain, on a store
// whose automatic checkpoints are off: the frames of b.N operations, read
// by a passive checkpoint after them, over b.N (wal-pages/op), and the
// CPU time of the operations with no checkpoint among them. A write
// outside a transaction pays each page's frame and its share of the
// checkpoints that copy it back, so these counts bound what the TTL
// paths can cost against the plain ones (docs/ttl.md, "What a TTL
// costs"). tx-new counts per key, its transactions of benchBatch new keys.
func BenchmarkTTLWALPages(b *testing.B) {
	ctx := context.Background()
	d, s, plain, ttl := benchTTLPair(b, "pages.db", kvstore.Options{PurgeInterval: -1, WALAutoCheckpoint: -1})
	buf := make([]byte, benchValueLen)
	// pages runs b.N operations of op from an empty WAL and reports the
	// frames they appended, per operation times perOp.
	pages := func(name string, perOp int, op func(i int) error) {
		b.Run(name, func(b *testing.B) {
			_, err := s.Checkpoint(ctx, kvstore.CheckpointTruncate)
			require.NoError(b, err)
			c0 := int64(testutil.CPUTime())
			i := 0
			for b.Loop() {
				i++
				require.NoError(b, op(i))
			}
			b.ReportMetric(float64(int64(testutil.CPUTime())-c0)/float64(b.N), "cpu-ns/op")
			r, err := s.Checkpoint(ctx, kvstore.CheckpointPassive)
			require.NoError(b, err)
			b.ReportMetric(float64(r.WALFrames)/float64(b.N*perOp), "wal-pages/op")
		})
	}
	pages("autocommit/plain", 1, func(i int) error { return plain.Put(d.key(i), d.fresh(i, buf)) })
	pages("autocommit/ttl", 1, func(i int) error { return ttl.PutTTL(d.key(i), d.fresh(i, buf), time.Hour) })
	pages("expire-persist/ttl", 1, func(i int) error {
		if i%2 == 1 {
			return ttl.Persist(d.key(i / 2))
		}
		return ttl.Expire(d.key(i/2), time.Hour)
	})
	fresh := 0
	for _, c := range []struct {
		name string
		cf   *kvstore.ColumnFamily
	}{{"plain", plain}, {"ttl", ttl}} {
		pages("tx-new/"+c.name, benchBatch, func(int) error {
			return s.Update(ctx, func(tx *kvstore.Tx) error {
				h := tx.CF(c.cf)
				for range benchBatch {
					fresh++
					k := fmt.Appendf(nil, "n%015d", fresh)
					var err error
					if c.name == "ttl" {
						err = h.PutTTL(k, d.fresh(fresh, buf), time.Hour)
					} else {
						err = h.Put(k, d.fresh(fresh, buf))
					}
					if err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
}

// benchTTLPair opens a store with opts and loads the same benchN keys into
// a plain column family and into one where every key has a live one-hour
// TTL.
func benchTTLPair(b *testing.B, name string, opts kvstore.Options) (d *benchData, s *kvstore.Store, plain, ttl *kvstore.ColumnFamily) {
	d = newBenchData(benchN)
	s = benchOpenStore(b, b.TempDir(), name, opts)
	plain, err := s.CreateColumnFamily("plain")
	require.NoError(b, err)
	ttl, err = s.CreateColumnFamily("ttl")
	require.NoError(b, err)
	benchLoad(b, plain, d, 0, benchN, 0)
	benchLoad(b, ttl, d, 0, benchN, time.Hour)
	return d, s, plain, ttl
}
