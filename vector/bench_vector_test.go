package vector_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/internal/vectest"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/stretchr/testify/require"
)

// TestBenchVector prints every row of the targets of docs/vector.md for
// the clustered and the hard set (make bench-vector). It runs only with
// VECTOR_BENCH=1; VECTOR_BENCH_N sets the vectors (default 100,000),
// VECTOR_BENCH_DIM the dimension (384), VECTOR_BENCH_Q the queries (200),
// VECTOR_BENCH_ONLY one part: clustered, hard, int8 or packing.
func TestBenchVector(t *testing.T) {
	if os.Getenv("VECTOR_BENCH") == "" {
		t.Skip("set VECTOR_BENCH=1 (make bench-vector)")
	}
	n, dim, nq := envInt("VECTOR_BENCH_N", 100000), envInt("VECTOR_BENCH_DIM", 384), envInt("VECTOR_BENCH_Q", 200)
	fmt.Printf("vector search targets: %d × %d, k = 10, cosine, %d queries, GOMAXPROCS %d\n", n, dim, nq, runtime.GOMAXPROCS(0))
	only := os.Getenv("VECTOR_BENCH_ONLY")
	part := func(name string) bool { return only == "" || only == name }
	if part("clustered") {
		benchSet(t, vectest.Clustered(n, nq, dim))
	}
	if part("hard") {
		benchSet(t, vectest.Hard(n, nq, dim))
	}
	if part("int8") {
		benchInt8(t, vectest.Clustered(max(1000, n/5), nq, dim))
	}
	if part("packing") {
		fmt.Println("packing (5,000 vectors each)")
		for _, d := range []int{384, 768, 1536} {
			benchPacking(t, d)
		}
	}
}

// benchInt8 measures an Int8 index: recall (reranked by the stored
// float32 vectors) and the resident set per vector.
func benchInt8(t *testing.T, c vectest.Config) {
	set := vectest.Generate(c)
	truth := vectest.Truth(set.Base, set.Queries, 10, vectest.Cosine, nil)
	fmt.Printf("int8 in memory (clustered, %d vectors)\n", len(set.Base))
	path := filepath.Join(t.TempDir(), "int8.db")
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	ix, err := vector.Open(ctx, db, "v", vector.Options{Dim: c.Dim, Metric: vector.Cosine, Storage: vector.Int8})
	require.NoError(t, err)
	fill(t, ix, set.Base, 1000, nil)
	r, p50 := recallP50(t, ix, set, truth, vector.Query{K: 10})
	row("recall@10, p50 search (reranked)", "", "", "%.4f, %.3f ms", r, p50)
	require.NoError(t, ix.Close())
	require.NoError(t, db.Close())
	open := childOpen(t, path, nil)
	row("resident per vector, int8 (anonymous; all)", "≤ 0.8 KiB", "–", "%.2f KiB; %.2f KiB with the file's mapped pages", open.anonPerVec, open.rssPerVec)
}

