package kvstore_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// The purge workload of issue #34's outside harness: 200,000 random 16-byte
// keys with 100-byte values written with PutTTL in one transaction in
// random order, half of them expiring between t0+1h and t0+2h and half
// later; the clock is then set to t0+2h and the purge runs at once, with
// the load's WAL not yet checkpointed. The baseline does the same through
// database/sql on a data table and an (expiry, key) table: batches of 256
// keys a transaction (select the expired head, delete each key from both),
// or one transaction of set-based DELETEs.
const (
	harnessKeys  = 200_000
	harnessBatch = 256
)

var harnessT0 = time.UnixMilli(1_700_000_000_000)

// harnessKeySet returns the keys and the expiry offset of each (ms after
// t0), in the order they are written.
func harnessKeySet() ([][]byte, []int64) {
	r := rand.New(rand.NewPCG(34, 34))
	keys := make([][]byte, harnessKeys)
	exp := make([]int64, harnessKeys)
	for i := range keys {
		k := make([]byte, 16)
		binary.BigEndian.PutUint64(k, r.Uint64())
		binary.BigEndian.PutUint64(k[8:], r.Uint64())
		keys[i] = k
		if i%2 == 0 {
			exp[i] = int64(time.Hour/time.Millisecond) + r.Int64N(int64(time.Hour/time.Millisecond))
		} else {
			exp[i] = int64(3*time.Hour/time.Millisecond) + r.Int64N(int64(time.Hour/time.Millisecond))
		}
	}
	return keys, exp
}

// BenchmarkTTLPurgeHarness times the purge of the 100,000 expired keys of
// the workload above: snkv's PurgeExpired (batches of 256, and inside one
// Update) against the same batches and the set-based purge through
// database/sql. Each iteration loads a fresh store outside the timer, so
// run it with -benchtime 1x and -count.
func BenchmarkTTLPurgeHarness(b *testing.B) {
	keys, exp := harnessKeySet()
	value := make([]byte, 100)
	ctx := context.Background()
	const expired = harnessKeys / 2

	loadSnkv := func(b *testing.B, opts kvstore.Options) (*kvstore.Store, *kvstore.ManualClock) {
		clk := kvstore.NewManualClock(harnessT0)
		opts.Clock = clk
		s := benchOpenStore(b, b.TempDir(), "h.db", opts)
		require.NoError(b, s.Update(ctx, func(tx *kvstore.Tx) error {
			for i, k := range keys {
				if err := tx.PutExpireAt(k, value, harnessT0.Add(time.Duration(exp[i])*time.Millisecond)); err != nil {
					return err
				}
			}
			return nil
		}))
		clk.Set(harnessT0.Add(2 * time.Hour))
		return s, clk
	}
	// The batches again with the two costs the profile of the batched purge
	// shows beside its commits: pages read back for every seek of the keys'
	// scattered leaves (a page cache large enough for the data table and
	// the key index), and the checkpointer's copies and fsyncs (automatic
	// checkpoints off). They measure where the time goes; the targets are
	// the default store's.
	snkvRuns := []struct {
		name string
		opts kvstore.Options
	}{
		{"batches", kvstore.Options{}},
		{"one-tx", kvstore.Options{}},
		{"batches/cache64MiB", kvstore.Options{CacheSize: 64 << 20}},
		{"batches/nockpt", kvstore.Options{WALAutoCheckpoint: -1}},
	}
	for _, run := range snkvRuns {
		mode := strings.SplitN(run.name, "/", 2)[0]
		b.Run("snkv/"+run.name, func(b *testing.B) {
			var cpu time.Duration
			for range b.N {
				b.StopTimer()
				s, _ := loadSnkv(b, run.opts)
				c0 := testutil.CPUTime()
				b.StartTimer()
				var n int
				var err error
				if mode == "batches" {
					n, err = s.PurgeExpired(ctx)
				} else {
					err = s.Update(ctx, func(tx *kvstore.Tx) error {
						n, err = tx.PurgeExpired(ctx)
						return err
					})
				}
				b.StopTimer()
				cpu += testutil.CPUTime() - c0
				require.NoError(b, err)
				require.Equal(b, expired, n)
				require.NoError(b, s.Close())
			}
			reportKeys(b, b.N*expired)
			b.ReportMetric(float64(b.N*expired)/cpu.Seconds(), "keys/cpu-s")
		})
	}
	for _, mode := range []string{"batches", "one-tx"} {
		b.Run("sql/"+mode, func(b *testing.B) {
			var cpu time.Duration
			for range b.N {
				b.StopTimer()
				db := benchOpenSQLWith(b, b.TempDir(), "h.db", false, "")
				_, err := db.Exec(`CREATE TABLE kv(key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID;
					CREATE TABLE exp(expire_ms INTEGER NOT NULL, key BLOB NOT NULL, PRIMARY KEY (expire_ms, key)) WITHOUT ROWID`)
				require.NoError(b, err)
				tx, err := db.Begin()
				require.NoError(b, err)
				for i, k := range keys {
					_, err = tx.Exec(`INSERT INTO kv(key, value) VALUES (?, ?)`, k, value)
					require.NoError(b, err)
					_, err = tx.Exec(`INSERT INTO exp(expire_ms, key) VALUES (?, ?)`, harnessT0.UnixMilli()+exp[i], k)
					require.NoError(b, err)
				}
				require.NoError(b, tx.Commit())
				now := harnessT0.Add(2 * time.Hour).UnixMilli()
				c0 := testutil.CPUTime()
				b.StartTimer()
				var n int
				if mode == "batches" {
					n = harnessSQLBatches(b, db, now)
				} else {
					n = harnessSQLOneTx(b, db, now)
				}
				b.StopTimer()
				cpu += testutil.CPUTime() - c0
				require.Equal(b, expired, n)
				require.NoError(b, db.Close())
			}
			reportKeys(b, b.N*expired)
			b.ReportMetric(float64(b.N*expired)/cpu.Seconds(), "keys/cpu-s")
		})
	}
}

