package main

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/snkv-go/snkv/kvstore"
)

// The workload of docs/memory.md: nKeys random 16-byte keys with 100-byte
// values, applied batch at a time, scanned, then nReads random reads (the
// -keys flag scales both down for a quick look).
var (
	nKeys  uint64 = 1_000_000
	nReads uint64 = 100_000
)

const batch = 1_000

// run runs the workload on a store at path opened with opts (or, with
// bare, the same loops without a store) while a sampler watches.
func run(path string, opts kvstore.Options, bare bool) (Result, error) {
	s := startSampler(5 * time.Millisecond)
	var res Result
	var err error
	if bare {
		err = workload(nil, &res, s)
	} else {
		err = withStore(path, opts, &res, s)
	}
	peak, at, n, serr := s.finish()
	if err == nil {
		err = serr
	}
	res.Anon, res.File, res.Shmem, res.RSS, res.HWM, res.Samples = peak.Anon, peak.File, peak.Shmem, peak.RSS, peak.HWM, n
	res.Go, res.NotGo = peak.Go, peak.NotGo
	res.PeakAt = at
	return res, err
}

func withStore(path string, opts kvstore.Options, res *Result, s *sampler) error {
	s.setPhase("open")
	st, err := kvstore.Open(path, opts)
	if err != nil {
		return err
	}
	if err := workload(st.Default(), res, s); err != nil {
		_ = st.Close()
		return err
	}
	s.setPhase("close")
	return st.Close()
}

// key writes the i-th key of the workload into k (16 bytes): random
// looking and reproducible, so that the program keeps no list of its keys.
func key(k []byte, i uint64) {
	binary.BigEndian.PutUint64(k[0:8], splitmix(i))
	binary.BigEndian.PutUint64(k[8:16], splitmix(i^0x9e3779b97f4a7c15))
}

// splitmix is SplitMix64's output function.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// workload loads, scans and reads cf; with a nil cf it runs the same loops
// (keys and values generated alike) without a store. It names each phase
// to s.
func workload(cf *kvstore.ColumnFamily, res *Result, s *sampler) error {
	s.setPhase("load")
	keys := make([][]byte, batch)
	vals := make([][]byte, batch)
	for i := range keys {
		keys[i] = make([]byte, 16)
		vals[i] = make([]byte, 100)
	}
	var b kvstore.Batch
	start := time.Now()
	for i := uint64(0); i < nKeys; i += batch {
		b.Reset()
		for j := range keys {
			key(keys[j], i+uint64(j))
			binary.BigEndian.PutUint64(vals[j], i+uint64(j))
			b.Put(keys[j], vals[j])
		}
		if cf != nil {
			if err := cf.Apply(context.Background(), &b); err != nil {
				return err
			}
		}
	}
	res.Load = time.Since(start)
	s.setPhase("scan")
	start = time.Now()
	k := make([]byte, 16)
	if cf != nil {
		for e, err := range cf.All() {
			if err != nil {
				return err
			}
			if len(e.Key) == 16 {
				res.Scanned++
			}
		}
	} else {
		for i := range nKeys {
			key(k, i)
			res.Scanned++
		}
	}
	res.Scan = time.Since(start)
	s.setPhase("read")
	start = time.Now()
	for i := range nReads {
		key(k, splitmix(i+nKeys)%nKeys)
		if cf == nil {
			res.Found++
			continue
		}
		v, err := cf.Get(k)
		if err != nil {
			return err
		}
		if len(v) == 100 {
			res.Found++
		}
	}
	res.Read = time.Since(start)
	return nil
}
