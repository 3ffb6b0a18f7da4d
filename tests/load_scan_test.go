package tests

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/kvstore"
)

// TestScanAfterLargeLoad is the memory workload's first two phases in one
// test: random keys applied a batch of 1,000 at a time, then at once a full
// scan on a fresh reader and random reads. The scan's reader takes its
// first snapshot while the checkpointer may still be copying the load's
// last commits; it must see the default column family (a snapshot older
// than the catalog's row would report it dropped) and every key. (A store
// whose file was replaced under it reported the same: see
// TestReplacedFileRefusesReaders.)
func TestScanAfterLargeLoad(t *testing.T) {
	const batch = 1_000
	keys := shortOr(1_000_000, 20_000)
	for round := range 2 {
		st, err := kvstore.Open(filepath.Join(t.TempDir(), "s.db"), kvstore.Options{})
		require.NoError(t, err)
		cf := st.Default()
		var b kvstore.Batch
		key := func(i int) []byte {
			k := make([]byte, 16)
			binary.BigEndian.PutUint64(k, uint64(i)*0x9E3779B97F4A7C15)
			binary.BigEndian.PutUint64(k[8:], uint64(i))
			return k
		}
		for i := 0; i < keys; i += batch {
			b.Reset()
			for j := i; j < i+batch; j++ {
				val := make([]byte, 100) // the batch keeps it until Apply
				binary.BigEndian.PutUint64(val, uint64(j))
				b.Put(key(j), val)
			}
			require.NoError(t, cf.Apply(context.Background(), &b))
		}
		n := 0
		for e, err := range cf.All() {
			require.NoError(t, err, "round %d, after %d keys", round, n)
			require.Len(t, e.Value, 100)
			n++
		}
		require.Equal(t, keys, n, "round %d", round)
		for i := 0; i < keys; i += keys / 100 {
			v, err := cf.Get(key(i))
			require.NoError(t, err)
			require.Equal(t, uint64(i), binary.BigEndian.Uint64(v))
		}
		require.NoError(t, st.Close())
	}
}
