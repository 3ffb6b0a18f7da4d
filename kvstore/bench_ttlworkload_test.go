package kvstore_test

// The TTL benchmark of issue #34, the Go side of bench/ttl/run.sh: SNKV's
// TTL calls re-made against kvstore with zero Options but a ManualClock
// (bench/ttl/driver.c runs the same phases on SNKV's store and says what
// each is). The clock starts at the wall clock's time and is moved past
// the 200,000 expiring keys' deadlines where the C side sleeps. Each phase
// reports its operations per second of wall clock and of CPU time:
//
//	go test -run '^$' -bench TTLWorkload -benchtime 1x -count 3 ./kvstore/
//
// purge is PurgeExpired as a user calls it (batches of 256 keys a
// transaction); purge_tx is a second set of 200,000 expiring keys purged
// inside one Update, the shape of SNKV's purge. SNKV_BENCH_RECORDS sets the
// live key count (default 1,000,000); SNKV_BENCH_NOCHECKPOINT and
// SNKV_BENCH_PASSWORD are as for BenchmarkSNKVWorkload.

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/ttl"
	"github.com/stretchr/testify/require"
)

const (
	ttlExpiring  = 200_000
	ttlRefreshes = 10_000
	ttlNones     = 10_000
)

func BenchmarkTTLWorkload(b *testing.B) {
	n := snkvRecords()
	ctx := context.Background()
	ph := newPhases()
	for b.Loop() {
		clock := ttl.NewManualClock(time.Now())
		opts := snkvOptions()
		opts.Clock = clock
		db, err := kvstore.Open(filepath.Join(b.TempDir(), "benchmark_ttl.db"), opts)
		require.NoError(b, err)
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
		key := func(i int) []byte { return snkvText("key_", i, "") }
		live := func() []byte { return key(rng.IntN(n)) }

		ph.run("put_ttl", n, func() {
			for i := 0; i < n; i += snkvBatch {
				require.NoError(b, db.Update(ctx, func(tx *kvstore.Tx) error {
					for j := i; j < min(i+snkvBatch, n); j++ {
						v := snkvText("value_", j, "_with_some_additional_data_to_make_it_realistic")
						if err := tx.PutTTL(key(j), v, time.Hour); err != nil {
							return err
						}
					}
					return nil
				}))
			}
		})
		ph.run("get", snkvReads, func() {
			for range snkvReads {
				_, err := db.Get(live())
				require.NoError(b, err)
			}
		})
		ph.run("get_ttl", snkvReads, func() {
			for range snkvReads {
				_, _, err := db.GetTTL(live())
				require.NoError(b, err)
			}
		})
		ph.run("ttl_remaining", snkvReads, func() {
			for range snkvReads {
				_, err := db.TTL(live())
				require.NoError(b, err)
			}
		})
		ph.run("refresh", ttlRefreshes, func() {
			require.NoError(b, db.Update(ctx, func(tx *kvstore.Tx) error {
				for range ttlRefreshes {
					i := rng.IntN(n)
					if err := tx.PutTTL(key(i), snkvText("refreshed_value_", i, ""), 2*time.Hour); err != nil {
						return err
					}
				}
				return nil
			}))
		})
		// expire writes 200,000 keys with prefix expiring 1-2 s from now, in
		// transactions of 1,000, and moves the clock past them.
		expire := func(prefix string) {
			for i := 0; i < ttlExpiring; i += snkvBatch {
				require.NoError(b, db.Update(ctx, func(tx *kvstore.Tx) error {
					for j := i; j < i+snkvBatch; j++ {
						v := snkvText("value_", j, "_with_some_additional_data_to_make_it_realistic")
						d := time.Second + time.Duration(j%1000)*time.Millisecond
						if err := tx.PutTTL(snkvText(prefix, j, ""), v, d); err != nil {
							return err
						}
					}
					return nil
				}))
			}
			clock.Advance(2*time.Second + time.Millisecond)
		}
		expire("exp_key_")
		ph.run("purge", ttlExpiring, func() {
			got, err := db.PurgeExpired(ctx)
			require.NoError(b, err)
			require.Equal(b, ttlExpiring, got)
		})
		expire("exp_tx_key_")
		ph.run("purge_tx", ttlExpiring, func() {
			require.NoError(b, db.Update(ctx, func(tx *kvstore.Tx) error {
				got, err := tx.PurgeExpired(ctx)
				require.Equal(b, ttlExpiring, got)
				return err
			}))
		})
		ph.run("purge_none", ttlNones, func() {
			for range ttlNones {
				got, err := db.PurgeExpired(ctx)
				require.NoError(b, err)
				require.Zero(b, got)
			}
		})
		ph.run("mixed", snkvMixed, func() {
			require.NoError(b, db.Update(ctx, func(tx *kvstore.Tx) error {
				for range snkvMixed {
					i, op := rng.IntN(n), rng.IntN(100)
					var err error
					switch {
					case op < 70:
						_, _, err = tx.GetTTL(key(i))
					case op < 90:
						err = tx.PutTTL(key(i), snkvText("mixed_value_", i, ""), time.Hour)
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
		left, err := db.Count()
		require.NoError(b, err)
		require.Greater(b, left, int64(n/2), "the live keys survive the purges")
		require.NoError(b, db.Close())
	}
	ph.report(b, "put_ttl", "get", "get_ttl", "ttl_remaining", "refresh", "purge", "purge_tx", "purge_none", "mixed")
}
