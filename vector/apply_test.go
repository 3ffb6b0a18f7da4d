package vector_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/stretchr/testify/require"
)

// A search sees a transaction whole or not at all: the vectors it put
// (one Put call each) appear together, and a key it gave a new vector is
// found before and after, never missing in between. (The filter that
// accepts every key makes each search an exact scan of what the memory
// holds: what is tested is what a search may return, not the graph.)
func TestSearchSeesTransactionWhole(t *testing.T) {
	db, _ := tempStore(t, kvstore.Options{})
	ix := openIndex(t, db, "v", vector.Options{Dim: 8, Metric: vector.L2})
	vec := func(r, i int) []float32 {
		v := make([]float32, 8)
		v[r%8] = float32(i + 1)
		v[(r+3)%8] = float32(r%5) + 0.5
		return v
	}
	require.NoError(t, ix.Put(ctx, []byte("anchor"), vec(0, 99), vector.Put{}))
	const per = 20
	rounds := 150
	if testing.Short() {
		rounds = 60
	}
	searchers := testutil.NewLoops()
	var seen atomic.Int64
	for range 2 {
		searchers.Go(func(int) bool {
			hits, err := ix.Search(ctx, vec(0, 0), vector.Query{K: rounds*per + 10, Filter: func([]byte) bool { return true }})
			if err != nil {
				t.Error(err)
				return false
			}
			count := map[string]int{}
			for _, h := range hits {
				k := string(h.Key)
				if i := strings.IndexByte(k, '-'); i > 0 {
					k = k[:i]
				}
				count[k]++
			}
			for k, n := range count {
				if (k == "anchor" && n != 1) || (k != "anchor" && n != per) {
					t.Errorf("a search found %d vectors of %q", n, k)
					return false
				}
			}
			if count["anchor"] != 1 {
				t.Errorf("a search did not find the anchor")
				return false
			}
			seen.Add(1)
			return true
		})
	}
	for r := 0; r < rounds && !t.Failed(); r++ { // a searcher that failed ends the test early
		require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
			w := ix.In(tx)
			for i := range per {
				if err := w.Put([]byte(fmt.Sprintf("r%d-%d", r, i)), vec(r, i), vector.Put{}); err != nil {
					return err
				}
			}
			return w.Put([]byte("anchor"), vec(r, 99), vector.Put{})
		}))
	}
	searchers.Stop()
	t.Logf("%d searches beside %d commits", seen.Load(), rounds)
	n, err := ix.Count(ctx)
	require.NoError(t, err)
	require.Equal(t, rounds*per+1, n)
}
