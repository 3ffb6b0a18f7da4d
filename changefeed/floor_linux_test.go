package changefeed_test

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
)

// BenchmarkWritersBesideGoroutines is the floor under
// BenchmarkWritersWithReaders: the same writer (lone Puts of 100-byte
// values on a store with a feed, no reader) beside goroutines that never
// touch the store and take about the CPU 100 tailing readers take, timed
// as the readers' leader times its rounds (a sleep in the kernel: the
// runtime's timers fire a millisecond late on an idle processor). crowd:
// 100 goroutines woken together every 400 µs, each busy 0.3 µs (a round
// of wake-ups of 100 readers); one: one goroutine busy 30 µs every
// 400 µs (the same CPU, no crowd). Compare each sub-benchmark's puts/s
// with none's, in the same run.
func BenchmarkWritersBesideGoroutines(b *testing.B) {
	const round = 400 * time.Microsecond
	busy := func(d time.Duration) {
		for t := time.Now(); time.Since(t) < d; {
		}
	}
	for _, mode := range []string{"none", "crowd", "one"} {
		b.Run(mode, func(b *testing.B) {
			s := benchStore(b, true, false)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			defer func() { cancel(); wg.Wait() }()
			every := func(f func()) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ts := syscall.NsecToTimespec(int64(round))
					for ctx.Err() == nil {
						_ = syscall.Nanosleep(&ts, nil)
						f()
					}
				}()
			}
			switch mode {
			case "crowd":
				var mu sync.Mutex
				wake := make(chan struct{})
				for range 100 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							mu.Lock()
							ch := wake
							mu.Unlock()
							select {
							case <-ch:
								busy(300 * time.Nanosecond)
							case <-ctx.Done():
								return
							}
						}
					}()
				}
				every(func() {
					mu.Lock()
					close(wake)
					wake = make(chan struct{})
					mu.Unlock()
				})
			case "one":
				every(func() { busy(30 * time.Microsecond) })
			}
			val := make([]byte, 100)
			cpu0 := testutil.CPUTime()
			lonePuts(b, s, val)
			reportCPU(b, testutil.CPUTime()-cpu0)
		})
	}
}
