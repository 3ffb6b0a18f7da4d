package kvstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// conversionSteps are the conversions the snapshot tests run, in a cycle
// that starts from a store in the clear.
var conversionSteps = []struct {
	name string
	run  func(s *kvstore.Store) error
}{
	{"encrypt", func(s *kvstore.Store) error { return s.Encrypt(context.Background(), *rawKey(1)) }},
	{"re-key", func(s *kvstore.Store) error { return s.Rekey(context.Background(), *pw("second")) }},
	{"re-key again", func(s *kvstore.Store) error { return s.Rekey(context.Background(), *rawKey(3)) }},
	{"remove encryption", func(s *kvstore.Store) error { return s.RemoveEncryption(context.Background()) }},
}

// numbered fills the default column family with n values "value i".
func numbered(t *testing.T, s *kvstore.Store, n int) {
	t.Helper()
	require.NoError(t, s.Update(context.Background(), func(tx *kvstore.Tx) error {
		for i := range n {
			if err := tx.Put(fmt.Appendf(nil, "k%04d", i), fmt.Appendf(nil, "value %d", i)); err != nil {
				return err
			}
		}
		return nil
	}))
}

// A cursor and a View opened before a conversion read, after it, the rows
// of their snapshot with their snapshot's keys: no ErrAuth (the keys
// changed), no ErrCorrupt (a sealed row read as one in the clear).
func TestSnapshotsReadAcrossConversions(t *testing.T) {
	skipSealedSuite(t)
	const n = 600
	for k, step := range conversionSteps {
		t.Run(step.name, func(t *testing.T) {
			s := openTemp(t, kvstore.Options{UpgradeBatch: 100, BusyTimeout: 50 * time.Millisecond})
			numbered(t, s, n)
			for _, before := range conversionSteps[:k] {
				require.NoError(t, before.run(s))
			}
			cur, err := s.Default().Cursor(kvstore.IterOptions{})
			require.NoError(t, err)
			defer cur.Close()
			require.True(t, cur.First())
			view, err := s.Begin(context.Background(), false)
			require.NoError(t, err)
			defer view.Rollback()
			v, err := view.Get([]byte("k0000"))
			require.NoError(t, err)
			require.Equal(t, "value 0", string(v))

			err = step.run(s)
			if !errors.Is(err, kvstore.ErrScrubPending) {
				require.NoError(t, err) // the cursor and View hold the scrub up
			}

			i := 0
			for ; cur.Valid(); cur.Next() {
				require.Equal(t, fmt.Sprintf("k%04d", i), string(cur.Key()))
				require.Equal(t, fmt.Sprintf("value %d", i), string(cur.Value()))
				i++
			}
			require.NoError(t, cur.Err())
			require.Equal(t, n, i)
			for _, k := range []int{1, n / 2, n - 1} {
				v, err := view.Get(fmt.Appendf(nil, "k%04d", k))
				require.NoError(t, err)
				require.Equal(t, fmt.Sprintf("value %d", k), string(v))
			}
			vs, err := view.GetMany([][]byte{[]byte("k0002"), []byte("k0003")})
			require.NoError(t, err)
			require.Equal(t, "value 3", string(vs[1]))
			j := 0
			for e, err := range view.Scan(kvstore.IterOptions{Borrow: true}) {
				require.NoError(t, err)
				require.Equal(t, fmt.Sprintf("value %d", j), string(e.Value))
				j++
			}
			require.Equal(t, n, j)
			require.NoError(t, cur.Close())
			require.NoError(t, view.Rollback())
			require.NoError(t, s.FinishConversion(context.Background()))
			require.Len(t, contents(t, s.Default()), n)
		})
	}
}

// Reads that run while conversions start and end never fail: six
// goroutines of Get and GetMany through cycles of Encrypt, Rekey and
// RemoveEncryption.
func TestReadsDuringConversions(t *testing.T) {
	skipSealedSuite(t)
	const n = 400
	cycles := 6
	if testing.Short() {
		cycles = 2
	}
	s := openTemp(t, kvstore.Options{UpgradeBatch: 40, BusyTimeout: 20 * time.Millisecond})
	numbered(t, s, n)
	readers := testutil.NewLoops()
	var reads atomic.Int64
	var firstErr atomic.Pointer[error]
	fail := func(err error) { firstErr.CompareAndSwap(nil, &err) }
	for g := range 6 {
		rng := rand.New(rand.NewPCG(uint64(g), 29))
		readers.Go(func(int) bool {
			i := rng.IntN(n)
			if g%2 == 0 {
				v, err := s.Get(fmt.Appendf(nil, "k%04d", i))
				if err != nil || string(v) != fmt.Sprintf("value %d", i) {
					fail(fmt.Errorf("get k%04d: %q, %w", i, v, err))
				}
			} else {
				vs, err := s.GetMany([][]byte{fmt.Appendf(nil, "k%04d", i), fmt.Appendf(nil, "k%04d", (i+7)%n)})
				if err != nil || string(vs[0]) != fmt.Sprintf("value %d", i) {
					fail(fmt.Errorf("get many k%04d: %w", i, err))
				}
			}
			reads.Add(1)
			return true
		})
	}
	for range cycles {
		for _, step := range conversionSteps {
			if err := step.run(s); err != nil && !errors.Is(err, kvstore.ErrScrubPending) {
				t.Errorf("%s: %v", step.name, err)
			}
		}
	}
	readers.Stop()
	if p := firstErr.Load(); p != nil {
		t.Fatalf("a read failed during the conversions (%d reads): %v", reads.Load(), *p)
	}
	t.Logf("%d reads during %d conversions", reads.Load(), cycles*len(conversionSteps))
}

// A cursor opened on a hidden table before SealHiddenTable reads the
// values of its snapshot, in the clear, after it.
func TestSnapshotReadsAcrossSealHiddenTable(t *testing.T) {
	s := openTemp(t, kvstore.Options{Encryption: rawKey(6), UpgradeBatch: 3, BusyTimeout: 50 * time.Millisecond})
	h := createHidden(t, s, "layer", "old")
	for i := range 20 {
		require.NoError(t, h.Put(fmt.Appendf(nil, "k%02d", i), fmt.Appendf(nil, "in the clear %d", i)))
	}
	cur, err := h.Cursor(kvstore.IterOptions{})
	require.NoError(t, err)
	defer cur.Close()
	require.True(t, cur.First())
	require.NoError(t, layer.SealHiddenTable(context.Background(), s, "layer", "old"))
	i := 0
	for ; cur.Valid(); cur.Next() {
		require.Equal(t, fmt.Sprintf("in the clear %d", i), string(cur.Value()))
		i++
	}
	require.NoError(t, cur.Err())
	require.Equal(t, 20, i)
}
