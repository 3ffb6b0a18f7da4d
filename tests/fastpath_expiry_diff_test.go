package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TestFastPathExpiryCopyMatchesSQL runs one random sequence of TTL writes
// (PutTTL, Put, Expire, Persist, Delete, purges) on two stores, one with
// the B-tree fast path, which keeps each data row's expiry copy, and one
// with every write as an SQL statement, which keeps none; after every
// round every key must read the same (value, TTL, existence) from both,
// with the reads of the fast store going below SQL through the copies, and
// at the end the tables must be identical but for the copy column, every
// copy equal to its key index row (CheckIntegrity).
func TestFastPathExpiryCopyMatchesSQL(t *testing.T) {
	fastPathOn(t)
	ctx := context.Background()
	dir := t.TempDir()
	fast, slow, clk := fastAndSQLStores(t, dir)
	rng := rand.New(rand.NewPCG(34, 3))
	const nKeys = 300
	key := func(i int) []byte { return fmt.Appendf(nil, "k%04d", i) }
	for round := range 40 {
		type op struct {
			kind int
			k    []byte
			v    []byte
			d    time.Duration
		}
		ops := make([]op, 1+rng.IntN(60))
		for i := range ops {
			ops[i] = op{kind: rng.IntN(6), k: key(rng.IntN(nKeys)), v: fmt.Appendf(nil, "v%d", rng.Uint64()),
				d: time.Duration(1+rng.IntN(120)) * time.Second}
		}
		for _, db := range []*kvstore.Store{fast, slow} {
			engine.SetFastPath(db == fast)
			require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
				for _, o := range ops {
					var err error
					switch o.kind {
					case 0, 1:
						err = tx.PutTTL(o.k, o.v, o.d)
					case 2:
						err = tx.Put(o.k, o.v)
					case 3:
						err = tx.Expire(o.k, o.d)
					case 4:
						err = tx.Persist(o.k)
					case 5:
						err = tx.Delete(o.k)
					}
					if err != nil && err != kvstore.ErrNotFound {
						return err
					}
				}
				return nil
			}))
			if round%5 == 4 {
				_, err := db.PurgeExpiredN(ctx, 40)
				require.NoError(t, err)
			}
		}
		engine.SetFastPath(true)
		reads := engine.FastReads()
		for i := range nKeys {
			vf, df, ef := fast.GetTTL(key(i))
			engine.SetFastPath(false)
			vs, ds, es := slow.GetTTL(key(i))
			engine.SetFastPath(true)
			require.Equal(t, es, ef, "round %d key %d", round, i)
			require.Equal(t, string(vs), string(vf), "round %d key %d", round, i)
			require.Equal(t, ds, df, "round %d key %d", round, i)
			xf, err := fast.Exists(key(i))
			require.NoError(t, err)
			require.Equal(t, ef == nil, xf, "round %d key %d", round, i)
		}
		require.Greater(t, engine.FastReads(), reads, "the fast store's reads went below SQL")
		// A scan of each, forward and backward: the same live keys.
		scan := func(db *kvstore.Store, fastOn, reverse bool) []string {
			engine.SetFastPath(fastOn)
			defer engine.SetFastPath(true)
			var out []string
			for e, err := range db.Scan(kvstore.IterOptions{Reverse: reverse}) {
				require.NoError(t, err)
				out = append(out, string(e.Key)+"="+string(e.Value))
			}
			return out
		}
		for _, reverse := range []bool{false, true} {
			require.Equal(t, scan(slow, false, reverse), scan(fast, true, reverse), "round %d", round)
		}
		clk.Advance(time.Duration(rng.IntN(40)) * time.Second)
	}
	// Expire and Persist of a key with a copy go below SQL.
	require.NoError(t, fast.PutTTL([]byte("x"), []byte("v"), time.Minute))
	writes := engine.FastWrites()
	require.NoError(t, fast.Expire([]byte("x"), time.Hour))
	require.NoError(t, fast.Persist([]byte("x")))
	require.Equal(t, writes+2, engine.FastWrites())
	require.NoError(t, slow.PutTTL([]byte("x"), []byte("v"), time.Minute))
	require.NoError(t, slow.Expire([]byte("x"), time.Hour))
	require.NoError(t, slow.Persist([]byte("x")))
	closeClean(t, fast, slow)
	for _, table := range []string{"default", "__snkv_ttl_k__default", "__snkv_ttl_e__default"} {
		require.Equal(t, dumpTable(t, filepath.Join(dir, "sql.db"), table), dumpTable(t, filepath.Join(dir, "fast.db"), table), table)
	}
}
