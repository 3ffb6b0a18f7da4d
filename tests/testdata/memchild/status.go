package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"
)

// status is one reading of /proc/self/status, in bytes, with the part of
// it the Go heap and goroutine stacks take at the same moment.
type status struct {
	Anon, File, Shmem, RSS, HWM int64
	// Go is the Go heap (objects, and free pages not yet returned to the
	// operating system) and the goroutine stacks.
	Go int64
	// NotGo is Anon minus Go: SQLite and the allocator of its C library
	// above all, plus the Go runtime's own metadata (about 1 MiB in a
	// program without a store).
	NotGo int64
}

// goMetrics are the runtime/metrics classes status.Go adds up.
var goMetrics = []string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/os-stacks:bytes",
}

// goHeld returns the memory of the Go heap and stacks (see status.Go).
func goHeld() int64 {
	s := make([]metrics.Sample, len(goMetrics))
	for i, name := range goMetrics {
		s[i].Name = name
	}
	metrics.Read(s)
	var n int64
	for _, v := range s {
		n += int64(v.Value.Uint64())
	}
	return n
}

// readStatus parses the fields of /proc/self/status the budget is about.
func readStatus() (status, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return status{}, err
	}
	var st status
	fields := map[string]*int64{"RssAnon:": &st.Anon, "RssFile:": &st.File, "RssShmem:": &st.Shmem, "VmRSS:": &st.RSS, "VmHWM:": &st.HWM}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[2] != "kB" {
			continue
		}
		if p, ok := fields[f[0]]; ok {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return status{}, fmt.Errorf("%s %q: %w", f[0], f[1], err)
			}
			*p = kb << 10
		}
	}
	st.Go = goHeld()
	st.NotGo = st.Anon - st.Go
	return st, sc.Err()
}

// sampler reads /proc/self/status at a fixed interval and keeps the peak
// of each field.
type sampler struct {
	mu      sync.Mutex
	peak    status
	phase   string   // the phase of the workload running (setPhase)
	at      peakedAt // the phase each peak was reached in
	samples int
	err     error
	stop    chan struct{}
	done    chan struct{}
}

func startSampler(every time.Duration) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	s.sample()
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				s.sample()
				return
			case <-t.C:
				s.sample()
			}
		}
	}()
	return s
}

func (s *sampler) sample() {
	st, err := readStatus()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.err = err
		return
	}
	p := &s.peak
	if st.Anon > p.Anon {
		s.at.Anon = s.phase
	}
	if st.Go > p.Go {
		s.at.Go = s.phase
	}
	if st.RSS > p.RSS {
		s.at.RSS = s.phase
	}
	p.Anon, p.File, p.Shmem = max(p.Anon, st.Anon), max(p.File, st.File), max(p.Shmem, st.Shmem)
	p.RSS, p.HWM = max(p.RSS, st.RSS), max(p.HWM, st.HWM)
	p.Go, p.NotGo = max(p.Go, st.Go), max(p.NotGo, st.NotGo)
	s.samples++
}

// peakedAt names the phase of the workload (load, scan, read, close) in
// which a peak was reached.
type peakedAt struct {
	Anon, Go, RSS string
}

// setPhase names the phase of the workload the samples from now on are
// taken in, after one last sample of the phase that ends.
func (s *sampler) setPhase(name string) {
	s.sample()
	s.mu.Lock()
	s.phase = name
	s.mu.Unlock()
}

// finish stops the sampler and returns the peaks and the number of samples.
func (s *sampler) finish() (status, peakedAt, int, error) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak, s.at, s.samples, s.err
}