// benchPacking measures the file against the bytes of the vectors it
// holds, for a dimension.
func benchPacking(t *testing.T, dim int) {
	set := vectest.Generate(vectest.Clustered(5000, 0, dim))
	path := filepath.Join(t.TempDir(), "pack.db")
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	ix, err := vector.Open(ctx, db, "v", vector.Options{Dim: dim, Metric: vector.Cosine})
	require.NoError(t, err)
	fill(t, ix, set.Base, 1000, nil)
	require.NoError(t, ix.Close())
	_, err = db.Checkpoint(ctx, kvstore.CheckpointTruncate)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	fi, err := os.Stat(path)
	require.NoError(t, err)
	vecBytes := float64(len(set.Base) * 4 * dim)
	row(fmt.Sprintf("file / vector bytes, d = %d", dim), "≤ 1.25", "4.8 KiB + 1.7 KiB for 1.5 KiB at d = 384",
		"%.3f (%.2f KiB a vector)", float64(fi.Size())/vecBytes, float64(fi.Size())/float64(len(set.Base))/1024)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// row prints one measured row, and below it the target of docs/vector.md
// and SNKV's kvstore_vec as the issue that set the targets quotes it
// (docs/benchmarks.md, "Vector search", has SNKV measured on this data).
func row(name, target, snkv, format string, args ...any) {
	fmt.Printf("  %-44s %s [load %s]\n", name, fmt.Sprintf(format, args...), loadAvg())
	if target != "" || snkv != "" {
		fmt.Printf("  %-44s target %s; SNKV %s\n", "", target, snkv)
	}
}

func benchSet(t *testing.T, c vectest.Config) {
	name := "clustered"
	if c.Clusters == 100 {
		name = "hard"
	}
	set := vectest.Generate(c)
	start := time.Now()
	truth := vectest.Truth(set.Base, set.Queries, 10, vectest.Cosine, nil)
	fmt.Printf("%s (ground truth by exact scan on every core: %v)\n", name, time.Since(start).Round(time.Millisecond))
	dir := t.TempDir()
	path := filepath.Join(dir, name+".db")
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	ix, err := vector.Open(ctx, db, "v", vector.Options{Dim: c.Dim, Metric: vector.Cosine})
	require.NoError(t, err)

	start, cpu := time.Now(), testutil.CPUTime()
	fill(t, ix, set.Base, 1000, func(i int) map[string]string {
		return map[string]string{"p10": strconv.Itoa(i % 10), "p100": strconv.Itoa(i % 100)}
	})
	el, elc := time.Since(start), testutil.CPUTime()-cpu
	row("bulk insert, 1,000 per tx", "≥ 1,500/s", "~300/s", "%.0f vectors/s, %.0f per CPU-second (%v for %d)", float64(len(set.Base))/el.Seconds(),
		float64(len(set.Base))/elc.Seconds(), el.Round(time.Millisecond), len(set.Base))

	for _, ef := range []int{0, 64, 96, 128} {
		r, p50, cpuMs := recallP50CPU(t, ix, set, truth, vector.Query{K: 10, Ef: ef})
		label := fmt.Sprintf("recall@10, p50 search (ef %d)", ef)
		if ef == 0 {
			st, err := ix.Stats(ctx)
			require.NoError(t, err)
			label = fmt.Sprintf("recall@10, p50 search (default ef: %d)", st.EfSearch)
		}
		row(label, "clustered ≥ 0.99, ≤ 0.5 ms; hard ≥ 0.95, ≤ 1 ms (at the default ef)",
			"0.999 at ef 64, 1.2 ms; 0.975 at ef 128, 2.6 ms", "%.4f, %.3f ms wall, %.3f ms CPU a search", r, p50, cpuMs)
	}
	// The exact scan in memory, the baseline: float32, plain Go, one
	// goroutine (the vectors are unit length, so cosine is 1 − a·b).
	var lat []time.Duration
	for _, q := range set.Queries[:min(50, len(set.Queries))] {
		s := time.Now()
		exactScan(set.Base, q, 10)
		lat = append(lat, time.Since(s))
	}
	row("exact scan p50 (float32 Go loop, one goroutine)", "", "", "%.3f ms", median(lat))

	for _, f := range []struct {
		label string
		where map[string]string
		allow func(int) bool
	}{
		{"filter 10 % (metadata)", map[string]string{"p10": "3"}, func(i int) bool { return i%10 == 3 }},
		{"filter 1 % (metadata)", map[string]string{"p100": "42"}, func(i int) bool { return i%100 == 42 }},
	} {
		ft := vectest.Truth(set.Base, set.Queries, 10, vectest.Cosine, f.allow)
		for _, ef := range []int{0, 64} {
			r, p50, cpuMs := recallP50CPU(t, ix, set, ft, vector.Query{K: 10, Where: f.where, Ef: ef})
			row(fmt.Sprintf("%s, ef %d: recall@10, p50", f.label, ef), "≥ 0.95, ≤ 2 ms", "post-filter, under-fills", "%.4f, %.3f ms wall, %.3f ms CPU a search", r, p50, cpuMs)
		}
	}

	// Single puts, each its own transaction.
	extra := vectest.Generate(vectest.Config{N: 500, Dim: c.Dim, Latent: c.Latent, Clusters: c.Clusters, Spread: c.Spread, Noise: c.Noise, Seed: c.Seed + 100})
	start, cpu = time.Now(), testutil.CPUTime()
	for i, v := range extra.Base {
		require.NoError(t, ix.Put(ctx, []byte(fmt.Sprintf("single-%d", i)), v, vector.Put{}))
	}
	el, elc = time.Since(start), testutil.CPUTime()-cpu
	row("single put per tx", "≥ 300/s", "200–330/s", "%.0f puts/s, %.0f per CPU-second", float64(len(extra.Base))/el.Seconds(), float64(len(extra.Base))/elc.Seconds())
	for i := range extra.Base {
		require.NoError(t, ix.Delete(ctx, []byte(fmt.Sprintf("single-%d", i))))
	}

	st, err := ix.Stats(ctx)
	require.NoError(t, err)
	require.NoError(t, ix.Close())
	_, err = db.Checkpoint(ctx, kvstore.CheckpointTruncate)
	require.NoError(t, err)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	vecBytes := float64(len(set.Base)) * float64(4*c.Dim)
	row("file per vector", "≤ 2.0 KiB, ≤ 1.25 × the vector bytes", "4.8 KiB + 1.7 KiB sidecar", "%.2f KiB (%.3f × the vector bytes; graph memory %.2f KiB a vector)",
		float64(fi.Size())/float64(len(set.Base))/1024, float64(fi.Size())/vecBytes, float64(st.MemoryBytes)/float64(st.Count)/1024)
	require.NoError(t, db.Close())

	// Open, index ready: clean; in a process of its own for the resident set.
	open := childOpen(t, path, nil)
	row("open, clean", "≤ 2 s", "0.2 s with its sidecar", "%v wall, %v CPU", open.took, open.cpu)
	row("resident per vector, f32 (anonymous; all)", "≤ 2.0 KiB", "~1.9 KiB", "%.2f KiB; %.2f KiB with the file's mapped pages", open.anonPerVec, open.rssPerVec)

	// Open after kill -9 of a process loading more vectors.
	killDuringLoad(t, path)
	open = childOpen(t, path, nil)
	row("open after kill -9 during a bulk load", "≤ 2 s", "395 s (rebuild)", "%v wall, %v CPU (%d graph rows left to save)", open.took, open.cpu, open.relinked)

	// Open of the same store encrypted (converted in place first).
	enc := &kvstore.Encryption{Password: []byte("bench"), KDF: kvstore.LightKDF}
	conv := *enc
	conv.EncryptInPlace = true
	edb, err := kvstore.Open(path, kvstore.Options{Encryption: &conv})
	require.NoError(t, err)
	require.NoError(t, edb.Close())
	open = childOpen(t, path, enc)
	row("open, encrypted (light KDF)", "≤ 3 s", "395 s (rebuild)", "%v wall, %v CPU", open.took, open.cpu)

	// Recall after deleting 30 %.
	db, err = kvstore.Open(path, kvstore.Options{Encryption: enc})
	require.NoError(t, err)
	defer db.Close()
	ix, err = vector.Open(ctx, db, "v", vector.Options{})
	require.NoError(t, err)
	defer ix.Close()
	before, _ := recallP50(t, ix, set, truth, vector.Query{K: 10})
	dead := map[int]bool{}
	for lo := 0; lo < len(set.Base); lo += 1000 {
		require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
			w := ix.In(tx)
			for i := lo; i < min(lo+1000, len(set.Base)); i++ {
				if i%10 < 3 {
					dead[i] = true
					if err := w.Delete(key(i)); err != nil {
						return err
					}
				}
			}
			return nil
		}))
	}
	after := vectest.Truth(set.Base, set.Queries, 10, vectest.Cosine, func(i int) bool { return !dead[i] })
	r, _ := recallP50(t, ix, set, after, vector.Query{K: 10})
	row("after deleting 30 %: recall (loss)", "loss ≤ 0.02", "not measured", "%.4f (%.4f)", r, before-r)
}

