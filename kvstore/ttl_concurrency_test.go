package kvstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TTL state under concurrency: goroutines writing, reading and purging at
// once, and two stores on one file as two processes would have them.

// Concurrent TTL writers, readers and purgers leave the tables in step.
func TestTTLConcurrentPurgeAndWrites(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "c")
	rounds := 200
	if testing.Short() {
		rounds = 40
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	report := func(err error) {
		if err != nil && !errors.Is(err, kvstore.ErrNotFound) {
			select {
			case errs <- err:
			default:
			}
		}
	}
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				key := fmt.Appendf(nil, "w%d-%03d", w, i%50)
				switch i % 5 {
				case 0, 1:
					report(cf.PutTTL(key, []byte("v"), time.Duration(1+i%3)*time.Second))
				case 2:
					report(cf.Put(key, []byte("v")))
				case 3:
					report(cf.Expire(key, time.Second))
				case 4:
					report(cf.Persist(key))
				}
				f.clk.Advance(100 * time.Millisecond)
			}
		}()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range rounds {
			_, err := cf.PurgeExpired(ctx)
			report(err)
		}
	}()
	go func() {
		defer wg.Done()
		for i := range rounds {
			_, err := cf.Get(fmt.Appendf(nil, "w%d-%03d", i%2, i%50))
			report(err)
			for _, err := range cf.All() {
				report(err)
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	f.check(t)
	probs, err := cf.CheckTTL(ctx)
	require.NoError(t, err)
	require.Empty(t, probs)
}

// Two stores on one file (as two processes would have): TTL state that one
// creates is honoured by the other, whose handles were opened before.
func TestTTLSharedFileTwoStores(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cfB := f.cf(t, "c")
	require.NoError(t, cfB.Put([]byte("perm"), []byte("p")))
	require.False(t, cfB.HasTTL())

	other, err := kvstore.Open(f.path, kvstore.Options{Clock: f.clk})
	require.NoError(t, err)
	defer other.Close()
	cfA, err := other.OpenColumnFamily("c")
	require.NoError(t, err)
	for _, k := range []string{"a", "b", "d", "e", "f"} {
		require.NoError(t, cfA.PutTTL([]byte(k), []byte("old"), time.Second))
	}
	f.clk.Advance(time.Second)

	ttlGone(t, cfB, "a")
	require.Equal(t, [3]int64{0, 0, 0}, ttlKeyRows(t, f.path, "c", "a"))
	wrote, err := cfB.PutIfAbsent([]byte("b"), []byte("new"))
	require.NoError(t, err)
	require.True(t, wrote, "an expired key counts as absent")
	ttlGet(t, cfB, "b", "new")
	ttlHas(t, cfB, "b", kvstore.NoTTL)
	require.Equal(t, [3]int64{1, 0, 0}, ttlKeyRows(t, f.path, "c", "b"))
	require.ErrorIs(t, cfB.Delete([]byte("d")), kvstore.ErrNotFound, "an expired key counts as missing")
	require.ErrorIs(t, cfB.Expire([]byte("e"), time.Minute), kvstore.ErrNotFound)
	require.Equal(t, [3]int64{0, 0, 0}, ttlKeyRows(t, f.path, "c", "e"))
	n, err := cfB.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n) // f
	require.True(t, cfB.HasTTL())
	require.NoError(t, f.db.IntegrityCheck(ctx))
	require.NoError(t, other.IntegrityCheck(ctx))
}

// A column family another store (another process) dropped and recreated
// without TTL tables, in the same millisecond of the store's clock: the
// handle to the dropped one fails with ErrNotFound instead of writing into
// the new one, and a fresh handle's TTL writes recreate the TTL tables and
// its purge finds what expired, instead of failing on tables that no
// longer exist.
func TestTTLColumnFamilyRecreatedElsewhere(t *testing.T) {
	f := newTTLFixture(t)
	stale := f.cf(t, "x")
	require.NoError(t, stale.PutTTL([]byte("k"), []byte("v"), time.Second))
	require.True(t, stale.HasTTL())

	f.elsewhere(t, func(other *kvstore.Store) error {
		if err := other.DropColumnFamily("x"); err != nil {
			return err
		}
		_, err := other.CreateColumnFamily("x")
		return err
	})

	require.ErrorIs(t, stale.PutTTL([]byte("k2"), []byte("v2"), time.Second), kvstore.ErrNotFound,
		"a handle to the dropped column family writes into the new one")
	_, err := stale.PurgeExpired(context.Background())
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	cf, err := f.db.OpenColumnFamily("x")
	require.NoError(t, err)
	ttlPurge(t, cf, 0)
	require.NoError(t, cf.PutTTL([]byte("k2"), []byte("v2"), time.Second))
	ttlHas(t, cf, "k2", time.Second)
	f.clk.Advance(2 * time.Second)
	ttlPurge(t, cf, 1)
}
