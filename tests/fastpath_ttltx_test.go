package tests

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// errRollBack ends a round's transaction with a rollback.
var errRollBack = errors.New("roll back")

// TestFastPathTTLWritesInOneTxMatchSQL runs, inside one Update, random
// interleavings of TTL writes (PutTTL, PutExpireAt, PutIfAbsentTTL, Put,
// Expire, Persist, Delete) with every kind of read of the same keys in
// the same transaction (Get, GetTTL, TTL, Exists, GetMany, scans, a
// cursor, Count, CheckTTL, a purge), over two column families, with the
// clock moved inside the transaction (so that an index row not yet
// written would read as an old, expired TTL) and values that spill to
// overflow pages (whose reads take the key index, not the data row's
// expiry copy), on a store with the fast path and one with every write
// as SQL. Every read inside the transaction must answer the same on both,
// some transactions roll back, and after every round and at the end both
// stores must hold the same keys and tables. It catches a fast-path TTL
// write whose index rows a later read of the same transaction does not
// see.
func TestFastPathTTLWritesInOneTxMatchSQL(t *testing.T) {
	fastPathOn(t)
	ctx := context.Background()
	dir := t.TempDir()
	fast, slow, clk := fastAndSQLStores(t, dir)
	open := func(db *kvstore.Store) *kvstore.ColumnFamily {
		cf, err := db.ColumnFamilyOrCreate("b")
		require.NoError(t, err)
		return cf
	}
	cfs := map[*kvstore.Store][2]*kvstore.ColumnFamily{
		fast: {fast.Default(), open(fast)},
		slow: {slow.Default(), open(slow)},
	}
	rng := rand.New(rand.NewPCG(34, 9))
	const nKeys = 60
	key := func(i int) []byte { return fmt.Appendf(nil, "k%04d", i) }
	rounds := shortOr(60, 20)
	for round := range rounds {
		type op struct {
			kind, cf int
			k        []byte
			v        []byte
			d        time.Duration
			keys     [][]byte
		}
		ops := make([]op, 1+rng.IntN(300))
		for i := range ops {
			o := op{kind: rng.IntN(28), cf: rng.IntN(2), k: key(rng.IntN(nKeys)),
				d: time.Duration(1+rng.IntN(60)) * time.Second}
			if o.kind >= 20 {
				// More writes, on a few hot keys, so that writes of one
				// key often follow each other with no read between.
				o.kind = [...]int{0, 6, 9, 7, 8, 4, 6, 0}[o.kind-20]
				o.k = key(rng.IntN(6))
			}
			if rng.IntN(8) == 0 {
				o.v = []byte(strings.Repeat(fmt.Sprintf("%x", rng.Uint64()), 400)) // overflow pages
			} else {
				o.v = fmt.Appendf(nil, "v%d", rng.Uint64())
			}
			for range 1 + rng.IntN(4) {
				o.keys = append(o.keys, key(rng.IntN(nKeys)))
			}
			ops[i] = o
		}
		rollBack := rng.IntN(6) == 0
		start := clk.Now()
		run := func(db *kvstore.Store) []string {
			engine.SetFastPath(db == fast)
			defer engine.SetFastPath(true)
			clk.Set(start)
			var got []string
			note := func(format string, args ...any) { got = append(got, fmt.Sprintf(format, args...)) }
			err := db.Update(ctx, func(tx *kvstore.Tx) error {
				for n, o := range ops {
					h := tx.CF(cfs[db][o.cf])
					var err error
					switch o.kind {
					case 0, 1, 2, 3:
						err = h.PutTTL(o.k, o.v, o.d)
					case 4:
						err = h.PutExpireAt(o.k, o.v, clk.Now().Add(o.d))
					case 5:
						var ok bool
						ok, err = h.PutIfAbsentTTL(o.k, o.v, o.d)
						note("%d ifabsent %v", n, ok)
					case 6:
						err = h.Put(o.k, o.v)
					case 7:
						err = h.Expire(o.k, o.d)
					case 8:
						err = h.Persist(o.k)
					case 9:
						err = h.Delete(o.k)
					case 10:
						v, err2 := h.Get(o.k)
						note("%d get %d %v", n, len(v), err2)
					case 11:
						v, d, err2 := h.GetTTL(o.k)
						note("%d getttl %d %v %v", n, len(v), d, err2)
					case 12:
						d, err2 := h.TTL(o.k)
						note("%d ttl %v %v", n, d, err2)
					case 13:
						ok, err2 := h.Exists(o.k)
						note("%d exists %v %v", n, ok, err2)
					case 14:
						vs, err2 := h.GetMany(o.keys)
						for _, v := range vs {
							note("%d many %d", n, len(v))
						}
						note("%d many %v", n, err2)
					case 15:
						for e, err2 := range h.Scan(kvstore.IterOptions{Reverse: rng.IntN(2) == 0}) {
							note("%d scan %s %d %v", n, e.Key, len(e.Value), err2)
						}
					case 16:
						c, err2 := h.Count()
						note("%d count %d %v", n, c, err2)
					case 17:
						p, err2 := h.PurgeExpiredN(ctx, 1+rng.IntN(20))
						note("%d purge %d %v", n, p, err2)
					case 18:
						problems, err2 := h.CheckTTL(ctx)
						note("%d check %v %v", n, problems, err2)
					case 19:
						clk.Advance(o.d / 2)
					}
					if err != nil && !errors.Is(err, kvstore.ErrNotFound) {
						return err
					}
					note("%d %d %v", n, o.kind, err)
				}
				if rollBack {
					return errRollBack
				}
				return nil
			})
			if !rollBack || !errors.Is(err, errRollBack) {
				require.NoError(t, err, "round %d", round)
			}
			return got
		}
		// The scans above draw from rng: give both runs the same draws.
		seed := rng.Uint64()
		rng = rand.New(rand.NewPCG(seed, 1))
		want := run(slow)
		rng = rand.New(rand.NewPCG(seed, 1))
		got := run(fast)
		for i := range min(len(want), len(got)) {
			require.Equal(t, want[i], got[i], "round %d, answer %d", round, i)
		}
		require.Len(t, got, len(want), "round %d", round)
		for c := range 2 {
			for i := range nKeys {
				engine.SetFastPath(false)
				vs, ds, es := cfs[slow][c].GetTTL(key(i))
				engine.SetFastPath(true)
				vf, df, ef := cfs[fast][c].GetTTL(key(i))
				require.Equal(t, es, ef, "round %d cf %d key %d", round, c, i)
				require.Equal(t, string(vs), string(vf), "round %d cf %d key %d", round, c, i)
				require.Equal(t, ds, df, "round %d cf %d key %d", round, c, i)
			}
		}
		clk.Advance(time.Duration(rng.IntN(30)) * time.Second)
	}
	closeClean(t, fast, slow)
	for _, table := range []string{"default", "__snkv_ttl_k__default", "__snkv_ttl_e__default", "b", "__snkv_ttl_k__b", "__snkv_ttl_e__b"} {
		require.Equal(t, dumpTable(t, filepath.Join(dir, "sql.db"), table), dumpTable(t, filepath.Join(dir, "fast.db"), table), table)
	}
}

