package kvstore_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
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
// get, getmany and exists ≥ 0.8× the rate, scan ≥ 0.7×.
func BenchmarkTTLPaths(b *testing.B) {
	ctx := context.Background()
	d := newBenchData(benchN)
	s := benchOpenStore(b, b.TempDir(), "paths.db", kvstore.Options{PurgeInterval: -1})
	plain, err := s.CreateColumnFamily("plain")
	require.NoError(b, err)
	ttl, err := s.CreateColumnFamily("ttl")
	require.NoError(b, err)
	benchLoad(b, plain, d, 0, benchN, 0)
	benchLoad(b, ttl, d, 0, benchN, time.Hour)
	_, err = s.Checkpoint(ctx, kvstore.CheckpointTruncate)
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
	// 1,000 keys never stored before in one Update: the table grows.
	var fresh int
	for _, c := range cfs {
		cpuRun(b, "tx-new/"+c.name, func(b *testing.B) {
			for b.Loop() {
				require.NoError(b, s.Update(ctx, func(tx *kvstore.Tx) error {
					h := tx.CF(c.cf)
					for j := range benchBatch {
						fresh++
						if err := put(h, c.name == "ttl", fmt.Appendf(nil, "n%015d", fresh), d.fresh(j, buf)); err != nil {
							return err
						}
					}
					return nil
				}))
			}
			reportKeys(b, b.N*benchBatch)
		})
	}
	// 1,000 random existing keys in one Update: a refresh of each key's TTL.
	for _, c := range cfs {
		cpuRun(b, "tx-refresh/"+c.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				require.NoError(b, s.Update(ctx, func(tx *kvstore.Tx) error {
					h := tx.CF(c.cf)
					for range benchBatch {
						i++
						if err := put(h, c.name == "ttl", d.key(i), d.fresh(i, buf)); err != nil {
							return err
						}
					}
					return nil
				}))
			}
			reportKeys(b, b.N*benchBatch)
		})
	}
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
	for _, c := range cfs {
		cpuRun(b, "get/"+c.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				v, err := c.cf.Get(d.key(i))
				if err != nil || len(v) != benchValueLen {
					b.Fatalf("get: %d bytes, %v", len(v), err)
				}
			}
		})
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
	for _, c := range cfs {
		cpuRun(b, "exists/"+c.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				ok, err := c.cf.Exists(d.key(i))
				if err != nil || !ok {
					b.Fatalf("exists: %v, %v", ok, err)
				}
			}
		})
	}
	for _, c := range cfs {
		cpuRun(b, "scan/"+c.name, func(b *testing.B) {
			for b.Loop() {
				n := 0
				for _, err := range c.cf.All() {
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

// ttlHarnessKeys is the size of the purge workload of issue #34: half of
// the keys expire in the purge.
const ttlHarnessKeys = 200_000

// ttlHarness is the purge workload: 200,000 random 16-byte keys with
// 100-byte values, in random order, half with an expiry between t0+1h and
// t0+2h and half later (t0+3h..t0+4h).
type ttlHarness struct {
	keys [][]byte
	exp  []time.Duration // each key's TTL from t0
	val  []byte
}

func newTTLHarness() *ttlHarness {
	r := rand.New(rand.NewPCG(34, 34))
	h := &ttlHarness{keys: make([][]byte, ttlHarnessKeys), exp: make([]time.Duration, ttlHarnessKeys), val: make([]byte, benchValueLen)}
	for i := range h.keys {
		k := make([]byte, 16)
		binary.BigEndian.PutUint64(k, r.Uint64())
		binary.BigEndian.PutUint64(k[8:], r.Uint64())
		h.keys[i] = k
		h.exp[i] = time.Hour + time.Duration(r.Int64N(int64(time.Hour)))
		if i%2 == 1 {
			h.exp[i] += 2 * time.Hour
		}
	}
	for i := range h.val {
		h.val[i] = byte(r.Uint32())
	}
	return h
}

// Baseline of the harness purge: a kv table and an expiry table keyed by
// (big-endian expiry, key), through database/sql.
const (
	harnessSchema = `CREATE TABLE kv(k BLOB PRIMARY KEY NOT NULL, v BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE exp(e BLOB NOT NULL, k BLOB NOT NULL, PRIMARY KEY (e, k)) WITHOUT ROWID`
	harnessBatchSel = `SELECT e, k FROM exp WHERE e < ? ORDER BY e, k LIMIT 256`
	harnessDelKV    = `DELETE FROM kv WHERE k = ?`
	harnessDelExp   = `DELETE FROM exp WHERE e = ? AND k = ?`
	harnessSetKV    = `DELETE FROM kv WHERE k IN (SELECT k FROM exp WHERE e < ?)`
	harnessSetExp   = `DELETE FROM exp WHERE e < ?`
)

// BenchmarkTTLPurgeHarness times the purge workload of issue #34: a store
// opened with a ManualClock at t0, one column family loaded with the
// harness's keys through PutTTL in one Update, the clock set to t0+2h and
// the 100,000 expired keys purged at once, the load's WAL not checkpointed.
// snkv-batches is PurgeExpired (256 keys a transaction), snkv-tx the same
// inside one Update; sql-batches removes the same batches of 256 through
// database/sql over a kv table and an expiry table, sql-set does it with two
// set-based DELETEs in one transaction. keys/s is expired keys removed per
// second and cpu-ns/op the process's CPU time during the purge alone; every
// iteration loads a new store, untimed.
func BenchmarkTTLPurgeHarness(b *testing.B) {
	if testing.Short() {
		b.Skip("loads 200,000 keys per iteration")
	}
	ctx := context.Background()
	h := newTTLHarness()
	t0 := time.Unix(1_700_000_000, 0)
	expired := ttlHarnessKeys / 2
	for _, side := range []string{"snkv-batches", "snkv-tx"} {
		b.Run(side, func(b *testing.B) {
			var cpu int64
			for range b.N {
				b.StopTimer()
				clk := kvstore.NewManualClock(t0)
				s, err := kvstore.Open(b.TempDir()+"/h.db", kvstore.Options{Clock: clk, PurgeInterval: -1})
				require.NoError(b, err)
				cf, err := s.CreateColumnFamily("h")
				require.NoError(b, err)
				require.NoError(b, s.Update(ctx, func(tx *kvstore.Tx) error {
					w := tx.CF(cf)
					for i, k := range h.keys {
						if err := w.PutTTL(k, h.val, h.exp[i]); err != nil {
							return err
						}
					}
					return nil
				}))
				clk.Set(t0.Add(2 * time.Hour))
				b.StartTimer()
				c0 := int64(testutil.CPUTime())
				var n int
				if side == "snkv-batches" {
					n, err = cf.PurgeExpired(ctx)
				} else {
					err = s.Update(ctx, func(tx *kvstore.Tx) error {
						var err error
						n, err = tx.CF(cf).PurgeExpired(ctx)
						return err
					})
				}
				b.StopTimer()
				cpu += int64(testutil.CPUTime()) - c0
				require.NoError(b, err)
				require.Equal(b, expired, n)
				require.NoError(b, s.Close())
				b.StartTimer()
			}
			reportKeys(b, b.N*expired)
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
	}
	for _, side := range []string{"sql-batches", "sql-set"} {
		b.Run(side, func(b *testing.B) {
			var cpu int64
			for range b.N {
				b.StopTimer()
				db := benchOpenSQL(b, b.TempDir(), "h.db", false)
				db.SetMaxOpenConns(1)
				_, err := db.Exec(harnessSchema)
				require.NoError(b, err)
				tx, err := db.Begin()
				require.NoError(b, err)
				for i, k := range h.keys {
					e := binary.BigEndian.AppendUint64(nil, uint64(t0.Add(h.exp[i]).UnixMilli()))
					_, err = tx.Exec(`INSERT INTO kv(k, v) VALUES (?, ?)`, k, h.val)
					require.NoError(b, err)
					_, err = tx.Exec(`INSERT INTO exp(e, k) VALUES (?, ?)`, e, k)
					require.NoError(b, err)
				}
				require.NoError(b, tx.Commit())
				bound := binary.BigEndian.AppendUint64(nil, uint64(t0.Add(2*time.Hour).UnixMilli()+1))
				sel, delKV, delExp := benchPrepare(b, db, harnessBatchSel), benchPrepare(b, db, harnessDelKV), benchPrepare(b, db, harnessDelExp)
				setKV, setExp := benchPrepare(b, db, harnessSetKV), benchPrepare(b, db, harnessSetExp)
				b.StartTimer()
				c0 := int64(testutil.CPUTime())
				var n int64
				if side == "sql-batches" {
					n, err = harnessPurgeBatches(db, bound, sel, delKV, delExp)
				} else {
					n, err = harnessPurgeSet(db, bound, setKV, setExp)
				}
				b.StopTimer()
				cpu += int64(testutil.CPUTime()) - c0
				require.NoError(b, err)
				require.EqualValues(b, expired, n)
				require.NoError(b, db.Close())
				b.StartTimer()
			}
			reportKeys(b, b.N*expired)
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// harnessPurgeBatches removes every expiry-table row below bound, and its
// kv row, 256 rows a transaction.
func harnessPurgeBatches(db *sql.DB, bound []byte, sel, delKV, delExp *sql.Stmt) (int64, error) {
	var total int64
	type row struct{ e, k []byte }
	rows := make([]row, 0, 256)
	for {
		tx, err := db.Begin()
		if err != nil {
			return total, err
		}
		rows = rows[:0]
		rs, err := tx.Stmt(sel).Query(bound)
		if err != nil {
			_ = tx.Rollback()
			return total, err
		}
		for rs.Next() {
			var r row
			if err := rs.Scan(&r.e, &r.k); err != nil {
				_ = rs.Close()
				_ = tx.Rollback()
				return total, err
			}
			rows = append(rows, r)
		}
		if err := rs.Close(); err != nil {
			_ = tx.Rollback()
			return total, err
		}
		dk, de := tx.Stmt(delKV), tx.Stmt(delExp)
		for _, r := range rows {
			if _, err := dk.Exec(r.k); err != nil {
				_ = tx.Rollback()
				return total, err
			}
			if _, err := de.Exec(r.e, r.k); err != nil {
				_ = tx.Rollback()
				return total, err
			}
		}
		if err := tx.Commit(); err != nil {
			return total, err
		}
		total += int64(len(rows))
		if len(rows) < 256 {
			return total, nil
		}
	}
}

// harnessPurgeSet removes every expiry-table row below bound, and its kv
// row, with two set-based DELETEs in one transaction.
func harnessPurgeSet(db *sql.DB, bound []byte, setKV, setExp *sql.Stmt) (int64, error) {
	tx, err := db.Begin()
	if err != nil {
		return 0, err
	}
	res, err := tx.Stmt(setKV).Exec(bound)
	if err != nil {
		_ = tx.Rollback()
		return 0, err
	}
	n, _ := res.RowsAffected()
	if _, err := tx.Stmt(setExp).Exec(bound); err != nil {
		_ = tx.Rollback()
		return 0, err
	}
	return n, tx.Commit()
}
