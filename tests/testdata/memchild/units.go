package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"runtime/debug"

	"github.com/snkv-go/snkv/iterator"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

// unitCount is how many objects of a kind are held open at once.
const unitCount = 16

// unitKeys is how many keys the shared store of the reader kinds holds.
const unitKeys = 100_000

// The kinds the units mode measures, one per process: freed memory stays
// with the C allocator for reuse, so a process that closed one kind would
// hide the next kind's growth.
const (
	unitStore    = "store"
	unitReader   = "reader"
	unitWarm     = "reader-warm"
	unitCursor   = "cursor"
	unitSnapshot = "snapshot"
)

var unitNames = map[string]string{
	unitStore:    "open store, idle",
	unitReader:   "reader connection, after one read",
	unitWarm:     "reader connection, 2,000 random reads more",
	unitCursor:   "cursor, positioned, on an open reader",
	unitSnapshot: "timelog snapshot, on an open reader",
}

// settled returns the anonymous resident memory and the Go heap once the
// collector has run and returned what it can to the operating system, so
// that two readings differ only by what is still in use.
func settled() (anon, heap int64, err error) {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st, err := readStatus()
	return st.Anon, int64(ms.HeapAlloc), err
}

// measure reads the memory, runs open (which opens unitCount objects),
// reads it again and returns the growth per object.
func measure(kind string, open func() error) (Unit, error) {
	a0, h0, err := settled()
	if err != nil {
		return Unit{}, err
	}
	if err := open(); err != nil {
		return Unit{}, fmt.Errorf("%s: %w", kind, err)
	}
	a1, h1, err := settled()
	return Unit{Name: unitNames[kind], Count: unitCount, AnonEach: (a1 - a0) / unitCount, HeapEach: (h1 - h0) / unitCount, AnonTotal: a1 - a0}, err
}

func storePath(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("s%d.db", i)) }

// prepare creates the files the units mode opens: unitCount small stores
// and one of unitKeys keys holding a flushed timelog.
func prepare(dir string, opts kvstore.Options) error {
	for i := range unitCount {
		if err := seed(storePath(dir, i), opts, 100, false); err != nil {
			return err
		}
	}
	return seed(filepath.Join(dir, "big.db"), opts, unitKeys, true)
}

// seed creates a store at path holding n keys of the workload and, with
// withLog, a timelog of 10,000 flushed records.
func seed(path string, opts kvstore.Options, n uint64, withLog bool) (err error) {
	st, err := kvstore.Open(path, opts)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, st.Close()) }()
	var b kvstore.Batch
	for i := range n {
		k := make([]byte, 16)
		key(k, i)
		b.Put(k, make([]byte, 100))
		if b.Len() == batch || i == n-1 {
			if err := st.Default().Apply(context.Background(), &b); err != nil {
				return err
			}
			b.Reset()
		}
	}
	if !withLog {
		return nil
	}
	log, err := timelog.Open(context.Background(), st, "events", timelog.Options{Maintenance: timelog.Manual})
	if err != nil {
		return err
	}
	recs := make([]timelog.Record, 10_000)
	for i := range recs {
		recs[i] = timelog.Record{Ts: int64(i), Handle: uint64(i)}
	}
	return errors.Join(log.AppendBatch(recs), log.Flush(context.Background()), log.Close())
}

// unit measures one kind in a fresh process: dir must hold what prepare
// made. Each kind is measured with what it needs already open and used
// once, so that its figure is the kind's own: a cursor's is the cursor's on
// a reader connection already open, not the connection's.
func unit(kind, dir string, opts kvstore.Options) (Unit, error) {
	if kind == unitStore {
		return measureOpen(kind, func(i int) (*kvstore.Store, error) { return kvstore.Open(storePath(dir, i), opts) })
	}
	if _, ok := unitNames[kind]; !ok {
		return Unit{}, fmt.Errorf("unknown unit %q", kind)
	}
	// The cost of a reader does not depend on the cap: make room for them
	// all.
	opts.MaxReaders = max(opts.MaxReaders, unitCount+1)
	st, err := kvstore.Open(filepath.Join(dir, "big.db"), opts)
	if err != nil {
		return Unit{}, err
	}
	u, err := readerUnit(kind, st)
	return u, errors.Join(err, st.Close())
}

func readerUnit(kind string, st *kvstore.Store) (Unit, error) {
	ctx := context.Background()
	cf := st.Default()
	k := make([]byte, 16)
	var txs []*kvstore.Tx
	defer func() {
		for _, tx := range txs {
			_ = tx.Rollback()
		}
	}()
	// openReaders opens unitCount read transactions (each on its own
	// reader connection) and reads one key in each.
	openReaders := func() error {
		for i := range unitCount {
			tx, err := st.Begin(ctx, false)
			if err != nil {
				return err
			}
			txs = append(txs, tx)
			key(k, uint64(i))
			if _, err := tx.CF(cf).Get(k); err != nil {
				return err
			}
		}
		return nil
	}
	if kind == unitReader {
		return measure(kind, openReaders)
	}
	if err := openReaders(); err != nil {
		return Unit{}, err
	}
	if kind == unitWarm {
		return measure(kind, func() error {
			for i, tx := range txs {
				for j := range uint64(2000) {
					key(k, splitmix(uint64(i)<<32|j)%unitKeys)
					if _, err := tx.CF(cf).Get(k); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	// The readers go back to the pool, open and idle.
	for _, tx := range txs {
		if err := tx.Rollback(); err != nil {
			return Unit{}, err
		}
	}
	txs = nil
	if kind == unitCursor {
		var curs []*iterator.Cursor
		defer func() {
			for _, c := range curs {
				_ = c.Close()
			}
		}()
		return measure(kind, func() error {
			for i := range unitCount {
				c, err := cf.Cursor(iterator.Options{})
				if err != nil {
					return err
				}
				curs = append(curs, c)
				key(k, uint64(i))
				if !c.Seek(k) && c.Err() != nil {
					return c.Err()
				}
			}
			return nil
		})
	}
	log, err := timelog.Open(context.Background(), st, "events", timelog.Options{Maintenance: timelog.Manual})
	if err != nil {
		return Unit{}, err
	}
	u, err := measureOpen(kind, func(int) (*timelog.Snapshot, error) { return log.Snapshot() })
	return u, errors.Join(err, log.Close())
}

// measureOpen measures the opening of unitCount things of a kind with
// open (given 0, 1, …), and closes them after.
func measureOpen[T io.Closer](kind string, open func(i int) (T, error)) (Unit, error) {
	var opened []T
	u, err := measure(kind, func() error {
		for i := range unitCount {
			x, err := open(i)
			if err != nil {
				return err
			}
			opened = append(opened, x)
		}
		return nil
	})
	for _, x := range opened {
		err = errors.Join(err, x.Close())
	}
	return u, err
}
