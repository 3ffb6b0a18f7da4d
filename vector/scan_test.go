package vector_test

import (
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/stretchr/testify/require"
)

// scanAll collects what w.Scan(opts) yields.
func scanAll(t *testing.T, w *vector.Tx, opts kvstore.IterOptions) []vector.Entry {
	t.Helper()
	var out []vector.Entry
	for e, err := range w.Scan(opts) {
		require.NoError(t, err)
		out = append(out, e)
	}
	return out
}

func entryKeys(es []vector.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = string(e.Key)
	}
	return out
}

// Scan yields every live vector of the snapshot in key order, with its
// value, metadata and expiry, and skips expired and deleted ones; in a
// write transaction it sees the transaction's own writes.
func TestScanYieldsLiveEntriesInKeyOrder(t *testing.T) {
	clk := kvstore.NewManualClock(epoch)
	db, _ := tempStore(t, kvstore.Options{Clock: clk})
	ix := openIndex(t, db, "v", vector.Options{Dim: 3, Metric: vector.Cosine})
	// More vectors than one block holds at 3 dimensions, out of key order.
	want := map[string][]float32{}
	var items []vector.Item
	for i := 2999; i >= 0; i-- {
		k := key(i)
		v := []float32{float32(i) + 1, float32(i % 7), 1}
		items = append(items, vector.Item{Key: k, Vector: v})
		want[string(k)] = v
	}
	require.NoError(t, ix.PutBatch(ctx, items))
	require.NoError(t, ix.Put(ctx, []byte("m"), []float32{1, 2, 3}, vector.Put{
		Value: []byte("val"), Meta: map[string]string{"lang": "en"}, ExpireAt: epoch.Add(time.Hour)}))
	require.NoError(t, ix.Put(ctx, []byte("short"), []float32{3, 2, 1}, vector.Put{TTL: time.Minute}))
	require.NoError(t, ix.Delete(ctx, key(5)))
	delete(want, string(key(5)))
	clk.Advance(time.Minute)

	require.NoError(t, db.View(ctx, func(tx *kvstore.Tx) error {
		all := scanAll(t, ix.In(tx), kvstore.IterOptions{})
		require.Len(t, all, len(want)+1, "the deleted and the expired vectors are not yielded")
		for i := 1; i < len(all); i++ {
			require.Less(t, string(all[i-1].Key), string(all[i].Key), "key order")
		}
		for _, e := range all {
			if string(e.Key) == "m" {
				require.Equal(t, []float32{1, 2, 3}, e.Vector)
				require.Equal(t, []byte("val"), e.Value)
				require.Equal(t, map[string]string{"lang": "en"}, e.Meta)
				require.Equal(t, epoch.Add(time.Hour), e.ExpireAt.UTC())
				continue
			}
			require.Equal(t, want[string(e.Key)], e.Vector, "key %x", e.Key)
			require.True(t, e.ExpireAt.IsZero())
		}
		sel := scanAll(t, ix.In(tx), kvstore.IterOptions{Prefix: key(0)[:3], Reverse: true})
		require.Len(t, sel, 255, "k 00 00 00..ff without 05")
		require.Equal(t, string(key(255)), string(sel[0].Key))
		return nil
	}))

	// A write transaction sees its own put and delete; another snapshot
	// does not.
	tx, err := db.Begin(ctx, true)
	require.NoError(t, err)
	defer tx.Rollback()
	w := ix.In(tx)
	require.NoError(t, w.Put([]byte("l"), []float32{0, 0, 1}, vector.Put{}))
	require.NoError(t, w.Delete([]byte("m")))
	got := entryKeys(scanAll(t, w, kvstore.IterOptions{Start: []byte("l"), End: []byte("n")}))
	require.Equal(t, []string{"l"}, got)
	require.NoError(t, db.View(ctx, func(rtx *kvstore.Tx) error {
		got := entryKeys(scanAll(t, ix.In(rtx), kvstore.IterOptions{Start: []byte("l"), End: []byte("n")}))
		require.Equal(t, []string{"m"}, got)
		return nil
	}))
}

// Scan of a closed index fails with ErrClosed.
func TestScanClosed(t *testing.T) {
	db, _ := tempStore(t, kvstore.Options{})
	ix := openIndex(t, db, "v", vector.Options{Dim: 2})
	require.NoError(t, ix.Close())
	require.NoError(t, db.View(ctx, func(tx *kvstore.Tx) error {
		for _, err := range ix.In(tx).Scan(kvstore.IterOptions{}) {
			require.ErrorIs(t, err, vector.ErrClosed)
		}
		return nil
	}))
}
