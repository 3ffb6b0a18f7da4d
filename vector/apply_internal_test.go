package vector

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/hnsw"
	"github.com/snkv-go/snkv/internal/vectest"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The changes a transaction gathers are forgotten when it ends, committed
// or not.
func TestTransactionChangesAreForgotten(t *testing.T) {
	ctx := context.Background()
	db, err := kvstore.Open(filepath.Join(t.TempDir(), "v.db"), kvstore.Options{})
	require.NoError(t, err)
	defer db.Close()
	ix, err := Open(ctx, db, "v", Options{Dim: 2})
	require.NoError(t, err)
	defer ix.Close()
	pending := func() int {
		ix.txMu.Lock()
		defer ix.txMu.Unlock()
		return len(ix.txs)
	}
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		require.NoError(t, ix.In(tx).Put([]byte("a"), []float32{1, 0}, Put{}))
		require.NoError(t, ix.In(tx).Put([]byte("b"), []float32{0, 1}, Put{}))
		require.Equal(t, 1, pending(), "one entry for the transaction")
		return nil
	}))
	require.Zero(t, pending())
	require.Error(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		require.NoError(t, ix.In(tx).Put([]byte("c"), []float32{1, 1}, Put{}))
		return errors.New("abort")
	}))
	require.Zero(t, pending(), "a rollback forgets the changes")
	n, err := ix.Count(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n)
}

// Reading the tables in parallel (three read transactions) and in one
// read transaction load the same index; a key whose vector row is gone
// fails the load with ErrCorrupt.
func TestParallelAndSequentialLoadAgree(t *testing.T) {
	ctx := context.Background()
	db, err := kvstore.Open(filepath.Join(t.TempDir(), "v.db"), kvstore.Options{})
	require.NoError(t, err)
	defer db.Close()
	ix, err := Open(ctx, db, "v", Options{Dim: 8, Metric: Cosine, PersistInterval: time.Hour})
	require.NoError(t, err)
	defer ix.Close()
	set := vectest.Generate(vectest.Clustered(1000, 0, 8))
	vec := func(i int) []float32 { return set.Base[i] }
	var items []Item
	for i := range 300 {
		it := Item{Key: []byte(fmt.Sprintf("k%03d", i)), Vector: vec(i)}
		if i%3 == 0 {
			it.Meta = map[string]string{"third": "yes"}
		}
		items = append(items, it)
	}
	require.NoError(t, ix.PutBatch(ctx, items))
	require.NoError(t, ix.persistAll(ctx)) // most links saved ...
	for i := 0; i < 300; i += 4 {
		require.NoError(t, ix.Delete(ctx, []byte(fmt.Sprintf("k%03d", i))))
	}
	require.NoError(t, ix.Put(ctx, []byte("k001"), vec(999), Put{})) // ... some not
	par, ok, err := ix.loadParallel(ctx)
	require.NoError(t, err)
	require.True(t, ok, "no commit came between the reads")
	seq, err := ix.loadSequential(ctx)
	require.NoError(t, err)
	for _, m := range []*mem{par, seq} {
		require.Equal(t, ix.m.applied, m.applied)
		require.Equal(t, ix.m.byKey, m.byKey)
		require.Equal(t, ix.m.g.Live(), m.g.Live())
		for i := 5; i < 300; i += 4 { // k001 has another vector now
			res, err := m.g.Search(vec(i), hnsw.SearchOptions{K: 1, Ef: 32})
			require.NoError(t, err)
			require.Equal(t, fmt.Sprintf("k%03d", i), m.keys[res[0].ID])
		}
		n, _ := m.g.Node(m.byKey["k002"])
		require.NotEmpty(t, n.Links[0], "a node with saved links has them")
	}

	// A key whose vector row is gone.
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		return tx.CF(ix.t.vecs).Delete(u32key(0))
	}))
	_, err = ix.loadSequential(ctx)
	require.ErrorIs(t, err, ErrCorrupt)
	_, _, err = ix.loadParallel(ctx)
	require.ErrorIs(t, err, ErrCorrupt)
}

func TestKeyRowSizeIsTheEncodedLength(t *testing.T) {
	for _, r := range []keyRow{
		{},
		{node: 7, seq: 1 << 40, expire: 1, value: make([]byte, 200)},
		{value: make([]byte, 1<<20), meta: map[string]string{"": "", "lang": "en", string(make([]byte, 300)): "x"}},
	} {
		require.Equal(t, len(r.encode()), keyRowSize(r.value, r.meta))
	}
}

// While the background repairs tombstones it holds applyMu, and a commit
// waits to be applied; a search meanwhile neither waits for the repair nor
// misses that commit (it lays it over the graph).
func TestSearchDoesNotWaitForTheRepair(t *testing.T) {
	ctx := context.Background()
	db, err := kvstore.Open(filepath.Join(t.TempDir(), "v.db"), kvstore.Options{})
	require.NoError(t, err)
	defer db.Close()
	ix, err := Open(ctx, db, "v", Options{Dim: 2, PersistInterval: time.Hour})
	require.NoError(t, err)
	defer ix.Close()
	require.NoError(t, ix.Put(ctx, []byte("a"), []float32{1, 0}, Put{}))

	// What repair does for as long as it runs.
	ix.applyMu.Lock()
	m := ix.mem()
	m.repairing.Store(true)
	var once sync.Once
	end := func() {
		once.Do(func() {
			m.repairing.Store(false)
			ix.applyMu.Unlock()
		})
	}
	defer end()
	put := make(chan error, 1)
	go func() { put <- ix.Put(ctx, []byte("b"), []float32{0, 1}, Put{}) }()

	search := func() []Hit {
		res := make(chan []Hit, 1)
		go func() {
			hits, err := ix.Search(ctx, []float32{0, 1}, Query{K: 2})
			assert.NoError(t, err)
			res <- hits
		}()
		select {
		case hits := <-res:
			return hits
		case <-time.After(2 * time.Second):
			return nil // waited for the repair
		}
	}
	require.Eventually(t, func() bool {
		hits := search()
		return len(hits) == 2 && string(hits[0].Key) == "b"
	}, 10*time.Second, time.Millisecond, "the commit waiting to be applied is found")
	select {
	case err := <-put:
		t.Fatalf("the put returned (%v) before the repair ended", err)
	default:
	}

	end()
	require.NoError(t, <-put)
	hits := search()
	require.Len(t, hits, 2)
	require.Equal(t, "b", string(hits[0].Key))
}
