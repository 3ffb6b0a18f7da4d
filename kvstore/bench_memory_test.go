package kvstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// benchMemoryN is the number of keys the in-memory benchmarks preload.
const benchMemoryN = 10_000

// memdbSeq names the baseline's memdb databases.
var memdbSeq atomic.Uint64

// benchOpenMemdb opens the baseline: SQLite's own in-memory database (the
// memdb VFS, what an in-memory store was before it became a WAL file on
// tmpfs) through database/sql on one connection, with the baseline table.
func benchOpenMemdb(b *testing.B) *sql.DB {
	b.Helper()
	db, err := sql.Open("sqlite", fmt.Sprintf("file:/bench-memdb-%d?vfs=memdb", memdbSeq.Add(1)))
	require.NoError(b, err)
	db.SetMaxOpenConns(1)
	_, err = db.Exec(baseSchema)
	require.NoError(b, err)
	return db
}

// cpuRun is b.Run that also reports the CPU time of the process per
// operation (cpu-ns/op), the figure that holds on a machine shared with
// other work.
func cpuRun(b *testing.B, name string, f func(b *testing.B)) {
	b.Run(name, func(b *testing.B) {
		c0 := int64(testutil.CPUTime())
		f(b)
		b.ReportMetric(float64(int64(testutil.CPUTime())-c0)/float64(b.N), "cpu-ns/op")
	})
}

// BenchmarkMemoryStore measures an in-memory store (Open("")) against the
// same work on SQLite's memdb through a database/sql prepared statement:
// Open and Close, a single-put commit, a batch of 1,000 new keys, a point
// get, and a scan of 100 keys.
// docs/memory.md ("In-memory stores") carries the figures.
func BenchmarkMemoryStore(b *testing.B) {
	d := newBenchData(benchMemoryN)
	cpuRun(b, "open-close/snkv", func(b *testing.B) {
		for b.Loop() {
			s, err := kvstore.Open("", kvstore.Options{})
			require.NoError(b, err)
			require.NoError(b, s.Close())
		}
	})
	cpuRun(b, "open-close/baseline", func(b *testing.B) {
		for b.Loop() {
			require.NoError(b, benchOpenMemdb(b).Close())
		}
	})

	s, err := kvstore.Open("", kvstore.Options{})
	require.NoError(b, err)
	defer s.Close()
	benchLoad(b, s.Default(), d, 0, benchMemoryN, 0)
	base := benchOpenMemdb(b)
	defer base.Close()
	benchLoadSQL(b, base, d)
	put, err := base.Prepare(baseUpsert)
	require.NoError(b, err)
	get, err := base.Prepare(baseGet)
	require.NoError(b, err)
	scan, err := base.Prepare(baseRange)
	require.NoError(b, err)

	buf := make([]byte, benchValueLen)
	cpuRun(b, "put/snkv", func(b *testing.B) {
		i := 0
		for b.Loop() {
			require.NoError(b, s.Put(d.key(i), d.fresh(i, buf)))
			i++
		}
	})
	cpuRun(b, "put/baseline", func(b *testing.B) {
		i := 0
		for b.Loop() {
			_, err := put.Exec(d.key(i), d.fresh(i, buf))
			require.NoError(b, err)
			i++
		}
	})
	// Batches of 1,000 new random keys: a bulk load.
	cpuRun(b, "apply1000/snkv", func(b *testing.B) {
		var bt kvstore.Batch
		r := rand.New(rand.NewPCG(3, 4))
		for b.Loop() {
			bt.Reset()
			for range 1000 {
				bt.Put(fmt.Appendf(nil, "n%015d", r.Uint64()%1e15), d.value(0))
			}
			require.NoError(b, s.Apply(context.Background(), &bt))
		}
	})
	cpuRun(b, "apply1000/baseline", func(b *testing.B) {
		r := rand.New(rand.NewPCG(3, 4))
		for b.Loop() {
			tx, err := base.Begin()
			require.NoError(b, err)
			st := tx.Stmt(put)
			for range 1000 {
				_, err := st.Exec(fmt.Appendf(nil, "n%015d", r.Uint64()%1e15), d.value(0))
				require.NoError(b, err)
			}
			require.NoError(b, tx.Commit())
		}
	})
	cpuRun(b, "get/snkv", func(b *testing.B) {
		i := 0
		for b.Loop() {
			_, err := s.Get(d.key(i))
			require.NoError(b, err)
			i++
		}
	})
	cpuRun(b, "get/baseline", func(b *testing.B) {
		i := 0
		var v []byte
		for b.Loop() {
			require.NoError(b, get.QueryRow(d.key(i)).Scan(&v))
			i++
		}
	})
	cpuRun(b, "scan100/snkv", func(b *testing.B) {
		i := 0
		for b.Loop() {
			k := d.key(i)
			n := 0
			for _, err := range s.Scan(kvstore.IterOptions{Prefix: k[:benchPrefix], Borrow: true}) {
				require.NoError(b, err)
				n++
			}
			require.Equal(b, 100, n)
			i++
		}
	})
	cpuRun(b, "scan100/baseline", func(b *testing.B) {
		i := 0
		var k, v []byte
		for b.Loop() {
			p := d.key(i)[:benchPrefix]
			end := append(append([]byte(nil), p...), 0xff)
			rows, err := scan.Query(p, end)
			require.NoError(b, err)
			n := 0
			for rows.Next() {
				require.NoError(b, rows.Scan(&k, &v))
				n++
			}
			require.NoError(b, rows.Close())
			require.Equal(b, 100, n)
			i++
		}
	})
}
