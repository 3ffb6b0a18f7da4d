package timelog_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

func TestInTxCommitAndRollback(t *testing.T) {
	db, _ := openStore(t)
	l := openLog(t, db, "tx", manual(timelog.Options{}))
	require.NoError(t, l.Append(1, 1))

	// fn fails: nothing of the log's writes, nor the KV write, remains.
	boom := errors.New("boom")
	err := db.Update(ctx, func(tx *kvstore.Tx) error {
		require.NoError(t, l.In(tx).Append(2, 2))
		require.NoError(t, l.In(tx).DeleteBefore(2))
		require.NoError(t, tx.Put([]byte("k"), []byte("v")))
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.Equal(t, recs(1, 1), collect(t, l.All()))
	_, err = db.Get([]byte("k"))
	require.ErrorIs(t, err, kvstore.ErrNotFound)

	// Visible only at commit, together with the KV write.
	tx, err := db.Begin(ctx, true)
	require.NoError(t, err)
	w := l.In(tx)
	require.NoError(t, w.AppendBatch(recs(3, 3, 2, 2, 3, 4)))
	require.NoError(t, w.DeleteRange(1, 2)) // hides the buffered record 1
	require.ErrorIs(t, w.DeleteRange(2, 1), timelog.ErrInvalidRange)
	require.NoError(t, tx.Put([]byte("k"), []byte("v")))
	require.Equal(t, recs(1, 1), collect(t, l.All()), "not before commit")
	require.NoError(t, tx.Commit())
	require.Equal(t, recs(2, 2, 3, 3, 3, 4), collect(t, l.All()))
	v, err := db.Get([]byte("k"))
	require.NoError(t, err)
	require.Equal(t, []byte("v"), v)

	// Sequencing: a buffered append after the transaction stays visible.
	require.NoError(t, l.Append(1, 5))
	require.Equal(t, recs(1, 5, 2, 2, 3, 3, 3, 4), collect(t, l.All()))
	compactAll(t, l)
	require.Equal(t, recs(1, 5, 2, 2, 3, 3, 3, 4), collect(t, l.All()))

	// A read-only transaction refuses.
	require.ErrorIs(t, db.View(ctx, func(tx *kvstore.Tx) error { return l.In(tx).Append(9, 9) }), kvstore.ErrReadOnlyTx)
}

func TestTieOrderAndBatches(t *testing.T) {
	db, _ := openStore(t)
	l := openLog(t, db, "ties", manual(timelog.Options{MemtableMaxBytes: 24 * 3, PageMaxBytes: 8 + 24*2}))
	var want []timelog.Record
	for i := range 20 {
		b := []timelog.Record{{Ts: 7, Handle: uint64(2 * i)}, {Ts: 7, Handle: uint64(2*i + 1)}}
		require.NoError(t, l.AppendBatch(b))
		want = append(want, b...)
		if i%3 == 0 {
			require.NoError(t, l.Flush(ctx))
		}
	}
	require.Equal(t, want, collect(t, l.Equal(7)))
	compactAll(t, l)
	require.Equal(t, want, collect(t, l.Equal(7)))
	rev := collect(t, l.EqualReverse(7))
	for i := range rev {
		require.Equal(t, want[len(want)-1-i], rev[i])
	}
}

func TestDeleteThenReappendAcrossReopen(t *testing.T) {
	db, _ := openStore(t)
	o := manual(timelog.Options{})
	l, err := timelog.Open(context.Background(), db, "seq", o)
	require.NoError(t, err)
	require.NoError(t, l.Append(5, 1))
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, l.DeleteRange(0, 10))
	require.NoError(t, l.Append(5, 2)) // after the delete: visible
	require.NoError(t, l.Close())
	for round := range 3 {
		l, err = timelog.Open(context.Background(), db, "seq", o)
		require.NoError(t, err)
		require.Equal(t, recs(5, 2), collect(t, l.All()), "round %d", round)
		require.NoError(t, l.Append(6, uint64(10+round)))
		compactAll(t, l)
		require.NoError(t, l.DeleteFrom(6))
		require.NoError(t, l.Close())
	}
	l, err = timelog.Open(context.Background(), db, "seq", o)
	require.NoError(t, err)
	defer l.Close()
	require.Equal(t, recs(5, 2), collect(t, l.All()))
	compactAll(t, l)
	require.Equal(t, recs(5, 2), collect(t, l.All()))
	st := l.Stats()
	require.Equal(t, 1, st.Pages)
	require.Zero(t, st.Tombstones)
}
