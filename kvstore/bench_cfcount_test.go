package kvstore_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// cfCounts are the store sizes, in column families, of BenchmarkCFCount:
// TTL writes and Open must cost the same whatever the count.
var cfCounts = benchCFCounts()

var (
	cfStoresMu sync.Mutex
	cfStores   = map[int]string{}
)

// cfCountStore returns the path of a store with n column families (each
// with a TTL key, so each has its hidden TTL tables) in dir, made once per
// run of BenchmarkCFCount, or once for good in the directory
// SNKV_BENCH_CFDIR names (making one of 3,000 takes minutes); callers copy
// it.
func cfCountStore(b *testing.B, dir string, n int) string {
	b.Helper()
	cfStoresMu.Lock()
	defer cfStoresMu.Unlock()
	if p, ok := cfStores[n]; ok {
		return p
	}
	path := filepath.Join(dir, fmt.Sprintf("cfs-%d.db", n))
	if _, err := os.Stat(path); err == nil {
		cfStores[n] = path
		return path
	}
	_ = os.Remove(path + ".tmp") // left by an interrupted run
	db, err := kvstore.Open(path+".tmp", kvstore.Options{Sync: kvstore.SyncOff})
	require.NoError(b, err)
	for i := range n - 1 { // the default column family is the n-th
		cf, err := db.CreateColumnFamily(fmt.Sprintf("cf%05d", i))
		require.NoError(b, err)
		require.NoError(b, cf.PutTTL([]byte("k"), []byte("v"), time.Hour))
	}
	require.NoError(b, db.PutTTL([]byte("k"), []byte("v"), time.Hour))
	require.NoError(b, db.Close())
	require.NoError(b, os.Rename(path+".tmp", path))
	cfStores[n] = path
	return path
}

// copyStore copies the store file at src into a fresh directory.
func copyStore(b *testing.B, src string) string {
	b.Helper()
	data, err := os.ReadFile(src)
	require.NoError(b, err)
	dst := filepath.Join(b.TempDir(), "store.db")
	require.NoError(b, os.WriteFile(dst, data, 0o644))
	return dst
}

