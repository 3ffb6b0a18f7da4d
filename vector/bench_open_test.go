package vector_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/internal/vectest"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
)

// BenchmarkOpenFreshProcess: what an open costs a program that starts,
// opens its store and its index of 20,000 vectors of 384 dimensions (links
// saved, clean close), as BenchmarkOpen measures it, but each open in a
// process of its own (a child running TestOpenInChild), the way a user
// meets it: cpu-µs/vector is the CPU time of vector.Open in the child
// (both cores, the load's workers included), µs/vector its wall time,
// proc-cpu-µs/vector the child's whole CPU time (start, store open, index
// open, close) by vector.
func BenchmarkOpenFreshProcess(b *testing.B) {
	const n = 20000
	set := vectest.Generate(vectest.Clustered(n, 0, 384))
	for _, enc := range []bool{false, true} {
		name := "clear"
		var opts kvstore.Options
		if enc {
			name = "encrypted"
			opts.Encryption = &kvstore.Encryption{Key: make([]byte, 32)}
		}
		b.Run(name, func(b *testing.B) {
			path := savedIndex(b, set.Base, opts)
			b.ResetTimer()
			var cpu, wall, proc []float64
			for b.Loop() {
				cmd := testutil.ChildCommand(ctx, b, "TestOpenInChild",
					"SNKV_OPEN_PATH="+path, "SNKV_OPEN_ENCRYPTED="+strconv.FormatBool(enc))
				out, err := cmd.CombinedOutput()
				if err != nil {
					b.Fatalf("child: %v\n%s", err, out)
				}
				m := openLine.FindSubmatch(out)
				if m == nil {
					b.Fatalf("child printed no open line:\n%s", out)
				}
				c, _ := strconv.ParseFloat(string(m[1]), 64)
				w, _ := strconv.ParseFloat(string(m[2]), 64)
				cpu = append(cpu, c/n)
				wall = append(wall, w/n)
				st := cmd.ProcessState
				proc = append(proc, float64((st.UserTime()+st.SystemTime()).Microseconds())/n)
			}
			b.ReportMetric(midOf(cpu), "cpu-µs/vector")
			b.ReportMetric(midOf(wall), "µs/vector")
			b.ReportMetric(midOf(proc), "proc-cpu-µs/vector")
		})
	}
}

var openLine = regexp.MustCompile(`open cpu-us=([0-9.]+) wall-us=([0-9.]+)`)

func midOf(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// TestOpenInChild is BenchmarkOpenFreshProcess's child: it opens the store
// at SNKV_OPEN_PATH and its index "v", and prints what the index's open
// cost.
func TestOpenInChild(t *testing.T) {
	testutil.ChildOnly(t)
	var opts kvstore.Options
	if os.Getenv("SNKV_OPEN_ENCRYPTED") == "true" {
		opts.Encryption = &kvstore.Encryption{Key: make([]byte, 32)}
	}
	db := openStore(t, os.Getenv("SNKV_OPEN_PATH"), opts)
	cpu, t0 := testutil.CPUTime(), time.Now()
	ix, err := vector.Open(ctx, db, "v", vector.Options{})
	wall, used := time.Since(t0), testutil.CPUTime()-cpu
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("open cpu-us=%d wall-us=%d\n", used.Microseconds(), wall.Microseconds())
	_ = ix.Close()
}
