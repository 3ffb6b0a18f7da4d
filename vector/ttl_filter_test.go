package vector_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/vectest"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/stretchr/testify/require"
)

func TestExpiryHidesAtOnceAndPurgeRemoves(t *testing.T) {
	clk := kvstore.NewManualClock(epoch)
	db, _ := tempStore(t, kvstore.Options{Clock: clk})
	ix := openIndex(t, db, "v", vector.Options{Dim: 2})
	require.NoError(t, ix.Put(ctx, []byte("short"), []float32{1, 0}, vector.Put{TTL: time.Minute}))
	require.NoError(t, ix.Put(ctx, []byte("at"), []float32{1, 0.1}, vector.Put{ExpireAt: epoch.Add(time.Hour)}))
	require.NoError(t, ix.Put(ctx, []byte("keep"), []float32{0, 1}, vector.Put{}))
	require.ErrorIs(t, ix.Put(ctx, []byte("x"), []float32{0, 1}, vector.Put{ExpireAt: epoch}), kvstore.ErrInvalidTTL)
	require.ErrorIs(t, ix.Put(ctx, []byte("x"), []float32{0, 1}, vector.Put{TTL: -time.Second}), kvstore.ErrInvalidTTL)
	e, err := ix.Get(ctx, []byte("short"))
	require.NoError(t, err)
	require.Equal(t, epoch.Add(time.Minute), e.ExpireAt.UTC())
	search := func() []string {
		hits, err := ix.Search(ctx, []float32{1, 0}, vector.Query{K: 5})
		require.NoError(t, err)
		return hitKeys(hits)
	}
	require.Equal(t, []string{"short", "at", "keep"}, search())
	clk.Advance(time.Minute)
	require.Equal(t, []string{"at", "keep"}, search(), "expired at its instant, before any purge")
	_, err = ix.Get(ctx, []byte("short"))
	require.ErrorIs(t, err, vector.ErrNotFound)
	n, err := ix.Count(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	st, _ := ix.Stats(ctx)
	require.Equal(t, 3, st.Count, "stored until purged")
	require.ErrorIs(t, ix.Delete(ctx, []byte("short")), vector.ErrNotFound, "expired")
	st, _ = ix.Stats(ctx)
	require.Equal(t, 2, st.Count, "deleting an expired key removes it")
	clk.Advance(time.Hour)
	purged, err := ix.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, purged)
	st, _ = ix.Stats(ctx)
	require.Equal(t, 1, st.Count)
	require.Equal(t, []string{"keep"}, search())
	purged, err = ix.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Zero(t, purged)
}

func TestBackgroundPurge(t *testing.T) {
	clk := kvstore.NewManualClock(epoch)
	db, _ := tempStore(t, kvstore.Options{Clock: clk})
	ix := openIndex(t, db, "v", vector.Options{Dim: 2, PurgeInterval: 5 * time.Millisecond})
	require.NoError(t, ix.Put(ctx, []byte("a"), []float32{1, 0}, vector.Put{TTL: time.Second}))
	clk.Advance(2 * time.Second)
	require.Eventually(t, func() bool {
		st, err := ix.Stats(ctx)
		return err == nil && st.Count == 0
	}, 10*time.Second, 5*time.Millisecond)
}

// Every filter returns min(K, matching) results, the nearest matching ones.
func TestFiltersReturnMinKMatching(t *testing.T) {
	set := vectest.Generate(vectest.Clustered(4000, 20, 16))
	db, _ := tempStore(t, kvstore.Options{})
	ix := openIndex(t, db, "v", vector.Options{Dim: 16, Metric: vector.Cosine})
	fill(t, ix, set.Base, 1000, func(i int) map[string]string {
		return map[string]string{"mod10": fmt.Sprint(i % 10), "mod100": fmt.Sprint(i % 100), "one": fmt.Sprint(i == 7)}
	})
	cases := []struct {
		name  string
		q     vector.Query
		allow func(i int) bool
	}{
		{"where 10%", vector.Query{Where: map[string]string{"mod10": "3"}}, func(i int) bool { return i%10 == 3 }},
		{"where 1%", vector.Query{Where: map[string]string{"mod100": "42"}}, func(i int) bool { return i%100 == 42 }},
		{"where two pairs", vector.Query{Where: map[string]string{"mod10": "2", "mod100": "42"}}, func(i int) bool { return i%100 == 42 }},
		{"where none", vector.Query{Where: map[string]string{"mod10": "x"}}, func(i int) bool { return false }},
		{"where one", vector.Query{Where: map[string]string{"one": "true"}}, func(i int) bool { return i == 7 }},
		{"prefix", vector.Query{Prefix: key(0x0100)[:3]}, func(i int) bool { return i>>8 == 1 }},
		{"range", vector.Query{Start: key(100), End: key(130)}, func(i int) bool { return i >= 100 && i < 130 }},
		{"predicate", vector.Query{Filter: func(k []byte) bool { return keyID(k)%7 == 0 }}, func(i int) bool { return i%7 == 0 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			matching := 0
			for i := range set.Base {
				if tc.allow(i) {
					matching++
				}
			}
			truth := vectest.Truth(set.Base, set.Queries, 10, vectest.Cosine, tc.allow)
			got := make([][]int, len(set.Queries))
			for qi, q := range set.Queries {
				query := tc.q
				query.K = 10
				hits, err := ix.Search(ctx, q, query)
				require.NoError(t, err)
				require.Len(t, hits, min(10, matching))
				for _, h := range hits {
					require.True(t, tc.allow(keyID(h.Key)), "%x", h.Key)
					got[qi] = append(got[qi], keyID(h.Key))
				}
			}
			require.GreaterOrEqual(t, vectest.Recall(got, truth), 0.95)
			// The exact scan of a transaction agrees on what matches.
			require.ErrorIs(t, db.Update(ctx, func(tx *kvstore.Tx) error {
				w := ix.In(tx)
				require.NoError(t, w.Put([]byte("zz-unrelated"), set.Base[0], vector.Put{Meta: map[string]string{"mod10": "none"}}))
				query := tc.q
				query.K = 10
				hits, err := w.Search(set.Queries[0], query)
				require.NoError(t, err)
				require.Len(t, hits, min(10, matching+boolInt(tc.q.Filter == nil && tc.q.Where == nil && tc.q.Prefix == nil && tc.q.Start == nil)))
				for _, h := range hits {
					require.True(t, bytes.Equal(h.Key, []byte("zz-unrelated")) || tc.allow(keyID(h.Key)))
				}
				return errRollback
			}), errRollback)
		})
	}
	hits, err := ix.Search(ctx, set.Queries[0], vector.Query{K: 3, MaxDistance: 1e-9})
	require.NoError(t, err)
	require.Empty(t, hits, "MaxDistance drops what is farther")
	hits, err = ix.Search(ctx, set.Queries[0], vector.Query{K: 3, Values: true})
	require.NoError(t, err)
	require.Len(t, hits, 3)
	require.Len(t, hits[0].Meta, 3)
}

var errRollback = errors.New("roll back")

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
