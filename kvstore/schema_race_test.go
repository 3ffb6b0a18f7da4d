package kvstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// raceFor is how long the schema-race tests run their goroutines.
func raceFor(t *testing.T) time.Duration {
	if testing.Short() {
		return 1500 * time.Millisecond
	}
	return 6 * time.Second
}

// ColumnFamilyOrCreate racing DropColumnFamily on the same names must
// always return a handle: the race itself is never an error. A handle whose
// column family was dropped after it was returned reports ErrNotFound.
func TestColumnFamilyOrCreateRacesDrop(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	names := []string{"tmp0", "tmp1", "tmp2"}
	deadline := time.Now().Add(raceFor(t))
	var wg sync.WaitGroup
	var opened, used atomic.Int64
	errs := make(chan error, 100)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				name := names[(g+i)%len(names)]
				cf, err := db.ColumnFamilyOrCreate(name)
				if err != nil {
					errs <- fmt.Errorf("ColumnFamilyOrCreate(%q): %w", name, err)
					return
				}
				opened.Add(1)
				err = cf.Put(b("k"), b("v"))
				switch {
				case err == nil:
					used.Add(1)
				case !errors.Is(err, kvstore.ErrNotFound): // dropped since: documented
					errs <- fmt.Errorf("Put on a fresh handle of %q: %w", name, err)
					return
				}
			}
		}()
	}
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				err := db.DropColumnFamily(names[(g+i)%len(names)])
				if err != nil && !errors.Is(err, kvstore.ErrNotFound) {
					errs <- fmt.Errorf("DropColumnFamily: %w", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	require.Positive(t, opened.Load())
	require.Positive(t, used.Load())
}

// PurgeExpiredAll, run while other goroutines put with and without TTL
// and create and drop column families, either works or fails with a
// documented sentinel: never with SQLite's "schema has changed".
func TestPurgeExpiredAllDuringSchemaChanges(t *testing.T) {
	clock := kvstore.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	db := openTemp(t, kvstore.Options{Clock: clock})
	ctx := context.Background()
	deadline := time.Now().Add(raceFor(t))
	var wg sync.WaitGroup
	var purges atomic.Int64
	errs := make(chan error, 100)
	run := func(what string, fn func(i int) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				if err := fn(i); err != nil {
					errs <- fmt.Errorf("%s: %w", what, err)
					return
				}
			}
		}()
	}
	// The default column family gets no TTL state: a purge of it asks
	// SQLite for a table that does not exist while the schema changes.
	ttlCF, err := db.CreateColumnFamily("ttl")
	require.NoError(t, err)
	run("put", func(i int) error {
		k := fmt.Appendf(nil, "k%d", i%500)
		if i%2 == 0 {
			return ttlCF.PutTTL(k, k, time.Millisecond)
		}
		return db.Put(k, k)
	})
	run("clock", func(int) error { clock.Advance(time.Millisecond); return nil })
	for range 2 {
		run("purge", func(int) error {
			_, err := db.PurgeExpiredAll(ctx)
			purges.Add(1)
			return err
		})
	}
	run("schema", func(i int) error {
		name := fmt.Sprintf("tmp%d", i%3)
		cf, err := db.ColumnFamilyOrCreate(name)
		if err != nil {
			return err
		}
		if err := cf.PutTTL(b("k"), b("v"), time.Millisecond); err != nil && !errors.Is(err, kvstore.ErrNotFound) {
			return err
		}
		if err := db.DropColumnFamily(name); err != nil && !errors.Is(err, kvstore.ErrNotFound) {
			return err
		}
		return nil
	})
	run("purge cf", func(i int) error {
		cf, err := db.OpenColumnFamily(fmt.Sprintf("tmp%d", i%3))
		if errors.Is(err, kvstore.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := cf.PurgeExpired(ctx); err != nil && !errors.Is(err, kvstore.ErrNotFound) {
			return err
		}
		return nil
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	require.Positive(t, purges.Load())
}