// harnessSQLBatches purges as the harness's database/sql side does: 256
// expired keys a transaction, each deleted from both tables.
func harnessSQLBatches(b *testing.B, db *sql.DB, now int64) int {
	sel, err := db.Prepare(`SELECT expire_ms, key FROM exp WHERE expire_ms <= ? ORDER BY expire_ms, key LIMIT ` + fmt.Sprint(harnessBatch))
	require.NoError(b, err)
	delKV, err := db.Prepare(`DELETE FROM kv WHERE key = ?`)
	require.NoError(b, err)
	delExp, err := db.Prepare(`DELETE FROM exp WHERE expire_ms = ? AND key = ?`)
	require.NoError(b, err)
	total := 0
	for {
		tx, err := db.Begin()
		require.NoError(b, err)
		rows, err := tx.Stmt(sel).Query(now)
		require.NoError(b, err)
		type ek struct {
			e int64
			k []byte
		}
		var batch []ek
		for rows.Next() {
			var x ek
			require.NoError(b, rows.Scan(&x.e, &x.k))
			batch = append(batch, x)
		}
		require.NoError(b, rows.Err())
		for _, x := range batch {
			_, err = tx.Stmt(delKV).Exec(x.k)
			require.NoError(b, err)
			_, err = tx.Stmt(delExp).Exec(x.e, x.k)
			require.NoError(b, err)
		}
		require.NoError(b, tx.Commit())
		total += len(batch)
		if len(batch) < harnessBatch {
			return total
		}
	}
}

// harnessSQLOneTx purges with two set-based DELETEs in one transaction.
func harnessSQLOneTx(b *testing.B, db *sql.DB, now int64) int {
	tx, err := db.Begin()
	require.NoError(b, err)
	res, err := tx.Exec(`DELETE FROM kv WHERE key IN (SELECT key FROM exp WHERE expire_ms <= ?)`, now)
	require.NoError(b, err)
	n, err := res.RowsAffected()
	require.NoError(b, err)
	_, err = tx.Exec(`DELETE FROM exp WHERE expire_ms <= ?`, now)
	require.NoError(b, err)
	require.NoError(b, tx.Commit())
	return int(n)
}
