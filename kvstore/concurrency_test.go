package kvstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TestConcurrentReadWriteIterate runs writers, point readers, iterators and
// batch checkers at once on one store, a file one and an in-memory one, then
// checks every value.
//
// Writer w owns the keys "w<w>/<i>" and writes round r as the value
// "w<w>/<i>=<r>", rounds only growing; readers check that every value they
// see is well formed for its key and never older than one they saw before.
// A batch writer rewrites the keys "g/<j>" of the column family "gen" in one
// batch per generation; readers in View must see one generation throughout.
func TestConcurrentReadWriteIterate(t *testing.T) {
	for _, kind := range storeKinds() {
		t.Run(kind.name, func(t *testing.T) { testConcurrentReadWriteIterate(t, kind.open) })
	}
}

func testConcurrentReadWriteIterate(t *testing.T, open func(testing.TB, kvstore.Options) *kvstore.Store) {
	ctx := context.Background()
	writers, keysPer, rounds, readers := 4, 50, 30, 4
	if testing.Short() {
		rounds = 9
	}
	const batchKeys = 16
	generations := 4 * rounds
	db := open(t, kvstore.Options{MaxReaders: 6})
	gen, err := db.CreateColumnFamily("gen")
	require.NoError(t, err)
	writeGen := func(g int) error {
		var bt kvstore.Batch
		for j := range batchKeys {
			bt.Put([]byte(fmt.Sprintf("g/%02d", j)), []byte(strconv.Itoa(g)))
		}
		return gen.Apply(ctx, &bt)
	}
	require.NoError(t, writeGen(0))

	parse := func(k, v []byte) (int, error) {
		prefix := string(k) + "="
		if !strings.HasPrefix(string(v), prefix) {
			return 0, fmt.Errorf("key %q holds %q", k, v)
		}
		return strconv.Atoi(string(v[len(prefix):]))
	}

	var done atomic.Bool
	var wgW, wgR sync.WaitGroup
	errc := make(chan error, 64)
	report := func(err error) {
		select {
		case errc <- err:
		default:
		}
	}
	for w := range writers {
		wgW.Add(1)
		go func() {
			defer wgW.Done()
			for r := 1; r <= rounds; r++ {
				var err error
				switch r % 3 {
				case 0: // one Put per key
					for i := range keysPer {
						k := fmt.Sprintf("w%d/%03d", w, i)
						if err = db.Put([]byte(k), []byte(fmt.Sprintf("%s=%d", k, r))); err != nil {
							break
						}
					}
				case 1: // one batch
					var bt kvstore.Batch
					for i := range keysPer {
						k := fmt.Sprintf("w%d/%03d", w, i)
						bt.Put([]byte(k), []byte(fmt.Sprintf("%s=%d", k, r)))
					}
					err = db.Apply(ctx, &bt)
				case 2: // one transaction that reads before it writes
					err = db.Update(ctx, func(tx *kvstore.Tx) error {
						for i := range keysPer {
							k := []byte(fmt.Sprintf("w%d/%03d", w, i))
							if old, err := tx.Get(k); err == nil {
								if n, err := parse(k, old); err != nil || n != r-1 {
									return fmt.Errorf("in tx: %q at round %d: %v", old, r, err)
								}
							} else if !errors.Is(err, kvstore.ErrNotFound) {
								return err
							}
							if err := tx.Put(k, []byte(fmt.Sprintf("%s=%d", k, r))); err != nil {
								return err
							}
						}
						return nil
					})
				}
				if err != nil {
					report(fmt.Errorf("writer %d round %d: %w", w, r, err))
					return
				}
			}
		}()
	}
	wgW.Add(1)
	go func() {
		defer wgW.Done()
		for g := 1; g <= generations; g++ {
			if err := writeGen(g); err != nil {
				report(fmt.Errorf("generation %d: %w", g, err))
				return
			}
		}
	}()

	for rd := range readers {
		wgR.Add(1)
		go func() {
			defer wgR.Done()
			r := rand.New(rand.NewPCG(uint64(rd), 9))
			seen := map[string]int{}
			check := func(k, v []byte) error {
				n, err := parse(k, v)
				if err != nil {
					return err
				}
				if n < seen[string(k)] {
					return fmt.Errorf("key %q went back from round %d to %d", k, seen[string(k)], n)
				}
				seen[string(k)] = n
				return nil
			}
			for i := 0; !done.Load() || i < 3; i++ {
				var err error
				switch i % 4 {
				case 0: // point reads
					for range 10 {
						k := []byte(fmt.Sprintf("w%d/%03d", r.IntN(writers), r.IntN(keysPer)))
						v, gerr := db.Get(k)
						switch {
						case errors.Is(gerr, kvstore.ErrNotFound):
						case gerr != nil:
							err = gerr
						default:
							err = check(k, v)
						}
						if err != nil {
							break
						}
					}
				case 1: // a full scan, in order
					var prev []byte
					for e, ierr := range db.Scan(kvstore.IterOptions{Prefix: []byte(fmt.Sprintf("w%d/", r.IntN(writers))), Reverse: r.IntN(2) == 0}) {
						if ierr != nil {
							err = ierr
							break
						}
						if prev != nil && bytes.Equal(prev, e.Key) {
							err = fmt.Errorf("key %q twice", e.Key)
							break
						}
						prev = e.Key
						if err = check(e.Key, e.Value); err != nil {
							break
						}
					}
				case 2: // one generation in a read transaction
					err = db.View(ctx, func(tx *kvstore.Tx) error {
						g := tx.CF(gen)
						keys := make([][]byte, batchKeys)
						for j := range keys {
							keys[j] = []byte(fmt.Sprintf("g/%02d", j))
						}
						vals, err := g.GetMany(keys)
						if err != nil {
							return err
						}
						for _, e := range collectQuiet(g.All()) {
							vals = append(vals, e.Value)
						}
						if len(vals) != 2*batchKeys {
							return fmt.Errorf("saw %d generation values", len(vals))
						}
						for _, v := range vals {
							if !bytes.Equal(v, vals[0]) {
								return fmt.Errorf("torn batch: %q beside %q", v, vals[0])
							}
						}
						return nil
					})
				case 3: // a cursor walked both ways
					cur, cerr := gen.Cursor(kvstore.IterOptions{Reverse: true})
					if cerr != nil {
						err = cerr
						break
					}
					var first []byte
					for ok := cur.First(); ok; ok = cur.Next() {
						if first == nil {
							first = cur.Value()
						} else if !bytes.Equal(first, cur.Value()) {
							err = fmt.Errorf("torn batch in a cursor: %q beside %q", cur.Value(), first)
							break
						}
					}
					if err == nil {
						err = cur.Err()
					}
					err = errors.Join(err, cur.Close())
				}
				if err != nil {
					report(fmt.Errorf("reader %d: %w", rd, err))
					return
				}
			}
		}()
	}
	wgW.Wait()
	done.Store(true)
	wgR.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if t.Failed() {
		return
	}

	for w := range writers {
		for i := range keysPer {
			k := fmt.Sprintf("w%d/%03d", w, i)
			v, err := db.Get([]byte(k))
			require.NoError(t, err)
			require.Equal(t, fmt.Sprintf("%s=%d", k, rounds), string(v))
		}
	}
	n, err := db.Count()
	require.NoError(t, err)
	require.EqualValues(t, writers*keysPer, n)
	for _, e := range contents(t, gen) {
		require.Equal(t, strconv.Itoa(generations), e.V)
	}
	st, err := db.Stats(ctx)
	require.NoError(t, err)
	require.LessOrEqual(t, st.OpenReaders, 6)
	require.NoError(t, db.IntegrityCheck(ctx))
}

