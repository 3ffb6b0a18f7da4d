package kvstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TestScanForms checks what each iteration form hands out: copies that
// belong to the caller (appending to one never touches another), carved
// from shared blocks, or, with Borrow, slices that cost no allocation.
func TestScanForms(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	const n = 500
	for i := range n {
		require.NoError(t, db.Put(fmt.Appendf(nil, "k%04d", i), fmt.Appendf(nil, "value%04d", i)))
	}
	var kept []kvstore.Entry
	for e, err := range db.All() {
		require.NoError(t, err)
		kept = append(kept, e)
	}
	for _, e := range kept {
		// Appending must never write over the value or the next row.
		_ = append(e.Key, "XXXXXXXX"...)
		_ = append(e.Value, "YYYYYYYY"...)
	}
	for i, e := range kept {
		require.Equal(t, fmt.Sprintf("k%04d", i), string(e.Key))
		require.Equal(t, fmt.Sprintf("value%04d", i), string(e.Value))
	}

	scan := func(borrow bool) {
		rows := 0
		for e, err := range db.Scan(kvstore.IterOptions{Borrow: borrow}) {
			if err != nil || len(e.Key) != 5 {
				t.Fatal(err, e.Key)
			}
			rows++
		}
		if rows != n {
			t.Fatalf("%d rows", rows)
		}
	}
	copying := testing.AllocsPerRun(5, func() { scan(false) })
	borrowed := testing.AllocsPerRun(5, func() { scan(true) })
	t.Logf("allocations per scan of %d rows: copying %.0f, borrowed %.0f", n, copying, borrowed)
	require.Less(t, borrowed, 20.0, "a borrowed scan allocates per row")
	require.Less(t, copying, 30.0, "a copying scan of small rows allocates per row, not per block")
}

// TestBorrowInWriteTx: in a write transaction a borrowed iteration copies,
// so writes in the loop (which end the statement) leave its rows intact.
func TestBorrowInWriteTx(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	for i := range 50 {
		require.NoError(t, db.Put(fmt.Appendf(nil, "a%03d", i), fmt.Appendf(nil, "v%03d", i)))
	}
	require.NoError(t, db.Update(context.Background(), func(tx *kvstore.Tx) error {
		i := 0
		for e, err := range tx.Scan(kvstore.IterOptions{Prefix: b("a"), Borrow: true}) {
			require.NoError(t, err)
			require.NoError(t, tx.Put(append(b("b"), e.Key...), e.Value))
			require.Equal(t, fmt.Sprintf("a%03d", i), string(e.Key))
			require.Equal(t, fmt.Sprintf("v%03d", i), string(e.Value))
			i++
		}
		require.Equal(t, 50, i)
		return nil
	}))
	got := collect(t, db.Prefix(b("ba")))
	require.Len(t, got, 50)
	require.Equal(t, kv{"ba049", "v049"}, got[49])
}

// TestKeptEntriesOutliveLaterLoops: the copies a loop hands out stay the
// caller's while later loops run (loops reuse the memory of ended ones,
// and go on carving copies from the block the last one began), whether a
// loop ran out, broke, or ran in a transaction; appending to a kept copy
// never reaches a later loop's rows.
func TestKeptEntriesOutliveLaterLoops(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t, kvstore.Options{})
	long := make([]byte, 40) // a prefix longer than a cursor keeps inline
	for i := range 300 {
		require.NoError(t, db.Put(fmt.Appendf(nil, "k%04d", i), fmt.Appendf(nil, "v%04d", i)))
		require.NoError(t, db.Put(fmt.Appendf(long[:40:40], "%04d", i), fmt.Appendf(nil, "l%04d", i)))
	}
	type want struct{ key, value string }
	var kept []kvstore.Entry
	var wants []want
	keep := func(e kvstore.Entry) {
		kept = append(kept, e)
		wants = append(wants, want{string(e.Key), string(e.Value)})
	}
	for round := range 20 {
		n := 0
		for e, err := range db.Prefix(fmt.Appendf(nil, "k%03d", round)) {
			require.NoError(t, err)
			keep(e)
			n++
		}
		require.Equal(t, 10, n)
		for e, err := range db.All() {
			require.NoError(t, err)
			keep(e)
			break
		}
		got := 0
		for e, err := range db.Prefix(append(long[:40:40], fmt.Sprintf("%03d", round)...)) {
			require.NoError(t, err)
			require.Equal(t, fmt.Sprintf("l%03d%d", round, got), string(e.Value))
			keep(e)
			got++
		}
		require.Equal(t, 10, got)
		require.NoError(t, db.View(ctx, func(tx *kvstore.Tx) error {
			for e, err := range tx.Range(fmt.Appendf(nil, "k%04d", round), nil) {
				require.NoError(t, err)
				keep(e)
				break
			}
			return nil
		}))
		// Rewrite what the loops read: the kept copies must not change.
		require.NoError(t, db.Put(fmt.Appendf(nil, "k%04d", round), []byte("changed")))
		for _, e := range kept {
			_ = append(e.Key, "XXXXXXXX"...)
			_ = append(e.Value, "YYYYYYYY"...)
		}
	}
	for i, e := range kept {
		require.Equal(t, wants[i].key, string(e.Key), "entry %d", i)
		require.Equal(t, wants[i].value, string(e.Value), "entry %d", i)
	}
}

// TestScanRowsOfEveryForm: one scan meets rows of the form most rows
// have (key and value of up to 8 KiB, read from the B-tree in one pass)
// and rows of another (a value past 8 KiB, on overflow pages) in turn,
// forwards and backwards, copied and borrowed, bounded and not: every row
// reads back as written.
func TestScanRowsOfEveryForm(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	want := map[string][]byte{}
	for i := range 60 {
		n := 10 + i
		if i%3 == 1 {
			n = 9000 + i // past a two-byte serial type
		}
		if i%7 == 0 {
			n = 0
		}
		k, v := fmt.Appendf(nil, "k%03d", i), make([]byte, n)
		for j := range v {
			v[j] = byte(i + j)
		}
		require.NoError(t, db.Put(k, v))
		want[string(k)] = v
	}
	for _, opts := range []kvstore.IterOptions{
		{}, {Borrow: true}, {Reverse: true}, {Reverse: true, Borrow: true},
		{Start: []byte("k010"), End: []byte("k050")}, {Prefix: []byte("k02"), Borrow: true},
	} {
		seen := 0
		var last []byte
		for e, err := range db.Scan(opts) {
			require.NoError(t, err)
			require.Equal(t, want[string(e.Key)], e.Value, "%+v: %s", opts, e.Key)
			if last != nil {
				require.Equal(t, opts.Reverse, string(e.Key) < string(last), "%+v: order", opts)
			}
			last = append(last[:0], e.Key...)
			seen++
		}
		require.Positive(t, seen, "%+v", opts)
	}
	c, err := db.Cursor(kvstore.IterOptions{})
	require.NoError(t, err)
	defer c.Close()
	for ok := c.Last(); ok; ok = c.Prev() {
		require.Equal(t, want[string(c.Key())], c.Value(), "%s", c.Key())
	}
	require.NoError(t, c.Err())
}