func recallP50(t *testing.T, ix *vector.Index, set *vectest.Set, truth [][]vectest.Neighbour, q vector.Query) (float64, float64) {
	r, p50, _ := recallP50CPU(t, ix, set, truth, q)
	return r, p50
}

// recallP50CPU returns the recall@10 of q's searches, their median wall
// time and their mean CPU time, in milliseconds.
func recallP50CPU(t *testing.T, ix *vector.Index, set *vectest.Set, truth [][]vectest.Neighbour, q vector.Query) (float64, float64, float64) {
	got := make([][]int, len(set.Queries))
	var lat []time.Duration
	cpu := testutil.CPUTime()
	for i, v := range set.Queries {
		s := time.Now()
		hits, err := ix.Search(ctx, v, q)
		lat = append(lat, time.Since(s))

		require.NoError(t, err)
		for _, h := range hits {
			got[i] = append(got[i], keyID(h.Key))
		}
	}
	cpuMs := float64((testutil.CPUTime() - cpu).Microseconds()) / 1000 / float64(len(set.Queries))
	return vectest.Recall(got, truth), median(lat), cpuMs
}

func median(d []time.Duration) float64 {
	slices.Sort(d)
	return float64(d[len(d)/2].Microseconds()) / 1000
}

type openResult struct {
	took, cpu  time.Duration
	rssPerVec  float64
	anonPerVec float64
	relinked   int
}

