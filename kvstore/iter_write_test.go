package kvstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// An iteration inside a write transaction reads the rows as they were
// before the writes the transaction makes during it: a loop that writes
// ahead of itself ends, having seen each original key once.
func TestIterationInWriteTxIgnoresItsOwnLaterWrites(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	for i := range 10 {
		require.NoError(t, db.Put(fmt.Appendf(nil, "k%02d", i), b("v")))
	}
	other, err := db.CreateColumnFamily("other")
	require.NoError(t, err)
	var seen []string
	err = db.Update(context.Background(), func(tx *kvstore.Tx) error {
		for e, err := range tx.All() {
			if err != nil {
				return err
			}
			seen = append(seen, string(e.Key))
			require.Less(t, len(seen), 100, "the loop must end")
			if err := tx.Put(append(e.Key, 'x'), b("new")); err != nil {
				return err
			}
			// Deleting a key ahead does not hide it from this iteration,
			// which reads the rows as they were.
			if string(e.Key) == "k00" {
				if err := tx.Delete(b("k05")); err != nil {
					return err
				}
			}
			if err := tx.CF(other).Put(e.Key, b("o")); err != nil {
				return err
			}
		}
		// A new iteration sees the transaction's writes.
		n := 0
		for _, err := range tx.All() {
			require.NoError(t, err)
			n++
		}
		require.Equal(t, 19, n)
		return nil
	})
	require.NoError(t, err)
	want := []string{}
	for i := range 10 {
		want = append(want, fmt.Sprintf("k%02d", i))
	}
	require.Equal(t, want, seen)
	n, err := db.Count()
	require.NoError(t, err)
	require.Equal(t, int64(19), n)
}

// A cursor in a write transaction keeps its rows across writes until it
// is repositioned; Seek and First then read the transaction's current
// state.
func TestCursorInWriteTxAcrossWrites(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	for _, k := range []string{"a", "c", "e"} {
		require.NoError(t, db.Put(b(k), b("v")))
	}
	err := db.Update(context.Background(), func(tx *kvstore.Tx) error {
		c, err := tx.Cursor(kvstore.IterOptions{})
		require.NoError(t, err)
		defer c.Close()
		require.True(t, c.First())
		require.Equal(t, "a", string(c.Key()))
		require.NoError(t, tx.Put(b("b"), b("new")))
		require.NoError(t, tx.PutTTL(b("d"), b("new"), 1<<40))
		require.True(t, c.Next())
		require.Equal(t, "c", string(c.Key()), "the copy: b was written after the cursor read a")
		require.True(t, c.Next())
		require.Equal(t, "e", string(c.Key()))
		require.False(t, c.Next())
		require.NoError(t, c.Err())
		require.True(t, c.Seek(b("b")))
		require.Equal(t, "b", string(c.Key()), "repositioned: the current state")
		require.True(t, c.Next())
		require.Equal(t, "c", string(c.Key()))
		require.True(t, c.Next())
		require.Equal(t, "d", string(c.Key()))
		return nil
	})
	require.NoError(t, err)
}
