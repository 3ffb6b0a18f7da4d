package kvstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TestHeldReadsOfDeepTreeSeeEveryCommit reads a tree of three levels with
// Get and Exists, on held read transactions (whose point reads keep the
// tree's interior pages from one read to the next below SQL) and in
// read-only transactions, while another process and this one commit puts,
// overwrites and deletes in between, some rows on overflow pages (which a
// held read leaves to the cursor): every read agrees with a model of the
// commits completed before it, and the store's WAL can then be copied and
// reset (no page held past a transaction's end keeps a read lock).
func TestHeldReadsOfDeepTreeSeeEveryCommit(t *testing.T) {
	path := tempPath(t)
	db := openAt(t, path, kvstore.Options{ReadHold: time.Hour})
	ctx := context.Background()
	key := func(i int) []byte { return fmt.Appendf(nil, "key/%08d", i) }
	const n = 20_000
	model := map[string]string{}
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		for i := range n {
			v := fmt.Sprintf("v%0100d", i)
			if i%50 == 0 {
				v = fmt.Sprintf("v%05000d", i) // a row on overflow pages
			}
			model[string(key(i))] = v
			if err := tx.Put(key(i), []byte(v)); err != nil {
				return err
			}
		}
		return nil
	}))
	child := startHoldChild(t, path)
	rng := rand.New(rand.NewPCG(36, 11))
	check := func(round int, get func([]byte) ([]byte, error), exists func([]byte) (bool, error)) {
		t.Helper()
		for range 300 {
			k := key(rng.IntN(n + n/10)) // some never written
			want, ok := model[string(k)]
			v, err := get(k)
			if ok {
				require.NoError(t, err, "round %d: %s", round, k)
				require.Equal(t, want, string(v), "round %d: %s", round, k)
			} else {
				require.ErrorIs(t, err, kvstore.ErrNotFound, "round %d: %s", round, k)
			}
			found, err := exists(k)
			require.NoError(t, err)
			require.Equal(t, ok, found, "round %d: Exists %s", round, k)
		}
	}
	rounds := 30
	if testing.Short() {
		rounds = 10
	}
	for round := range rounds {
		check(round, db.Get, db.Exists)
		switch round % 3 {
		case 0: // the other process overwrites a key and writes a new one
			i := rng.IntN(n)
			v := fmt.Sprintf("c%d", round)
			child.do(fmt.Sprintf("put %s %s", key(i), v))
			model[string(key(i))] = v
			j := n + rng.IntN(n/10)
			child.do(fmt.Sprintf("put %s %s", key(j), v))
			model[string(key(j))] = v
		case 1: // this one deletes and overwrites keys
			require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
				for range 200 {
					k := key(rng.IntN(n))
					if rng.IntN(2) == 0 {
						delete(model, string(k))
						if err := tx.Delete(k); err != nil && !errors.Is(err, kvstore.ErrNotFound) {
							return err
						}
						continue
					}
					v := fmt.Sprintf("m%d", round)
					model[string(k)] = v
					if err := tx.Put(k, []byte(v)); err != nil {
						return err
					}
				}
				return nil
			}))
		}
		require.NoError(t, db.View(ctx, func(tx *kvstore.Tx) error {
			check(round, tx.Get, tx.Exists)
			return nil
		}))
	}
	require.Positive(t, heldReads(t, db), "no read reused a held transaction: the test proves nothing")
	// A pass of either process's background checkpointer may make one
	// attempt busy; a read lock left behind would make every one.
	require.Eventually(t, func() bool {
		res, err := db.Checkpoint(ctx, kvstore.CheckpointTruncate)
		require.NoError(t, err)
		return !res.Busy
	}, 10*time.Second, 10*time.Millisecond, "a read lock outlived its transaction")
}