// childOpen opens the index at path in a child process and reports the
// time to a ready index and the resident set it added per vector.
func childOpen(t *testing.T, path string, enc *kvstore.Encryption) openResult {
	env := []string{"VECTOR_CHILD=open", "VECTOR_PATH=" + path}
	if enc != nil {
		env = append(env, "VECTOR_PASSWORD="+string(enc.Password))
	}
	cmd := testutil.NoTestCommand(ctx, t, env...)
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	var r openResult
	var ns int64
	var cpuNs int64
	_, err = fmt.Sscan(strings.TrimSpace(string(out)), &ns, &cpuNs, &r.rssPerVec, &r.anonPerVec, &r.relinked)
	require.NoError(t, err, "%s", out)
	r.took, r.cpu = time.Duration(ns).Round(time.Millisecond), time.Duration(cpuNs).Round(time.Millisecond)
	return r
}

// childOpenMain is the "open" child: store open (with its key
// derivation) and index open, timed; then the resident set it added.
func childOpenMain(path string) error {
	runtime.GC()
	debug.FreeOSMemory()
	rss0, anon0 := residentBytes("VmRSS:"), residentBytes("RssAnon:")
	opts := kvstore.Options{}
	if pw := os.Getenv("VECTOR_PASSWORD"); pw != "" {
		opts.Encryption = &kvstore.Encryption{Password: []byte(pw), KDF: kvstore.LightKDF}
	}
	start, cpu := time.Now(), testutil.CPUTime()
	db, err := kvstore.Open(path, opts)
	if err != nil {
		return err
	}
	ix, err := vector.Open(ctx, db, "v", vector.Options{PersistInterval: time.Hour})
	if err != nil {
		return err
	}
	took, tookCPU := time.Since(start), testutil.CPUTime()-cpu
	st, err := ix.Stats(ctx)
	if err != nil {
		return err
	}
	runtime.GC()
	debug.FreeOSMemory()
	rss, anon := residentBytes("VmRSS:"), residentBytes("RssAnon:")
	fmt.Println(took.Nanoseconds(), tookCPU.Nanoseconds(), float64(rss-rss0)/float64(st.Count)/1024, float64(anon-anon0)/float64(st.Count)/1024, st.Unpersisted)
	os.Exit(0) // no Close: what was linked again stays unsaved for the next run to see
	return nil
}

