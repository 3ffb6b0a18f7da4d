// Command memchild is the program the memory tests of package tests build
// and run (TestMemoryBudget, TestMemoryUnits): a small program that imports
// kvstore, runs one workload and prints what /proc/self/status said about
// it as one JSON object. It is a program of its own, not the test binary,
// so that what it measures is what an application would see.
//
//	memchild -mode run     -store zero|small|none -path FILE   the workload of docs/memory.md
//	memchild -mode prepare -store zero|small      -path DIR    the files the units mode opens
//	memchild -mode unit    -store zero|small      -path DIR -unit KIND
//
// The unit mode measures the memory of one kind of object (store, reader,
// reader-warm, cursor, snapshot), unitCount of them held at once; run it in
// a fresh process for each kind.
//
// -cache, -mmap and -readers override the corresponding Options fields;
// -keys scales the run mode's workload down for a quick look.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/snkv-go/snkv/kvstore"
)

// Result is what memchild prints.
type Result struct {
	// Peaks of /proc/self/status, sampled every 5 ms (run mode), bytes,
	// and of the Go heap and stacks and the rest (see status).
	Anon, File, Shmem, RSS, HWM, Go, NotGo int64
	Samples                                int
	// PeakAt names the phase (open, load, scan, read, close) in which the
	// peaks of Anon, Go and RSS were reached (run mode).
	PeakAt peakedAt
	// Durations of the phases of the run mode.
	Load, Scan, Read time.Duration
	Scanned, Found   int
	// Unit (unit mode): the growth of anonymous memory and of the Go heap
	// per object.
	Unit *Unit `json:",omitempty"`
}

// Unit is the memory of one kind of object, measured over Count of them.
type Unit struct {
	Name      string
	Count     int
	AnonEach  int64 // RssAnon growth per object
	HeapEach  int64 // Go heap growth (HeapAlloc) per object
	AnonTotal int64
}

func main() {
	mode := flag.String("mode", "run", "run, prepare or unit")
	kind := flag.String("unit", "", "the kind the unit mode measures")
	store := flag.String("store", "zero", "none (run mode only), zero or small")
	path := flag.String("path", "", "the store file (run) or a directory (units)")
	cache := flag.Int("cache", 0, "Options.CacheSize, when not 0")
	mmap := flag.Int64("mmap", 0, "Options.MmapSize, when not 0")
	readers := flag.Int("readers", 0, "Options.MaxReaders, when not 0")
	keys := flag.Uint64("keys", nKeys, "keys the run mode loads (a tenth of them are read back)")
	flag.Parse()
	if *keys < batch || *keys%batch != 0 {
		fail(fmt.Errorf("-keys %d is not a positive multiple of %d", *keys, batch))
	}
	nKeys, nReads = *keys, *keys/10
	var opts kvstore.Options
	switch *store {
	case "zero", "none":
	case "small":
		opts = kvstore.SmallDevice()
	default:
		fail(fmt.Errorf("unknown -store %q", *store))
	}
	if *cache != 0 {
		opts.CacheSize = *cache
	}
	if *mmap != 0 {
		opts.MmapSize = *mmap
	}
	if *readers != 0 {
		opts.MaxReaders = *readers
	}
	var res Result
	var err error
	switch *mode {
	case "run":
		res, err = run(*path, opts, *store == "none")
	case "prepare":
		err = prepare(*path, opts)
	case "unit":
		var u Unit
		u, err = unit(*kind, *path, opts)
		res.Unit = &u
	default:
		err = fmt.Errorf("unknown -mode %q", *mode)
	}
	if err != nil {
		fail(err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "memchild: %v\n", err)
	os.Exit(2)
}
