package vector_test

import (
	"errors"
	"math"
	"testing"

	"github.com/snkv-go/snkv/internal/vectest"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/stretchr/testify/require"
)

func TestOpenCreatesAndChecksOptions(t *testing.T) {
	db, _ := tempStore(t, kvstore.Options{})
	_, err := vector.Open(ctx, db, "docs", vector.Options{})
	require.ErrorIs(t, err, vector.ErrNoIndex, "creating needs a dimension")
	require.ErrorIs(t, err, vector.ErrNotFound)
	ix := openIndex(t, db, "docs", vector.Options{Dim: 4, Metric: vector.Cosine})
	require.Equal(t, 4, ix.Dim())
	_, err = vector.Open(ctx, db, "docs", vector.Options{Dim: 8})
	require.ErrorIs(t, err, vector.ErrMismatch)
	_, err = vector.Open(ctx, db, "docs", vector.Options{Metric: vector.Dot})
	require.ErrorIs(t, err, vector.ErrMismatch)
	_, err = vector.Open(ctx, db, "docs", vector.Options{Storage: vector.Int8})
	require.ErrorIs(t, err, vector.ErrMismatch)
	again := openIndex(t, db, "docs", vector.Options{}) // zero options take what is recorded
	require.Equal(t, 4, again.Dim())
	for _, bad := range []string{"", "a/b", "x\x00"} {
		_, err = vector.Open(ctx, db, bad, vector.Options{Dim: 4})
		require.ErrorIs(t, err, kvstore.ErrInvalidName, "%q", bad)
	}
	openIndex(t, db, "other", vector.Options{Dim: 2})
	names, err := vector.List(ctx, db)
	require.NoError(t, err)
	require.Equal(t, []string{"docs", "other"}, names)
	cfs, err := db.ListColumnFamilies()
	require.NoError(t, err)
	require.Equal(t, []string{"default"}, cfs, "an index is only hidden tables")
	require.NoError(t, vector.Drop(ctx, db, "other"))
	require.ErrorIs(t, vector.Drop(ctx, db, "other"), vector.ErrNotFound)
	names, _ = vector.List(ctx, db)
	require.Equal(t, []string{"docs"}, names)
}

func TestPutGetDeleteAndBadInput(t *testing.T) {
	db, _ := tempStore(t, kvstore.Options{})
	ix := openIndex(t, db, "v", vector.Options{Dim: 3, Metric: vector.Cosine})
	require.NoError(t, ix.Put(ctx, []byte("a"), []float32{1, 0, 0}, vector.Put{Value: []byte("va"), Meta: map[string]string{"lang": "en"}}))
	e, err := ix.Get(ctx, []byte("a"))
	require.NoError(t, err)
	require.Equal(t, []float32{1, 0, 0}, e.Vector)
	require.Equal(t, []byte("va"), e.Value)
	require.Equal(t, map[string]string{"lang": "en"}, e.Meta)
	require.True(t, e.ExpireAt.IsZero())
	for _, tc := range []struct {
		key  []byte
		vec  []float32
		want error
	}{
		{nil, []float32{1, 0, 0}, kvstore.ErrInvalidKey},
		{make([]byte, kvstore.MaxKeySize+1), []float32{1, 0, 0}, kvstore.ErrKeyTooLarge},
		{[]byte("b"), []float32{1, 0}, vector.ErrDim},
		{[]byte("b"), []float32{0, 0, 0}, vector.ErrVector},
		{[]byte("b"), []float32{float32(math.Inf(1)), 0, 0}, vector.ErrVector},
	} {
		require.ErrorIs(t, ix.Put(ctx, tc.key, tc.vec, vector.Put{}), tc.want)
	}
	require.ErrorIs(t, ix.PutBatch(ctx, []vector.Item{{Key: []byte("c"), Vector: []float32{0, 1, 0}}, {Key: []byte("d"), Vector: []float32{1}}}), vector.ErrDim)
	ok, err := ix.Contains(ctx, []byte("c"))
	require.NoError(t, err)
	require.False(t, ok, "a batch with one bad item writes nothing")
	n, err := ix.Count(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	hits, err := ix.Search(ctx, []float32{0, 1, 0}, vector.Query{K: 5})
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, hitKeys(hits))
	_, err = ix.Search(ctx, []float32{0, 1}, vector.Query{K: 5})
	require.ErrorIs(t, err, vector.ErrDim)
	require.NoError(t, ix.Delete(ctx, []byte("a")))
	require.ErrorIs(t, ix.Delete(ctx, []byte("a")), vector.ErrNotFound)
	_, err = ix.Get(ctx, []byte("a"))
	require.ErrorIs(t, err, vector.ErrNotFound)
	hits, err = ix.Search(ctx, []float32{0, 1, 0}, vector.Query{K: 5})
	require.NoError(t, err)
	require.Empty(t, hits)
}

func TestRollbackLeavesNothing(t *testing.T) {
	db, _ := tempStore(t, kvstore.Options{})
	ix := openIndex(t, db, "v", vector.Options{Dim: 2})
	require.NoError(t, ix.Put(ctx, []byte("keep"), []float32{1, 1}, vector.Put{}))
	boom := errors.New("boom")
	err := db.Update(ctx, func(tx *kvstore.Tx) error {
		w := ix.In(tx)
		require.NoError(t, w.Put([]byte("x"), []float32{0, 0}, vector.Put{}))
		require.NoError(t, w.Delete([]byte("keep")))
		hits, err := w.Search([]float32{0, 0}, vector.Query{K: 5})
		require.NoError(t, err)
		require.Equal(t, []string{"x"}, hitKeys(hits), "the transaction sees its own writes")
		return boom
	})
	require.ErrorIs(t, err, boom)
	hits, err := ix.Search(ctx, []float32{0, 0}, vector.Query{K: 5})
	require.NoError(t, err)
	require.Equal(t, []string{"keep"}, hitKeys(hits))
	st, err := ix.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, st.Count)
	_, err = ix.Get(ctx, []byte("x"))
	require.ErrorIs(t, err, vector.ErrNotFound)
}

