package kvstore_test

// BenchmarkReadLarge measures the read path on a store larger than SQLite's
// default page cache: 200,000 random 16-byte keys with 100-byte values
// (about 27 MB of file), written in random order, read in another random
// order, with zero Options on the snkv side. The baseline is the same data
// in a plain table read through database/sql prepared statements (see
// bench_test.go). Sub-benchmarks /1/ and /2/ run point reads from one and
// from two goroutines.

import (
	"database/sql"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

const (
	largeN      = 200_000
	largeGroups = 2_000 // values of a key's first two bytes: ~100 keys share each
)

// largeData is the large data set: keys are two bytes of group (0..1999,
// big-endian) and 14 random bytes, so that a two-byte prefix selects about
// 100 keys and the keys are otherwise random.
type largeData struct {
	keys   [][]byte // in insertion order (random)
	order  []int    // a random reading order
	groups []int    // keys per group
	values [][]byte
}

func newLargeData() *largeData {
	r := rand.New(rand.NewPCG(3, 4))
	d := &largeData{keys: make([][]byte, 0, largeN), order: r.Perm(largeN), groups: make([]int, largeGroups)}
	seen := make(map[string]bool, largeN)
	for len(d.keys) < largeN {
		k := make([]byte, 16)
		g := r.IntN(largeGroups)
		binary.BigEndian.PutUint16(k, uint16(g))
		for j := 2; j < 16; j++ {
			k[j] = byte(r.Uint32())
		}
		if seen[string(k)] {
			continue
		}
		seen[string(k)] = true
		d.groups[g]++
		d.keys = append(d.keys, k)
	}
	d.values = randomValues(r)
	return d
}

func (d *largeData) key(i int) []byte { return d.keys[d.order[i%largeN]] }

// prefix returns the i-th prefix visited (groups in a fixed scrambled order)
// and how many keys carry it.
func (d *largeData) prefix(i int) ([]byte, int) {
	g := (i * 7919) % largeGroups
	return binary.BigEndian.AppendUint16(nil, uint16(g)), d.groups[g]
}

// largePair loads the large data set into a zero-Options snkv store and the
// baseline table, both checkpointed.
func largePair(b *testing.B) (*largeData, *kvstore.Store, *sql.DB) {
	d := newLargeData()
	dir := b.TempDir()
	s := benchOpenStore(b, dir, "snkv.db", largeOptions(b))
	db := benchOpenSQL(b, dir, "base.db", true)
	applyInBatches(b, s.Default(), len(d.keys), func(batch *kvstore.Batch, i int) { batch.Put(d.keys[i], d.values[i%len(d.values)]) })
	tx, err := db.Begin()
	require.NoError(b, err)
	st, err := tx.Prepare(baseUpsert)
	require.NoError(b, err)
	for i, k := range d.keys {
		_, err := st.Exec(k, d.values[i%len(d.values)])
		require.NoError(b, err)
	}
	require.NoError(b, tx.Commit())
	benchCheckpoint(b, s, db)
	return d, s, db
}

// largeOptions is the zero Options, unless SNKV_BENCH_MMAP,
// SNKV_BENCH_HOLD or SNKV_BENCH_CACHE set Options.MmapSize, Options.ReadHold
// (as "-1" or a duration) or Options.CacheSize, to measure what each buys
// (docs/benchmarks.md).
func largeOptions(b *testing.B) kvstore.Options {
	var o kvstore.Options
	if v := os.Getenv("SNKV_BENCH_CACHE"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(b, err)
		o.CacheSize = n
	}
	if v := os.Getenv("SNKV_BENCH_MMAP"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		require.NoError(b, err)
		o.MmapSize = n
	}
	if v := os.Getenv("SNKV_BENCH_HOLD"); v != "" {
		if v == "-1" {
			o.ReadHold = -1
		} else {
			d, err := time.ParseDuration(v)
			require.NoError(b, err)
			o.ReadHold = d
		}
	}
	return o
}

// cpuMeter reports, beside the wall-clock ns/op, the CPU time the process
// spent per operation (cpu-ns/op): on a machine shared with other work,
// wall time also counts the time this process waited for a core, CPU time
// much less so.
type cpuMeter struct{ start int64 }

func startCPU() cpuMeter { return cpuMeter{int64(testutil.CPUTime())} }

func (m cpuMeter) report(b *testing.B, ops int) {
	if end := int64(testutil.CPUTime()); end > 0 && ops > 0 {
		b.ReportMetric(float64(end-m.start)/float64(ops), "cpu-ns/op")
	}
}

// onGoroutines runs op(i) for i in [0, b.N) on g goroutines.
func onGoroutines(b *testing.B, g int, op func(i int) error) {
	b.ReportAllocs()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, g)
	b.ResetTimer()
	cpu := startCPU()
	for w := range g {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= b.N {
					return
				}
				if err := op(i); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	cpu.report(b, b.N)
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkReadLarge(b *testing.B) {
	d, s, db := largePair(b)
	get, exists, scan, _, prefix := prepareReads(b, db)

	for _, g := range []int{1, 2} {
		gs := string(rune('0' + g))
		b.Run("Get/"+gs+"/snkv", func(b *testing.B) {
			onGoroutines(b, g, func(i int) error {
				_, err := s.Get(d.key(i))
				return err
			})
		})
		b.Run("Get/"+gs+"/baseline", func(b *testing.B) {
			onGoroutines(b, g, func(i int) error {
				var v []byte
				return get.QueryRow(d.key(i)).Scan(&v)
			})
		})
		b.Run("Exists/"+gs+"/snkv", func(b *testing.B) {
			onGoroutines(b, g, func(i int) error {
				ok, err := s.Exists(d.key(i))
				if err == nil && !ok {
					err = errors.New("a stored key does not exist")
				}
				return err
			})
		})
		b.Run("Exists/"+gs+"/baseline", func(b *testing.B) {
			onGoroutines(b, g, func(i int) error {
				var one int
				return exists.QueryRow(d.key(i)).Scan(&one)
			})
		})
	}
	// Iteration forms: the range-over-func loop (copies), an explicit
	// Cursor (copies), and both with IterOptions.Borrow (no copies).
	for _, f := range []struct {
		name string
		opts kvstore.IterOptions
	}{{"snkv", kvstore.IterOptions{}}, {"snkv-borrow", kvstore.IterOptions{Borrow: true}}} {
		b.Run("Scan/"+f.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				n := 0
				for _, err := range s.Scan(f.opts) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != largeN {
					b.Fatalf("scanned %d keys, want %d", n, largeN)
				}
			}
			cpu.report(b, b.N)
			reportKeys(b, b.N*largeN)
		})
		b.Run("ScanCursor/"+f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c, err := s.Cursor(f.opts)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for ok := c.First(); ok; ok = c.Next() {
					n++
				}
				if err := errors.Join(c.Err(), c.Close()); err != nil {
					b.Fatal(err)
				}
				if n != largeN {
					b.Fatalf("scanned %d keys, want %d", n, largeN)
				}
			}
			reportKeys(b, b.N*largeN)
		})
	}
	// The copying scan's baseline reads into []byte; the borrowing scan's
	// (baseline-raw) into sql.RawBytes, no copies.
	for _, f := range []struct {
		name string
		scan func(*testing.B, *sql.Stmt, ...any) int
	}{{"baseline", scanSQL}, {"baseline-raw", scanSQLRaw}} {
		b.Run("Scan/"+f.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				if n := f.scan(b, scan); n != largeN {
					b.Fatalf("scanned %d keys, want %d", n, largeN)
				}
			}
			cpu.report(b, b.N)
			reportKeys(b, b.N*largeN)
		})
	}
	// The prefix scans count a prefix's keys in the store (copied or
	// borrowed) or with SQL (reading the rows into []byte, or raw).
	countStore := func(borrow bool) func(*testing.B, []byte) int {
		return func(b *testing.B, p []byte) int {
			n := 0
			for _, err := range s.Scan(kvstore.IterOptions{Prefix: p, Borrow: borrow}) {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			return n
		}
	}
	countSQL := func(scan func(*testing.B, *sql.Stmt, ...any) int) func(*testing.B, []byte) int {
		return func(b *testing.B, p []byte) int {
			end := binary.BigEndian.AppendUint16(nil, binary.BigEndian.Uint16(p)+1)
			return scan(b, prefix, p, end)
		}
	}
	for _, f := range []struct {
		name  string
		count func(*testing.B, []byte) int
	}{
		{"snkv", countStore(false)}, {"snkv-borrow", countStore(true)},
		{"baseline", countSQL(scanSQL)}, {"baseline-raw", countSQL(scanSQLRaw)},
	} {
		b.Run("PrefixScan/"+f.name, func(b *testing.B) {
			b.ReportAllocs()
			keys := 0
			cpu := startCPU()
			for i := 0; b.Loop(); i++ {
				p, want := d.prefix(i)
				n := f.count(b, p)
				if n != want {
					b.Fatalf("prefix scan gave %d keys, want %d", n, want)
				}
				keys += n
			}
			cpu.report(b, b.N)
			reportKeys(b, keys)
		})
	}
}