// BenchmarkCFCount measures the operations whose cost must not grow with
// the number of column families: a TTL write (PutTTL into a column family
// that has TTL state), a plain Put, and Open+Close of the file; and
// CreateColumnFamily beside them.
func BenchmarkCFCount(b *testing.B) {
	dir := os.Getenv("SNKV_BENCH_CFDIR")
	if dir == "" {
		dir = b.TempDir() // the stores go when the benchmark ends
	}
	b.Cleanup(func() {
		cfStoresMu.Lock()
		clear(cfStores)
		cfStoresMu.Unlock()
	})
	for _, n := range cfCounts {
		for _, w := range []struct {
			name string
			put  func(db *kvstore.Store, key []byte) error
		}{
			{"PutTTL", func(db *kvstore.Store, key []byte) error { return db.PutTTL(key, key, time.Hour) }},
			{"Put", func(db *kvstore.Store, key []byte) error { return db.Put(key, key) }},
		} {
			b.Run(fmt.Sprintf("%s/cfs=%d", w.name, n), func(b *testing.B) {
				db := openAt(b, copyStore(b, cfCountStore(b, dir, n)), kvstore.Options{})
				key := make([]byte, 16)
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					copy(key, fmt.Appendf(key[:0], "%016d", i%1000))
					if err := w.put(db, key); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		// CreateColumnFamily is a schema change: SQLite parses the new
		// objects and every other connection re-reads the schema.
		b.Run(fmt.Sprintf("Create/cfs=%d", n), func(b *testing.B) {
			db := openAt(b, copyStore(b, cfCountStore(b, dir, n)), kvstore.Options{})
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := db.CreateColumnFamily(fmt.Sprintf("new%06d", i)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("Open/cfs=%d", n), func(b *testing.B) {
			path := copyStore(b, cfCountStore(b, dir, n))
			c0 := int64(testutil.CPUTime())
			b.ResetTimer()
			for b.Loop() {
				db, err := kvstore.Open(path, kvstore.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if err := db.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(int64(testutil.CPUTime())-c0)/float64(b.N), "cpu-ns/op")
		})
		// A further reader connection: the first read on a connection
		// parses the whole schema, as Open's writer did. Each iteration
		// holds one more cursor open, so the Get after it must open a new
		// reader; GetWarm is the same Get on a reader that is already open.
		// ReaderConnNoMmap: the same without memory mapping, so that
		// rss-KiB/conn is the connection's own memory (its parsed schema)
		// and not also the file pages it mapped (see Options.MmapSize).
		b.Run(fmt.Sprintf("ReaderConn/cfs=%d", n), func(b *testing.B) { benchReaderConn(b, dir, n, 0) })
		b.Run(fmt.Sprintf("ReaderConnNoMmap/cfs=%d", n), func(b *testing.B) { benchReaderConn(b, dir, n, -1) })
		b.Run(fmt.Sprintf("GetWarm/cfs=%d", n), func(b *testing.B) {
			db := openAt(b, copyStore(b, cfCountStore(b, dir, n)), kvstore.Options{ReadHold: -1})
			_, _ = db.Get([]byte("k"))
			b.ResetTimer()
			for b.Loop() {
				if _, err := db.Get([]byte("k")); err != nil {
					b.Fatal(err)
				}
			}
		})
		// The floor under Open: one SQLite connection that loads the
		// schema (SQLite parses every CREATE statement of the file, per
		// connection), then closes.
		b.Run(fmt.Sprintf("OpenSchemaOnly/cfs=%d", n), func(b *testing.B) {
			path := copyStore(b, cfCountStore(b, dir, n))
			c0 := int64(testutil.CPUTime())
			defer func() { b.ReportMetric(float64(int64(testutil.CPUTime())-c0)/float64(b.N), "cpu-ns/op") }()
			b.ResetTimer()
			for b.Loop() {
				raw, err := sql.Open("sqlite", path)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := raw.Exec("SELECT 1 FROM sqlite_schema LIMIT 1"); err != nil {
					b.Fatal(err)
				}
				if err := raw.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchCFCounts reads SNKV_BENCH_CFS (a comma-separated list) to run
// BenchmarkCFCount at other sizes; the default is 2, 300 and 3000.
func benchCFCounts() []int {
	s := os.Getenv("SNKV_BENCH_CFS")
	if s == "" {
		return []int{2, 300, 3000}
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err == nil && n >= 1 {
			out = append(out, n)
		}
	}
	return out
}

// residentBytes is the process's resident set size (Linux), or 0.
func residentBytes() int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// benchReaderConn is BenchmarkCFCount's ReaderConn: each iteration's Get
// opens one more reader connection (every earlier one is held by a
// cursor), with Options.MmapSize mmap.
func benchReaderConn(b *testing.B, dir string, n int, mmap int64) {
	db := openAt(b, copyStore(b, cfCountStore(b, dir, n)), kvstore.Options{MaxReaders: 1 << 20, ReadHold: -1, MmapSize: mmap})
	var held []*kvstore.Cursor
	defer func() {
		for _, c := range held {
			_ = c.Close()
		}
	}()
	var cpu int64
	rss0 := residentBytes()
	b.ResetTimer()
	for b.Loop() {
		c0 := int64(testutil.CPUTime())
		if _, err := db.Get([]byte("k")); err != nil {
			b.Fatal(err)
		}
		cpu += int64(testutil.CPUTime()) - c0
		b.StopTimer()
		c, err := db.Cursor(kvstore.IterOptions{})
		if err != nil {
			b.Fatal(err)
		}
		c.First() // holds the reader until Close
		held = append(held, c)
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	if rss := residentBytes(); rss > 0 && rss0 > 0 {
		// Each iteration leaves one more reader open: its schema.
		b.ReportMetric(float64(rss-rss0)/float64(b.N)/1024, "rss-KiB/conn")
	}
}