// collectQuiet drains an iteration, keeping the entries up to the first
// error.
func collectQuiet(seq func(func(kvstore.Entry, error) bool)) []kvstore.Entry {
	var out []kvstore.Entry
	for e, err := range seq {
		if err != nil {
			break
		}
		out = append(out, e)
	}
	return out
}

// TestConcurrentIncrements: read-modify-write in Update from many
// goroutines loses no update, on a file store and an in-memory one.
func TestConcurrentIncrements(t *testing.T) {
	for _, kind := range storeKinds() {
		t.Run(kind.name, func(t *testing.T) { testConcurrentIncrements(t, kind.open) })
	}
}

func testConcurrentIncrements(t *testing.T, open func(testing.TB, kvstore.Options) *kvstore.Store) {
	ctx := context.Background()
	db := open(t, kvstore.Options{})
	goroutines, each := 8, 50
	var wg sync.WaitGroup
	errc := make(chan error, goroutines)
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				err := db.Update(ctx, func(tx *kvstore.Tx) error {
					n := 0
					if v, err := tx.Get(b("counter")); err == nil {
						n, _ = strconv.Atoi(string(v))
					} else if !errors.Is(err, kvstore.ErrNotFound) {
						return err
					}
					return tx.Put(b("counter"), []byte(strconv.Itoa(n+1)))
				})
				if err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		require.NoError(t, err)
	}
	v, err := db.Get(b("counter"))
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(goroutines*each), string(v))
}

