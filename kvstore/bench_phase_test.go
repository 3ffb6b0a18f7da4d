package kvstore_test

import (
	"context"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
)

// phases times the phases of a workload benchmark that runs every phase
// once an iteration (BenchmarkSNKVWorkload, BenchmarkTTLWorkload): each
// phase's operations per second of wall clock and of the process's CPU
// time (user and system, every thread), reported as the metrics
// NAME-ops/s and NAME-ops/cpu-s, means over the iterations.
type phases struct {
	rates, cpuRates map[string][]float64
}

func newPhases() *phases {
	return &phases{rates: map[string][]float64{}, cpuRates: map[string][]float64{}}
}

// run times fn as ops operations of the phase name. fn runs under the
// profiler label phase=name, so that a CPU profile of the whole workload
// (-cpuprofile) splits by phase with -tagfocus phase=NAME; the work of the
// store's own goroutines (the background checkpoint) carries no label.
func (p *phases) run(name string, ops int, fn func()) {
	t, c := time.Now(), int64(testutil.CPUTime())
	pprof.Do(context.Background(), pprof.Labels("phase", name), func(context.Context) { fn() })
	p.rates[name] = append(p.rates[name], float64(ops)/time.Since(t).Seconds())
	if c1 := int64(testutil.CPUTime()); c1 > c {
		p.cpuRates[name] = append(p.cpuRates[name], float64(ops)/(float64(c1-c)/1e9))
	}
}

// report reports the means of the phases, in the order of names.
func (p *phases) report(b *testing.B, names ...string) {
	mean := func(rs []float64) float64 {
		var sum float64
		for _, r := range rs {
			sum += r
		}
		return sum / float64(len(rs))
	}
	for _, name := range names {
		b.ReportMetric(mean(p.rates[name]), name+"-ops/s")
		if len(p.cpuRates[name]) > 0 {
			b.ReportMetric(mean(p.cpuRates[name]), name+"-ops/cpu-s")
		}
	}
}
