package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// The figures of docs/replication.md ("Read replicas with LiteFS"). They
// take a few minutes and only print, so they run only when asked:
//
//	SNKV_LITEFS_MEASURE=1 go test -run 'TestLiteFSMeasure' -v -timeout 30m ./tests/

func measureOnly(t *testing.T) {
	if os.Getenv("SNKV_LITEFS_MEASURE") != "1" {
		t.Skip("a measurement, not a check: set SNKV_LITEFS_MEASURE=1 to run it")
	}
}

// TestLiteFSMeasureLag measures how far a replica's reader falls behind
// while the primary writes steps as fast as it can, for each ReadHold of the
// replica's store and pause between its scans, in alternating rounds.
func TestLiteFSMeasureLag(t *testing.T) {
	measureOnly(t)
	c := startLiteCluster(t)
	type variant struct {
		hold, pause time.Duration
		readers     int
		maxReaders  int // the replica store's Options.MaxReaders
	}
	variants := []variant{
		{0, 0, 1, 0}, {-1, 0, 1, 0}, {0, 10 * time.Millisecond, 1, 0}, {-1, 10 * time.Millisecond, 1, 0},
		{-1, 0, 4, 0}, {-1, 0, 4, 1}, {0, 0, 4, 1},
	}
	const rounds = 3
	var lines []string
	for round := range rounds {
		for k, v := range variants {
			if round%2 == 1 { // alternate the order
				v = variants[len(variants)-1-k]
			}
			db := fmt.Sprintf("lag-%d-%d-%d-%d-%d.db", round, int64(v.hold), int64(v.pause), v.readers, v.maxReaders)
			p := openLiteStore(t, c.primary.path(db), kvstore.Options{})
			require.NoError(t, p.write(context.Background(), 1))
			pos, _, err := readPos(c.primary, db)
			require.NoError(t, err)
			waitPos(t, c.replica, db, pos, liteConvergeBound)
			r := openLiteStore(t, c.replica.path(db), kvstore.Options{ReadOnly: true, ReadHold: v.hold, MaxReaders: v.maxReaders})
			acks := &ackLog{}
			acks.ack(1)
			written, st := runLiteWrites(t, p, r, acks, 1, 3*time.Second, v.pause, v.readers)
			stopped := time.Now()
			pos, _, err = readPos(c.primary, db)
			require.NoError(t, err)
			applied := waitPos(t, c.replica, db, pos, liteConvergeBound)
			for {
				n, err := r.check(context.Background())
				require.NoError(t, err)
				if n == written {
					break
				}
				time.Sleep(time.Millisecond)
			}
			line := fmt.Sprintf("ReadHold %v, pause %v, %d readers, MaxReaders %d: %s; caught up %v after the writes (applied %v)",
				v.hold, v.pause, v.readers, v.maxReaders, st, time.Since(stopped).Round(time.Millisecond), applied.Round(time.Millisecond))
			t.Log(line)
			lines = append(lines, line)
			require.NoError(t, r.db.Close())
			require.NoError(t, p.db.Close())
		}
	}
	sort.Strings(lines)
	t.Logf("sorted by variant:\n%s", strings.Join(lines, "\n"))
}

// TestLiteFSMeasureReads compares reads of the same store through the
// replica's FUSE mount and from a local file, with and without memory
// mapping and held read transactions, in alternating rounds.
func TestLiteFSMeasureReads(t *testing.T) {
	measureOnly(t)
	c := startLiteCluster(t)
	const keys = 100_000
	fill := func(path string) {
		db, err := kvstore.Open(path, kvstore.Options{})
		require.NoError(t, err)
		for lo := 0; lo < keys; lo += 10_000 {
			var b kvstore.Batch
			for i := lo; i < lo+10_000; i++ {
				b.Put(fmt.Appendf(nil, "k%08d", i), make([]byte, 100))
			}
			require.NoError(t, db.Apply(context.Background(), &b))
		}
		require.NoError(t, db.Close())
	}
	fill(c.primary.path("reads.db"))
	pos, _, err := readPos(c.primary, "reads.db")
	require.NoError(t, err)
	waitPos(t, c.replica, "reads.db", pos, liteConvergeBound)
	local := filepath.Join(t.TempDir(), "reads.db")
	fill(local)

	type variant struct {
		where string
		path  string
		mmap  int64
		hold  time.Duration
	}
	var variants []variant
	for _, w := range []struct{ name, path string }{{"local", local}, {"replica", c.replica.path("reads.db")}} {
		for _, mm := range []int64{0, -1} {
			for _, h := range []time.Duration{0, -1} {
				variants = append(variants, variant{w.name, w.path, mm, h})
			}
		}
	}
	const rounds = 3
	gets := map[int][]float64{}
	scans := map[int][]float64{}
	for round := range rounds {
		for k := range variants {
			idx := k
			if round%2 == 1 {
				idx = len(variants) - 1 - k
			}
			v := variants[idx]
			db, err := kvstore.Open(v.path, kvstore.Options{ReadOnly: true, MmapSize: v.mmap, ReadHold: v.hold})
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(1, uint64(round)))
			const n = 50_000
			start := time.Now()
			for range n {
				_, err := db.Get(fmt.Appendf(nil, "k%08d", rng.IntN(keys)))
				require.NoError(t, err)
			}
			gets[idx] = append(gets[idx], n/time.Since(start).Seconds())
			start = time.Now()
			seen := 0
			for _, err := range db.All() {
				require.NoError(t, err)
				seen++
			}
			require.Equal(t, keys, seen)
			scans[idx] = append(scans[idx], float64(seen)/time.Since(start).Seconds())
			require.NoError(t, db.Close())
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| file | mmap | ReadHold | point gets/s (median of %d) | scan keys/s (median) |\n|---|---|---|---:|---:|\n", rounds)
	for i, v := range variants {
		mm, h := "256 MiB", "5 ms"
		if v.mmap < 0 {
			mm = "off"
		}
		if v.hold < 0 {
			h = "off"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.0f | %.0f |\n", v.where, mm, h, median(gets[i]), median(scans[i]))
	}
	t.Logf("%d keys of 100 B:\n%s", keys, b.String())
}

// TestLiteFSMeasureCommits compares single-step commits on the primary's
// mount with commits to a local file, in alternating rounds.
func TestLiteFSMeasureCommits(t *testing.T) {
	measureOnly(t)
	c := startLiteCluster(t)
	dir := t.TempDir()
	paths := map[string]string{"local": filepath.Join(dir, "commits.db"), "primary": c.primary.path("commits.db")}
	stores := map[string]*liteStore{}
	for name, path := range paths {
		stores[name] = openLiteStore(t, path, kvstore.Options{})
		defer stores[name].db.Close()
	}
	rates := map[string][]float64{}
	next := map[string]int{}
	for round := range 6 {
		order := []string{"local", "primary"}
		if round%2 == 1 {
			order = []string{"primary", "local"}
		}
		for _, name := range order {
			start := time.Now()
			steps := 0
			for time.Since(start) < time.Second {
				next[name]++
				require.NoError(t, stores[name].write(context.Background(), next[name]))
				steps++
			}
			rates[name] = append(rates[name], float64(steps)/time.Since(start).Seconds())
		}
	}
	t.Logf("steps (one transaction each) per second, median of 6 rounds: local %.0f %v, primary's mount %.0f %v",
		median(rates["local"]), rates["local"], median(rates["primary"]), rates["primary"])
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
