package vector_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/vectest"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/stretchr/testify/require"
)

var ctx = context.Background()

func openStore(t testing.TB, path string, opts kvstore.Options) *kvstore.Store {
	t.Helper()
	db, err := kvstore.Open(path, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func tempStore(t testing.TB, opts kvstore.Options) (*kvstore.Store, string) {
	path := filepath.Join(t.TempDir(), "v.db")
	return openStore(t, path, opts), path
}

func openIndex(t testing.TB, db *kvstore.Store, name string, opts vector.Options) *vector.Index {
	t.Helper()
	ix, err := vector.Open(ctx, db, name, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ix.Close() })
	return ix
}

func key(i int) []byte { return []byte{'k', byte(i >> 16), byte(i >> 8), byte(i)} }

func keyID(k []byte) int { return int(k[1])<<16 | int(k[2])<<8 | int(k[3]) }

// fill puts set.Base[i] under key(i), batch vectors per transaction.
func fill(t testing.TB, ix *vector.Index, base [][]float32, batch int, meta func(i int) map[string]string) {
	t.Helper()
	for lo := 0; lo < len(base); lo += batch {
		var items []vector.Item
		for i := lo; i < min(lo+batch, len(base)); i++ {
			it := vector.Item{Key: key(i), Vector: base[i]}
			if meta != nil {
				it.Meta = meta(i)
			}
			items = append(items, it)
		}
		require.NoError(t, ix.PutBatch(ctx, items))
	}
}

func recall(t testing.TB, ix *vector.Index, set *vectest.Set, truth [][]vectest.Neighbour, q vector.Query) float64 {
	t.Helper()
	got := make([][]int, len(set.Queries))
	for i, v := range set.Queries {
		hits, err := ix.Search(ctx, v, q)
		require.NoError(t, err)
		for _, h := range hits {
			got[i] = append(got[i], keyID(h.Key))
		}
	}
	return vectest.Recall(got, truth)
}

func hitKeys(hits []vector.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, string(h.Key))
	}
	return out
}

var epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func mathFloat32bits(f float32) uint32 { return math.Float32bits(f) }

// sized returns n, or underRace when the tests run with -race (several
// times slower).
func sized(n, underRace int) int {
	if raceEnabled {
		return underRace
	}
	return n
}
