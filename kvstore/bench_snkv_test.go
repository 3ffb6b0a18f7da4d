package kvstore_test

// SNKV's own benchmark (tests/test_benchmark.c of the C store our design
// comes from, v0.8), re-made against kvstore with zero Options: the same
// keys, values, transaction shapes and counts, in the same order on one
// store, then the bulk insert on a fresh one. Each phase reports its
// operations per second as a metric, so one run gives the whole table:
//
//	go test -run '^$' -bench SNKVWorkload -benchtime 1x -count 3 ./kvstore/
//
// SNKV_BENCH_RECORDS sets the record count (default 1,000,000, as the C
// benchmark). SNKV_BENCH_NOCHECKPOINT=1 opens the stores with
// WALAutoCheckpoint -1, as SNKV's own default never checkpoints (its
// walSizeLimit is 0), where zero Options checkpoint every 1,000 WAL pages
// on a goroutine of their own (so that work overlaps the phases after a
// large commit). Each phase also reports its operations per second of
// the process's CPU time (user and system, every thread: the checkpointer's
// work during the phase included), which a loaded machine distorts far less
// than the wall clock. docs/benchmarks.md has the figures beside the C
// program's and the steps to build it. SNKV_BENCH_PASSWORD=pw opens both
// stores with that password (the default KDF; opening is not timed), the
// Go side of bench/snkv-enc/run.sh (see docs/encryption.md).
// SNKV_BENCH_SETTLE=1 copies the WAL into the file (Checkpoint, passive,
// untimed) before each phase, so that no phase is charged with the
// background checkpoint of the phase before it: a diagnostic that shows
// each phase's own work (SNKV C never checkpoints).

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/snkv-go/snkv/iterator"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

const (
	snkvBatch   = 1000
	snkvReads   = 50_000
	snkvUpdates = 10_000
	snkvDeletes = 5_000
	snkvMixed   = 20_000
)

