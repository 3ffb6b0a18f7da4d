package changefeed_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
)

// reportCPU reports the process's CPU time per op (cpu-ns/op), the figure
// to compare on a busy machine, where wall time mostly measures the wait.
func reportCPU(b *testing.B, cpu time.Duration) {
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

const benchTx = 1000

func benchStore(b *testing.B, feed bool, keep bool) *kvstore.Store {
	b.Helper()
	s, err := kvstore.Open(filepath.Join(b.TempDir(), "bench.db"), kvstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	if feed {
		if err := changefeed.Enable(context.Background(), s, "default", changefeed.Options{KeepValues: keep}); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

func benchKey(i int) []byte {
	return binary.BigEndian.AppendUint64([]byte("key:"), uint64(i)*0x9E3779B97F4A7C15)
}

func feedModes() []struct {
	name       string
	feed, keep bool
} {
	return []struct {
		name       string
		feed, keep bool
	}{{"feed=off", false, false}, {"feed=on", true, false}, {"feed=values", true, true}}
}

// BenchmarkTxPut1000 writes transactions of 1,000 puts of 100-byte values
// over 100k keys, without a feed and with one (without and with values):
// the feed's cost on the write path. ns/op is per put.
func BenchmarkTxPut1000(b *testing.B) {
	for _, m := range feedModes() {
		b.Run(m.name, func(b *testing.B) {
			s := benchStore(b, m.feed, m.keep)
			ctx := context.Background()
			val := make([]byte, 100)
			b.ReportAllocs()
			i := 0
			cpu0 := testutil.CPUTime()
			for b.Loop() {
				if i%benchTx == 0 {
					tx, err := s.Begin(ctx, true)
					if err != nil {
						b.Fatal(err)
					}
					for j := range benchTx {
						if err := tx.Put(benchKey((i+j)%100_000), val); err != nil {
							b.Fatal(err)
						}
					}
					if err := tx.Commit(); err != nil {
						b.Fatal(err)
					}
				}
				i++
			}
			reportCPU(b, testutil.CPUTime()-cpu0)
		})
	}
}

// BenchmarkTxDelete1000 deletes 1,000 keys in one transaction (refilled
// outside the timer). ns/op is per delete.
func BenchmarkTxDelete1000(b *testing.B) {
	for _, m := range feedModes()[:2] {
		b.Run(m.name, func(b *testing.B) {
			s := benchStore(b, m.feed, false)
			ctx := context.Background()
			val := make([]byte, 100)
			fill := func() { putBenchKeys(b, s, val) }
			b.ReportAllocs()
			var cpu time.Duration
			for i := 0; b.Loop(); i++ {
				if i%benchTx != 0 {
					continue
				}
				b.StopTimer()
				fill()
				b.StartTimer()
				cpu0 := testutil.CPUTime()
				tx, err := s.Begin(ctx, true)
				if err != nil {
					b.Fatal(err)
				}
				for j := range benchTx {
					if err := tx.Delete(benchKey(j)); err != nil {
						b.Fatal(err)
					}
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
				cpu += testutil.CPUTime() - cpu0
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkPut is Store.Put, each its own transaction, without and with a
// feed.
func BenchmarkPut(b *testing.B) {
	for _, m := range feedModes()[:2] {
		b.Run(m.name, func(b *testing.B) {
			s := benchStore(b, m.feed, false)
			val := make([]byte, 100)
			b.ReportAllocs()
			cpu0 := testutil.CPUTime()
			for i := 0; b.Loop(); i++ {
				if err := s.Put(benchKey(i%100_000), val); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, testutil.CPUTime()-cpu0)
		})
	}
}

// BenchmarkDelete is Store.Delete of a present key, each its own
// transaction, without and with a feed (the keys are put back, in
// transactions of 1,000, outside the timer), and of a missing key.
func BenchmarkDelete(b *testing.B) {
	for _, m := range []struct {
		name          string
		feed, missing bool
	}{{"feed=off", false, false}, {"feed=on", true, false}, {"feed=off/missing", false, true}} {
		b.Run(m.name, func(b *testing.B) {
			s := benchStore(b, m.feed, false)
			val := make([]byte, 100)
			b.ReportAllocs()
			var cpu time.Duration
			for i := 0; b.Loop(); i++ {
				if i%benchTx == 0 && !m.missing {
					b.StopTimer()
					putBenchKeys(b, s, val)
					b.StartTimer()
				}
				cpu0 := testutil.CPUTime()
				err := s.Delete(benchKey(i % benchTx))
				cpu += testutil.CPUTime() - cpu0
				if m.missing != errors.Is(err, kvstore.ErrNotFound) || !m.missing && err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkReadBacklog reads a backlog of 100,000 changes with a Reader in
// pages of 1,024: changes/s, without and with 100-byte values.
func BenchmarkReadBacklog(b *testing.B) {
	for _, keep := range []bool{false, true} {
		b.Run(fmt.Sprintf("values=%v", keep), func(b *testing.B) {
			s := benchStore(b, true, keep)
			ctx := context.Background()
			val := make([]byte, 100)
			const n = 100_000
			for i := 0; i < n; i += benchTx {
				var bt kvstore.Batch
				for j := range benchTx {
					bt.Put(benchKey(i+j), val)
				}
				if err := s.Apply(ctx, &bt); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			total := 0
			cpu0 := testutil.CPUTime()
			for b.Loop() {
				r, err := changefeed.NewReader(ctx, s, changefeed.Position{}, changefeed.ReaderOptions{})
				if err != nil {
					b.Fatal(err)
				}
				for {
					chs, err := r.Read(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if len(chs) == 0 {
						break
					}
					total += len(chs)
				}
			}
			b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "changes/s")
			if cpu := testutil.CPUTime() - cpu0; cpu > 0 {
				b.ReportMetric(float64(total)/cpu.Seconds(), "changes/cpu-s")
			}
		})
	}
}

// BenchmarkTailLatency measures the time from a Put's return to a tailing
// Reader's Next returning its change, one put at a time, p50 and p99: the
// writer on the reader's store handle (woken by the commit hook), and on
// another handle of the same file (as another process would be: the reader
// finds the commit by polling the WAL index every 2 ms).
func BenchmarkTailLatency(b *testing.B) {
	onBothHandles(b, tailLatency)
}

// delivered waits for the reader's report of the change just committed
// on got and returns how long after now it came.
func delivered(b *testing.B, got <-chan time.Time) time.Duration {
	t := time.Now()
	at, ok := <-got
	if !ok {
		b.Fatal("reader ended")
	}
	return max(at.Sub(t), 0)
}

// reportLatency sorts lat and reports its median and 99th percentile.
func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// onBothHandles runs bench as two sub-benchmarks on a store with a feed:
// the writer w on the reader's handle s (same-handle), and on another
// handle of the same file (other-handle, as another process would be).
func onBothHandles(b *testing.B, bench func(b *testing.B, s, w *kvstore.Store)) {
	for _, other := range []bool{false, true} {
		b.Run(map[bool]string{false: "same-handle", true: "other-handle"}[other], func(b *testing.B) {
			s := benchStore(b, true, false)
			w := s
			if other {
				var err error
				if w, err = kvstore.Open(s.Path(), kvstore.Options{}); err != nil {
					b.Fatal(err)
				}
				defer w.Close()
			}
			bench(b, s, w)
		})
	}
}

func tailLatency(b *testing.B, s, w *kvstore.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := readerAtNow(ctx, b, s)
	got := make(chan time.Time, 1)
	go func() {
		for {
			if _, err := r.Next(ctx); err != nil {
				close(got)
				return
			}
			got <- time.Now()
		}
	}()
	val := make([]byte, 100)
	var lat []time.Duration
	for i := 0; b.Loop(); i++ {
		if err := w.Put(benchKey(i), val); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, delivered(b, got))
	}
	reportLatency(b, lat)
}

// BenchmarkIdleTail measures the CPU of a process whose Reader waits on a
// quiet store (it polls the WAL index, from every 2 ms to every 8 ms, then
// watches the WAL), of the same process with 100 such Readers, and
// without a reader: cpu-% of one core, over one second per op. The
// difference is the waiting readers' cost.
func BenchmarkIdleTail(b *testing.B) {
	for _, n := range []int{0, 1, 100} {
		name := map[int]string{0: "no-reader", 1: "reader"}[n]
		if name == "" {
			name = fmt.Sprintf("readers=%d", n)
		}
		b.Run(name, func(b *testing.B) {
			s := benchStore(b, true, false)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var wg sync.WaitGroup
			for range n {
				r, err := changefeed.NewReader(ctx, s, changefeed.Position{}, changefeed.ReaderOptions{})
				if err != nil {
					b.Fatal(err)
				}
				wg.Go(func() { _, _ = r.Next(ctx) })
			}
			time.Sleep(50 * time.Millisecond) // the readers are waiting
			cpu0, t0 := testutil.CPUTime(), time.Now()
			for b.Loop() {
				time.Sleep(time.Second)
			}
			if cpu := testutil.CPUTime() - cpu0; cpu > 0 {
				b.ReportMetric(100*cpu.Seconds()/time.Since(t0).Seconds(), "cpu-%")
			}
			cancel()
			wg.Wait()
		})
	}
}

// BenchmarkIdleTailLatency is the latency of a commit of another handle
// on the file (as another process: the reader polls or watches the WAL)
// after 100 ms of quiet, from the Put returning to Next returning it:
// the reader has gone past its poll series and is idle.
func BenchmarkIdleTailLatency(b *testing.B) {
	path := filepath.Join(b.TempDir(), "idle.db")
	s, err := kvstore.Open(path, kvstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := changefeed.Enable(ctx, s, "default", changefeed.Options{}); err != nil {
		b.Fatal(err)
	}
	w, err := kvstore.Open(path, kvstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	r, err := changefeed.NewReader(ctx, s, changefeed.Position{}, changefeed.ReaderOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var lat []time.Duration
	for i := 0; b.Loop(); i++ {
		got := make(chan time.Time, 1)
		go func() {
			if _, err := r.Next(ctx); err != nil {
				close(got)
				return
			}
			got <- time.Now()
		}()
		time.Sleep(100 * time.Millisecond)
		if err := w.Put(benchKey(i), []byte("v")); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, delivered(b, got))
	}
	reportLatency(b, lat)
}

// BenchmarkTrimSteady holds a feed of 20,000 changes (4-byte-or-so keys,
// 100-byte values kept) at its size: each op commits 100 puts and trims
// the 100 oldest changes with one rule, by count or by bytes (which reads
// the whole log to find its cut). ns/op is per op: the trim's write
// transaction is what a writer may wait for.
func BenchmarkTrimSteady(b *testing.B) {
	const held, batch = 20_000, 100
	size := int64(len(benchKey(0)) + 100 + 48)
	for _, rule := range []struct {
		name string
		opts changefeed.Options
	}{
		{"count", changefeed.Options{KeepValues: true, MaxCount: held}},
		{"bytes", changefeed.Options{KeepValues: true, MaxBytes: held * size}},
	} {
		b.Run(rule.name, func(b *testing.B) {
			s := benchStore(b, false, false)
			ctx := context.Background()
			if err := changefeed.Enable(ctx, s, "default", rule.opts); err != nil {
				b.Fatal(err)
			}
			val := make([]byte, 100)
			i := 0
			put := func(n int) {
				tx, err := s.Begin(ctx, true)
				if err != nil {
					b.Fatal(err)
				}
				for range n {
					if err := tx.Put(benchKey(i%100_000), val); err != nil {
						b.Fatal(err)
					}
					i++
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
			}
			put(held)
			if _, err := changefeed.Trim(ctx, s, 0, true); err != nil {
				b.Fatal(err)
			}
			cpu0 := testutil.CPUTime()
			for b.Loop() {
				put(batch)
				n, err := changefeed.Trim(ctx, s, 0, true)
				if err != nil {
					b.Fatal(err)
				}
				if n != batch {
					b.Fatalf("trimmed %d changes, want %d", n, batch)
				}
			}
			reportCPU(b, testutil.CPUTime()-cpu0)
		})
	}
}

// BenchmarkWritersWithReaders measures a writer's rate (lone Puts of
// 100-byte values, each its own transaction) with 0 and with 100 Readers
// of the same store tailing it in this process, each a goroutine looping
// on Next: puts/s, wall time. The readers' cost to writers is the drop.
func BenchmarkWritersWithReaders(b *testing.B) {
	for _, n := range []int{0, 100} {
		b.Run(fmt.Sprintf("readers=%d", n), func(b *testing.B) {
			s := benchStore(b, true, false)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			from, err := changefeed.Now(ctx, s)
			if err != nil {
				b.Fatal(err)
			}
			var read atomic.Int64
			var wg sync.WaitGroup
			for range n {
				r, err := changefeed.NewReader(ctx, s, from, changefeed.ReaderOptions{})
				if err != nil {
					b.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					// Counted in a variable of its own: 100 goroutines
					// adding to one shared counter on two cores cost
					// about 1.6 µs of CPU a Put, the harness's, not the
					// readers'.
					got := int64(0)
					defer func() { read.Add(got) }()
					for {
						if _, err := r.Next(ctx); err != nil {
							return
						}
						got++
					}
				}()
			}
			db, fs, err := layer.Engine(ctx, s)
			if err != nil {
				b.Fatal(err)
			}
			val := make([]byte, 100)
			ckpt := db.CheckpointStats()
			waits0, passes0 := ckpt.WriterWaits.Load(), ckpt.Passes.Load()
			cpu0 := testutil.CPUTime()
			refr0, pubs0, leads0 := fs.Pages.Refreshes(), fs.Pages.Publications(), fs.Pages.Leads()
			lonePuts(b, s, val)
			reportCPU(b, testutil.CPUTime()-cpu0)
			// The shared window's refreshes through SQL, and the commits
			// that extended it without a read.
			pubs := fs.Pages.Publications() - pubs0
			b.ReportMetric(float64(fs.Pages.Refreshes()-refr0)*1000/float64(b.N), "refreshes/kput")
			b.ReportMetric(float64(pubs)*1000/float64(b.N), "publications/kput")
			// The readers' rounds of wake-ups (each wakes every waiting
			// reader once).
			b.ReportMetric(float64(fs.Pages.Leads()-leads0)*1000/float64(b.N), "wake-rounds/kput")
			// Transactions that waited for the checkpointer's pass.
			b.ReportMetric(float64(ckpt.WriterWaits.Load()-waits0)*1000/float64(b.N), "ckpt-waits/kput")
			b.ReportMetric(float64(ckpt.Passes.Load()-passes0)*1000/float64(b.N), "ckpt-passes/kput")
			cancel()
			wg.Wait()
			if n > 0 {
				b.ReportMetric(float64(read.Load())/float64(n*b.N), "read-fraction")
			}
		})
	}
}

// BenchmarkTailLatencyUnderLoad measures the time from a Put's return to
// a tailing Reader's Next returning its change while a writer commits
// steadily: one Put every 500 µs (2,000 commits/s, each measured), on the
// reader's store handle (woken by the commit hook) or on another handle of
// the file (as another process: the reader polls). p50 and p99.
func BenchmarkTailLatencyUnderLoad(b *testing.B) {
	onBothHandles(b, func(b *testing.B, s, w *kvstore.Store) { tailUnderLoad(b, s, w, 0) })
}

// BenchmarkTailLatencyUnderLoadWithReaders is BenchmarkTailLatencyUnderLoad
// on the reader's handle with 99 more Readers tailing the store in the
// process, each a goroutine looping on Next: the latency of one of 100.
func BenchmarkTailLatencyUnderLoadWithReaders(b *testing.B) {
	s := benchStore(b, true, false)
	tailUnderLoad(b, s, s, 99)
}

// tailUnderLoad is the body of the latency-under-load benchmarks: the
// measured reader on s, others more tailing s, the writer on w.
func tailUnderLoad(b *testing.B, s, w *kvstore.Store, others int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := readerAtNow(ctx, b, s)
	wait := tailers(ctx, b, s, others)
	defer func() { cancel(); wait() }()
	n := b.N
	returned := make([]atomic.Int64, n) // UnixNano of each Put's return
	lat := make([]time.Duration, 0, n)
	done := make(chan error, 1)
	go func() {
		for len(lat) < n {
			c, err := r.Next(ctx)
			if err != nil {
				done <- err
				return
			}
			at := time.Now()
			i := int(binary.BigEndian.Uint64(c.Key[4:]))
			for returned[i].Load() == 0 { // the hook may wake it before Put returns
				runtime.Gosched()
			}
			lat = append(lat, max(at.Sub(time.Unix(0, returned[i].Load())), 0))
		}
		done <- nil
	}()
	val := make([]byte, 100)
	tick := time.NewTicker(500 * time.Microsecond)
	defer tick.Stop()
	b.ResetTimer()
	for i := range n {
		<-tick.C
		key := binary.BigEndian.AppendUint64([]byte("lat:"), uint64(i))
		if err := w.Put(key, val); err != nil {
			b.Fatal(err)
		}
		returned[i].Store(time.Now().UnixNano())
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	reportLatency(b, lat)
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
}

// tailers starts n Readers of s's feed from now, each a goroutine looping
// on Next until ctx ends; the function returned waits for them to end.
func tailers(ctx context.Context, b *testing.B, s *kvstore.Store, n int) func() {
	var wg sync.WaitGroup
	for range n {
		r := readerAtNow(ctx, b, s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if _, err := r.Next(ctx); err != nil {
					return
				}
			}
		}()
	}
	return wg.Wait
}

// BenchmarkExpiryEvents measures how late expiry events arrive with the
// background purge on, on a store of 1M keys with a TTL: 980,000 expire in
// an hour, 20,000 during the run, their deadlines spread evenly over 10 s
// (2,000 a second). A Reader tails the feed (turned on after the fill) and
// notes, for each expired event, how long after the key's deadline Next
// returned it: p50, p99 and max, for each purge interval (the store's
// system clock). One op is one whole run (about 20 s):
//
//	go test -run '^$' -bench ExpiryEvents -benchtime 1x ./changefeed
func BenchmarkExpiryEvents(b *testing.B) {
	const total, soon, spread = 1_000_000, 20_000, 10 * time.Second
	for _, every := range []time.Duration{100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond} {
		b.Run(fmt.Sprintf("purge=%v", every), func(b *testing.B) {
			for b.Loop() {
				expiryRun(b, every, total, soon, spread)
			}
		})
	}
}

func expiryRun(b *testing.B, every time.Duration, total, soon int, spread time.Duration) {
	s, err := kvstore.Open(filepath.Join(b.TempDir(), "ttl.db"), kvstore.Options{PurgeInterval: every})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	val := make([]byte, 20)
	put := func(from, to int, at func(j int) time.Time) {
		tx, err := s.Begin(ctx, true)
		if err != nil {
			b.Fatal(err)
		}
		for j := from; j < to; j++ {
			if err := tx.PutExpireAt(benchKey(j), val, at(j)); err != nil {
				_ = tx.Rollback()
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	later := time.Now().Add(time.Hour)
	for i := soon; i < total; i += 10_000 {
		put(i, min(i+10_000, total), func(int) time.Time { return later })
	}
	// The keys that expire during the run go last, in one transaction.
	start := time.Now().Add(2 * time.Second)
	put(0, soon, func(j int) time.Time { return start.Add(time.Duration(j) * spread / time.Duration(soon)) })
	if err := changefeed.Enable(ctx, s, "default", changefeed.Options{}); err != nil {
		b.Fatal(err)
	}
	r := readerAtNow(ctx, b, s)
	late := make([]time.Duration, 0, soon)
	removed := make([]time.Duration, 0, soon)
	wctx, wcancel := context.WithTimeout(ctx, time.Until(start)+spread+30*time.Second)
	defer wcancel()
	for len(late) < soon {
		c, err := r.Next(wctx)
		if err != nil {
			b.Fatalf("after %d expiry events: %v", len(late), err)
		}
		if c.Op != changefeed.OpExpired {
			continue
		}
		late = append(late, time.Since(c.Expiry))
		removed = append(removed, c.At.Sub(c.Expiry))
	}
	slices.Sort(late)
	slices.Sort(removed)
	b.ReportMetric(float64(late[len(late)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(late[len(late)*99/100].Milliseconds()), "p99-ms")
	b.ReportMetric(float64(late[len(late)-1].Milliseconds()), "max-ms")
	b.ReportMetric(float64(removed[len(removed)*99/100].Milliseconds()), "removed-p99-ms")
}

// putBenchKeys puts val under the benchTx keys benchKey(0…) in one batch.
func putBenchKeys(b *testing.B, s *kvstore.Store, val []byte) {
	var bt kvstore.Batch
	for j := range benchTx {
		bt.Put(benchKey(j), val)
	}
	if err := s.Apply(context.Background(), &bt); err != nil {
		b.Fatal(err)
	}
}

// readerAtNow returns a Reader of s's whole feed from its current end.
func readerAtNow(ctx context.Context, b *testing.B, s *kvstore.Store) *changefeed.Reader {
	now, err := changefeed.Now(ctx, s)
	if err != nil {
		b.Fatal(err)
	}
	r, err := changefeed.NewReader(ctx, s, now, changefeed.ReaderOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkNextFromWindow measures one delivery: a Reader's Next handing
// out a change of this process's commits from the readers' shared window
// (the commits extend it; nothing is read from the file). The changes are
// committed 1,000 to a transaction outside the timer. ns/op is per change.
func BenchmarkNextFromWindow(b *testing.B) {
	s := benchStore(b, true, false)
	ctx := context.Background()
	r := readerAtNow(ctx, b, s)
	defer r.Close()
	_, fs, err := layer.Engine(ctx, s)
	if err != nil {
		b.Fatal(err)
	}
	val := make([]byte, 100)
	put := func(from int) {
		tx, err := s.Begin(ctx, true)
		if err != nil {
			b.Fatal(err)
		}
		for j := range benchTx {
			if err := tx.Put(benchKey(from+j), val); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	next := func() {
		if _, err := r.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
	// The first transaction's changes make the window the others extend.
	put(0)
	for range benchTx {
		next()
	}
	pubs := fs.Pages.Publications()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%benchTx == 0 {
			b.StopTimer()
			put(benchTx + i)
			b.StartTimer()
		}
		next()
		i++
	}
	if fs.Pages.Publications() == pubs {
		b.Fatal("no commit extended the window")
	}
}

// lonePuts puts val under a new key b.N times, each Put its own
// transaction, and reports puts/s.
func lonePuts(b *testing.B, s *kvstore.Store, val []byte) {
	i := 0
	for b.Loop() {
		if err := s.Put(benchKey(i), val); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "puts/s")
}
