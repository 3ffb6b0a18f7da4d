package kvstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// purgeBGKeys is how many live TTL keys BenchmarkPurgeBackground loads.
const purgeBGKeys = 1_000_000

// BenchmarkPurgeBackground measures the background purge on a store of
// purgeBGKeys live TTL keys (16-byte keys, 100-byte values, one hour
// left) with nothing expired, the case issue #34 bounds: a pass must cost
// at most 1 ms of CPU and never make a writer wait.
//
//   - pass: PurgeExpiredAll, which is what each background pass runs, with
//     a put into another column family before each (outside the timer),
//     so every pass finds a new commit and reads the head of the expiry
//     index instead of answering from its remembered horizon.
//   - writer/purge=off and writer/purge=on: autocommit puts into another
//     column family of the same file, on a store opened without the
//     background purge and on one whose purge runs every millisecond
//     (PurgeInterval), the two alternated; each reports the puts' p99
//     and worst latency in microseconds.
//
// docs/ttl.md ("Running the purge in production") carries the figures.
func BenchmarkPurgeBackground(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	d := newBenchData(purgeBGKeys)
	s := benchOpenStore(b, dir, "bg.db", kvstore.Options{PurgeInterval: -1})
	cf, err := s.CreateColumnFamily("ttl")
	require.NoError(b, err)
	other, err := s.CreateColumnFamily("other")
	require.NoError(b, err)
	benchLoad(b, cf, d, 0, purgeBGKeys, time.Hour)
	_, err = s.Checkpoint(ctx, kvstore.CheckpointTruncate)
	require.NoError(b, err)

	n, err := cf.Count()
	require.NoError(b, err)
	require.Equal(b, int64(purgeBGKeys), n)

	i := 0
	b.Run("pass", func(b *testing.B) {
		var cpu time.Duration // the process's CPU time inside the passes
		for b.Loop() {
			b.StopTimer()
			i++
			require.NoError(b, other.Put(fmt.Appendf(nil, "o%d", i%100), d.value(i)))
			b.StartTimer()
			c0 := testutil.CPUTime()
			n, err := s.PurgeExpiredAll(ctx)
			cpu += testutil.CPUTime() - c0
			require.NoError(b, err)
			require.Zero(b, n)
		}
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	})
	require.NoError(b, s.Close())

	// writer times b.N autocommit puts on a store of the file opened with
	// interval as its PurgeInterval.
	writer := func(b *testing.B, interval time.Duration) {
		s, err := kvstore.Open(filepath.Join(dir, "bg.db"), kvstore.Options{PurgeInterval: interval})
		require.NoError(b, err)
		defer func() { require.NoError(b, s.Close()) }()
		o, err := s.OpenColumnFamily("other")
		require.NoError(b, err)
		lat := make([]time.Duration, 0, b.N)
		for b.Loop() {
			i++
			t0 := time.Now()
			require.NoError(b, o.Put(fmt.Appendf(nil, "w%d", i%1000), d.value(i)))
			lat = append(lat, time.Since(t0))
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
	}
	for range 2 {
		cpuRun(b, "writer/purge=off", func(b *testing.B) { writer(b, -1) })
		cpuRun(b, "writer/purge=on", func(b *testing.B) { writer(b, time.Millisecond) })
	}
}