func snkvRecords() int {
	if n, err := strconv.Atoi(os.Getenv("SNKV_BENCH_RECORDS")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

// snkvOptions returns the Options of the workload benchmarks' stores:
// zero Options, with WALAutoCheckpoint -1 when SNKV_BENCH_NOCHECKPOINT is
// set and a password when SNKV_BENCH_PASSWORD is.
func snkvOptions() kvstore.Options {
	var opts kvstore.Options
	if os.Getenv("SNKV_BENCH_NOCHECKPOINT") != "" {
		opts.WALAutoCheckpoint = -1
	}
	if pw := os.Getenv("SNKV_BENCH_PASSWORD"); pw != "" {
		opts.Encryption = &kvstore.Encryption{Password: []byte(pw)}
	}
	return opts
}

// snkvText returns prefix, i as 8 zero-padded decimal digits, and suffix:
// what the C benchmark's snprintf("…%08d…") writes, at about its speed
// (fmt.Appendf took a fifth of the Go side's time in the write phases).
func snkvText(prefix string, i int, suffix string) []byte {
	b := make([]byte, 0, len(prefix)+8+len(suffix))
	b = append(b, prefix...)
	var d [8]byte
	for j := 7; j >= 0; j-- {
		d[j] = byte('0' + i%10)
		i /= 10
	}
	b = append(b, d[:]...)
	return append(b, suffix...)
}

func BenchmarkSNKVWorkload(b *testing.B) {
	n := snkvRecords()
	ctx := context.Background()
	ph := newPhases()
	settle := os.Getenv("SNKV_BENCH_SETTLE") != ""
	var cur *kvstore.Store // the store the phases run on, for settle
	phase := func(name string, ops int, fn func()) {
		if settle && cur != nil {
			_, err := cur.Checkpoint(ctx, kvstore.CheckpointPassive)
			require.NoError(b, err)
		}
		ph.run(name, ops, fn)
	}
	opts := snkvOptions()
	for b.Loop() {
		dir := b.TempDir()
		db, err := kvstore.Open(filepath.Join(dir, "benchmark_kv.db"), opts)
		require.NoError(b, err)
		cur = db
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
		key := func(i int) []byte { return snkvText("key_", i, "") }

		phase("seqwrite", n, func() {
			for i := 0; i < n; i += snkvBatch {
				require.NoError(b, db.Update(ctx, func(tx *kvstore.Tx) error {
					for j := i; j < min(i+snkvBatch, n); j++ {
						v := snkvText("value_", j, "_with_some_additional_data_to_make_it_realistic")
						if err := tx.Put(key(j), v); err != nil {
							return err
						}
					}
					return nil
				}))
			}
		})
		phase("randread", snkvReads, func() {
			for range snkvReads {
				if _, err := db.Get(key(rng.IntN(n))); err != nil && err != kvstore.ErrNotFound {
					b.Fatal(err)
				}
			}
		})
		count := 0
		phase("scan", n, func() {
			for e, err := range db.Scan(iterator.Options{Borrow: true}) {
				if err != nil {
					b.Fatal(err)
				}
				_, _ = e.Key, e.Value
				count++
			}
		})
		require.Equal(b, n, count)
		phase("update", snkvUpdates, func() {
			require.NoError(b, snkvUpdate(ctx, db, rng, n))
		})
		phase("delete", snkvDeletes, func() {
			require.NoError(b, snkvDelete(ctx, db, rng, n))
		})
		phase("exists", snkvReads, func() {
			for range snkvReads {
				if _, err := db.Exists(key(rng.IntN(n))); err != nil {
					b.Fatal(err)
				}
			}
		})
		phase("mixed", snkvMixed, func() {
			require.NoError(b, db.Update(ctx, func(tx *kvstore.Tx) error {
				for range snkvMixed {
					i, op := rng.IntN(n), rng.IntN(100)
					var err error
					switch {
					case op < 70:
						_, err = tx.Get(key(i))
					case op < 90:
						err = tx.Put(key(i), snkvText("mixed_value_", i, ""))
					default:
						err = tx.Delete(key(i))
					}
					if err != nil && err != kvstore.ErrNotFound {
						return err
					}
				}
				return nil
			}))
		})
		require.NoError(b, db.Close())

		bulk, err := kvstore.Open(filepath.Join(dir, "benchmark_bulk.db"), opts)
		require.NoError(b, err)
		cur = nil // a fresh store: nothing to settle
		phase("bulk", n, func() {
			require.NoError(b, bulk.Update(ctx, func(tx *kvstore.Tx) error {
				for i := range n {
					if err := tx.Put(snkvText("bulk_key_", i, ""), snkvText("bulk_value_", i, "")); err != nil {
						return err
					}
				}
				return nil
			}))
		})
		require.NoError(b, bulk.Close())
	}
	ph.report(b, "seqwrite", "randread", "scan", "update", "delete", "exists", "mixed", "bulk")
}

// snkvText writes what the C benchmark's format strings write.
func TestSNKVText(t *testing.T) {
	for _, i := range []int{0, 7, 12345678, 999999, 1000000} {
		require.Equal(t, fmt.Sprintf("key_%08d", i), string(snkvText("key_", i, "")))
		require.Equal(t, fmt.Sprintf("value_%08d_tail", i), string(snkvText("value_", i, "_tail")))
	}
}

// snkvUpdate is the benchmark's update phase: snkvUpdates random keys of
// the n loaded rewritten in one transaction.
func snkvUpdate(ctx context.Context, db *kvstore.Store, rng *rand.Rand, n int) error {
	return db.Update(ctx, func(tx *kvstore.Tx) error {
		for range snkvUpdates {
			i := rng.IntN(n)
			if err := tx.Put(snkvText("key_", i, ""), snkvText("updated_value_", i, "")); err != nil {
				return err
			}
		}
		return nil
	})
}

// snkvDelete is the benchmark's delete phase: snkvDeletes random keys of
// the n loaded deleted in one transaction (a key deleted before is no
// error).
func snkvDelete(ctx context.Context, db *kvstore.Store, rng *rand.Rand, n int) error {
	return db.Update(ctx, func(tx *kvstore.Tx) error {
		for range snkvDeletes {
			if err := tx.Delete(snkvText("key_", rng.IntN(n), "")); err != nil && err != kvstore.ErrNotFound {
				return err
			}
		}
		return nil
	})
}