// TestFastPathTTLRefreshThenReadInOneTx refreshes, inside one Update, the
// TTL of keys whose old TTL has passed, with values that lie whole on
// their page and values on overflow pages (whose Exists reads the key
// index, not the expiry copy), then reads them in the same transaction:
// every read must see the new TTL, and the tables must be right after.
func TestFastPathTTLRefreshThenReadInOneTx(t *testing.T) {
	fastPathOn(t)
	ctx := context.Background()
	dir := t.TempDir()
	db, _, clk := fastAndSQLStores(t, dir)
	big := []byte(strings.Repeat("x", 9000))
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c"), []byte("d")}
	value := func(i int) []byte {
		if i%2 == 0 {
			return big
		}
		return []byte("small")
	}
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		for i, k := range keys {
			if err := tx.PutTTL(k, value(i), 10*time.Second); err != nil {
				return err
			}
		}
		return nil
	}))
	clk.Advance(20 * time.Second)
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		for i, k := range keys {
			if err := tx.PutTTL(k, value(i), time.Hour); err != nil {
				return err
			}
		}
		for i, k := range keys {
			ok, err := tx.Exists(k)
			require.NoError(t, err)
			require.True(t, ok, "key %s", k)
			v, d, err := tx.GetTTL(k)
			require.NoError(t, err)
			require.Equal(t, value(i), v)
			require.Equal(t, time.Hour, d)
		}
		n, err := tx.PurgeExpired(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
		problems, err := tx.CheckTTL(ctx)
		require.NoError(t, err)
		require.Empty(t, problems)
		return nil
	}))
	for _, k := range keys {
		d, err := db.TTL(k)
		require.NoError(t, err)
		require.Equal(t, time.Hour, d)
	}
	closeClean(t, db)
}