// A commit is visible to every search that starts after it, in any
// goroutine; a read transaction begun before a delete still finds the
// vector, and one begun before a put does not.
func TestCommitVisibilityAndSnapshots(t *testing.T) {
	db, _ := tempStore(t, kvstore.Options{})
	ix := openIndex(t, db, "v", vector.Options{Dim: 2})
	require.NoError(t, ix.Put(ctx, []byte("old"), []float32{1, 0}, vector.Put{}))
	old, err := db.Begin(ctx, false)
	require.NoError(t, err)
	defer old.Rollback()
	done := make(chan []string)
	require.NoError(t, ix.Delete(ctx, []byte("old")))
	require.NoError(t, ix.Put(ctx, []byte("new"), []float32{0, 1}, vector.Put{}))
	go func() {
		hits, err := ix.Search(ctx, []float32{1, 0}, vector.Query{K: 5})
		if err != nil {
			done <- []string{err.Error()}
			return
		}
		done <- hitKeys(hits)
	}()
	require.Equal(t, []string{"new"}, <-done)
	hits, err := ix.In(old).Search([]float32{1, 0}, vector.Query{K: 5})
	require.NoError(t, err)
	require.Equal(t, []string{"old"}, hitKeys(hits), "the old snapshot")
	e, err := ix.In(old).Get([]byte("old"))
	require.NoError(t, err)
	require.Equal(t, []float32{1, 0}, e.Vector)
}

func TestRecallAndReopen(t *testing.T) {
	n := sized(3000, 1000)
	set := vectest.Generate(vectest.Clustered(n, 50, 32))
	truth := vectest.Truth(set.Base, set.Queries, 10, vectest.Cosine, nil)
	db, path := tempStore(t, kvstore.Options{})
	ix, err := vector.Open(ctx, db, "v", vector.Options{Dim: 32, Metric: vector.Cosine})
	require.NoError(t, err)
	fill(t, ix, set.Base, 500, nil)
	r := recall(t, ix, set, truth, vector.Query{K: 10})
	require.GreaterOrEqual(t, r, 0.97)
	require.NoError(t, ix.Close())
	require.ErrorIs(t, ix.Close(), vector.ErrClosed)
	_, err = ix.Search(ctx, set.Queries[0], vector.Query{})
	require.ErrorIs(t, err, vector.ErrClosed)
	require.NoError(t, db.Close())
	db = openStore(t, path, kvstore.Options{})
	ix = openIndex(t, db, "v", vector.Options{})
	st, err := ix.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, n, st.Count)
	require.Equal(t, 0, st.Unpersisted, "a clean close saved every link: nothing linked again")
	require.InDelta(t, r, recall(t, ix, set, truth, vector.Query{K: 10}), 1e-9, "the same graph")
	require.NoError(t, db.IntegrityCheck(ctx))
}

// The slot of a deleted or replaced vector is taken by a later put: an
// index that keeps replacing its vectors does not grow, and another
// process's view (which applies the changes from the log) agrees.
func TestDeletedSlotsAreReused(t *testing.T) {
	set := vectest.Generate(vectest.Clustered(600, 20, 16))
	db, path := tempStore(t, kvstore.Options{})
	ix := openIndex(t, db, "v", vector.Options{Dim: 16, Metric: vector.Cosine})
	fill(t, ix, set.Base[:200], 100, nil)
	other := openIndex(t, openStore(t, path, kvstore.Options{}), "v", vector.Options{})
	for round := range 4 {
		require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
			w := ix.In(tx)
			for i := range 200 {
				if i%2 == 0 {
					if err := w.Delete(key(i)); err != nil {
						return err
					}
				}
			}
			for i := range 200 {
				if i%2 == 0 { // back, under the same key, with another vector
					if err := w.Put(key(i), set.Base[200+i+round%2*200], vector.Put{}); err != nil {
						return err
					}
				} else if i%5 == 0 { // replaced in place
					if err := w.Put(key(i), set.Base[i], vector.Put{}); err != nil {
						return err
					}
				}
			}
			return nil
		}))
	}
	for _, x := range []*vector.Index{ix, other} {
		st, err := x.Stats(ctx)
		require.NoError(t, err)
		require.Equal(t, 200, st.Count)
		require.LessOrEqual(t, st.Slots, 340, "slots are reused (200 live, each round frees at most 140)")
		for i := 1; i < 200; i += 2 {
			hits, err := x.Search(ctx, set.Base[i], vector.Query{K: 1})
			require.NoError(t, err)
			require.Equal(t, key(i), hits[0].Key)
		}
		for i := 0; i < 200; i += 2 {
			e, err := x.Get(ctx, key(i))
			require.NoError(t, err)
			require.Equal(t, set.Base[200+i+200], e.Vector, "the last round's vector")
			hits, err := x.Search(ctx, e.Vector, vector.Query{K: 1})
			require.NoError(t, err)
			require.Equal(t, key(i), hits[0].Key)
		}
	}
	require.NoError(t, db.IntegrityCheck(ctx))
}