// TestConcurrentColumnFamilies: goroutines creating, opening and using the
// same and different column families at once, on a file store and an
// in-memory one.
func TestConcurrentColumnFamilies(t *testing.T) {
	for _, kind := range storeKinds() {
		t.Run(kind.name, func(t *testing.T) { testConcurrentColumnFamilies(t, kind.open) })
	}
}

func testConcurrentColumnFamilies(t *testing.T, open func(testing.TB, kvstore.Options) *kvstore.Store) {
	db := open(t, kvstore.Options{})
	var wg sync.WaitGroup
	errc := make(chan error, 16)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, name := range []string{"shared", fmt.Sprintf("own%d", g)} {
				cf, err := db.ColumnFamilyOrCreate(name)
				if err == nil {
					err = cf.Put([]byte(fmt.Sprintf("from%d", g)), []byte(name))
				}
				if err != nil {
					errc <- fmt.Errorf("goroutine %d, %s: %w", g, name, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		require.NoError(t, err)
	}
	names, err := db.ListColumnFamilies()
	require.NoError(t, err)
	require.Len(t, names, 1+1+8)
	shared, err := db.OpenColumnFamily("shared")
	require.NoError(t, err)
	n, err := shared.Count()
	require.NoError(t, err)
	require.EqualValues(t, 8, n)
}

// TestReadersNeverBlockTheWriter: on a file store and on an in-memory one
// alike, an open cursor, a range loop still running and a read transaction
// never make a write wait, and a write transaction never makes a read wait;
// each reader keeps its snapshot. Before in-memory stores were WAL stores
// (SQLite's memdb has no WAL), each write here waited the busy timeout and
// failed with ErrBusy in memory, and the read under the open write
// transaction did too.
func TestReadersNeverBlockTheWriter(t *testing.T) {
	ctx := context.Background()
	inEachKind(t, kvstore.Options{BusyTimeout: 300 * time.Millisecond}, func(t *testing.T, db *kvstore.Store) {
		for i := range 3 {
			require.NoError(t, db.Put(fmt.Appendf(nil, "k%d", i), b("old")))
		}
		quick := func(what string, f func() error) {
			t.Helper()
			start := time.Now()
			require.NoError(t, f(), what)
			require.Less(t, time.Since(start), 200*time.Millisecond, "%s waited", what)
		}

		// A cursor positioned on its first key.
		cur, err := db.Cursor(kvstore.IterOptions{})
		require.NoError(t, err)
		require.True(t, cur.First())
		quick("put beside an open cursor", func() error { return db.Put(b("k0"), b("new")) })
		require.True(t, cur.Next())
		require.Equal(t, "old", string(cur.Value()), "the cursor keeps its snapshot")
		require.NoError(t, cur.Close())

		// Put while iterating.
		n := 0
		for e, err := range db.Prefix(b("k")) {
			require.NoError(t, err)
			quick("put inside a range loop", func() error { return db.Put(append(b("x"), e.Key...), e.Value) })
			n++
		}
		require.Equal(t, 3, n)

		// A read transaction that has read.
		rtx, err := db.Begin(ctx, false)
		require.NoError(t, err)
		v, err := rtx.Get(b("k1"))
		require.NoError(t, err)
		require.Equal(t, "old", string(v))
		quick("update beside a read transaction", func() error {
			return db.Update(ctx, func(tx *kvstore.Tx) error { return tx.Put(b("k1"), b("new")) })
		})
		v, err = rtx.Get(b("k1"))
		require.NoError(t, err)
		require.Equal(t, "old", string(v), "the read transaction keeps its snapshot")
		require.NoError(t, rtx.Rollback())

		// A write transaction that has written and not committed.
		wtx, err := db.Begin(ctx, true)
		require.NoError(t, err)
		require.NoError(t, wtx.Put(b("k2"), b("new")))
		quick("get beside a write transaction", func() error {
			v, err := db.Get(b("k2"))
			if err == nil && string(v) != "old" {
				err = fmt.Errorf("read %q before the commit", v)
			}
			return err
		})
		quick("scan beside a write transaction", func() error {
			_, err := db.Count()
			return err
		})
		require.NoError(t, wtx.Commit())
		v, err = db.Get(b("k2"))
		require.NoError(t, err)
		require.Equal(t, "new", string(v))
	})
}