// killDuringLoad runs a child that adds vectors to the index at path in
// batches of 1,000, and kills it with SIGKILL after its third commit.
func killDuringLoad(t *testing.T, path string) {
	cmd := testutil.NoTestCommand(ctx, t, "VECTOR_CHILD=grow", "VECTOR_PATH="+path)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(out)
	for i := 0; i < 3 && sc.Scan(); i++ {
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
}

func childGrowMain(path string) error {
	db, err := kvstore.Open(path, kvstore.Options{})
	if err != nil {
		return err
	}
	ix, err := vector.Open(ctx, db, "v", vector.Options{})
	if err != nil {
		return err
	}
	extra := vectest.Generate(vectest.Config{N: 20000, Dim: ix.Dim(), Latent: 64, Clusters: 1000, Spread: 0.5, Noise: 0.1, Seed: 77})
	for lo := 0; lo < len(extra.Base); lo += 1000 {
		var items []vector.Item
		for i := lo; i < lo+1000; i++ {
			items = append(items, vector.Item{Key: []byte(fmt.Sprintf("grow-%d", i)), Vector: extra.Base[i]})
		}
		if err := ix.PutBatch(ctx, items); err != nil {
			return err
		}
		fmt.Println(lo + 1000)
	}
	select {}
}

// loadAvg is the one-minute load average of the machine ("?" where
// /proc/loadavg is missing): the figures beside it were taken on a machine
// that busy.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// residentBytes reads a field of /proc/self/status (VmRSS:, RssAnon:) in
// bytes; 0 where there is none.
func residentBytes(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestDumpSets writes the clustered and hard sets, and their exact
// neighbours, to VECTOR_DUMP (a directory) for other engines to be
// measured on the same data (docs/benchmarks.md, "SNKV's kvstore_vec"):
// NAME.base and NAME.queries are float32 little-endian, row after row;
// NAME.truth is the 10 nearest base indexes of each query, int32
// little-endian.
func TestDumpSets(t *testing.T) {
	dir := os.Getenv("VECTOR_DUMP")
	if dir == "" {
		t.Skip("set VECTOR_DUMP=dir")
	}
	n, dim, nq := envInt("VECTOR_BENCH_N", 100000), envInt("VECTOR_BENCH_DIM", 384), envInt("VECTOR_BENCH_Q", 200)
	for name, c := range map[string]vectest.Config{"clustered": vectest.Clustered(n, nq, dim), "hard": vectest.Hard(n, nq, dim)} {
		set := vectest.Generate(c)
		truth := vectest.Truth(set.Base, set.Queries, 10, vectest.Cosine, nil)
		var base, qs, tr []byte
		for _, v := range set.Base {
			base = append(base, floatBytes(v)...)
		}
		for _, v := range set.Queries {
			qs = append(qs, floatBytes(v)...)
		}
		for _, ns := range truth {
			for _, nb := range ns {
				tr = append(tr, byte(nb.ID), byte(nb.ID>>8), byte(nb.ID>>16), byte(nb.ID>>24))
			}
		}
		for ext, b := range map[string][]byte{"base": base, "queries": qs, "truth": tr} {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name+"."+ext), b, 0o600))
		}
	}
}

// exactScan returns the indexes of the k base vectors of largest dot
// product with q, the way a program without an index would find them.
func exactScan(base [][]float32, q []float32, k int) []int {
	type cand struct {
		i int
		d float32
	}
	top := make([]cand, 0, k+1)
	for i, v := range base {
		var d float32
		for j, x := range q {
			d += x * v[j]
		}
		if len(top) == k && d <= top[k-1].d {
			continue
		}
		j := len(top)
		top = append(top, cand{})
		for j > 0 && top[j-1].d < d {
			top[j] = top[j-1]
			j--
		}
		top[j] = cand{i, d}
		if len(top) > k {
			top = top[:k]
		}
	}
	out := make([]int, len(top))
	for i, c := range top {
		out[i] = c.i
	}
	return out
}
