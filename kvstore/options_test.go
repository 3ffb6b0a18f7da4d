package kvstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/kvstore"
)

// TestSmallDevice checks the profile's settings and what they mean for a
// user: a working store with no mapped reads and small caches, on which a
// third reader at once waits for one of the two, then fails with ErrBusy.
func TestSmallDevice(t *testing.T) {
	opts := kvstore.SmallDevice()
	require.Equal(t, int64(-1), opts.MmapSize)
	require.Equal(t, kvstore.SmallDeviceCacheSize, opts.CacheSize)
	require.Equal(t, 2, opts.MaxReaders)

	opts.BusyTimeout = 50 * time.Millisecond
	db := openTemp(t, opts)
	var b kvstore.Batch
	for i := range 1000 {
		b.Put([]byte{byte(i >> 8), byte(i)}, make([]byte, 100))
	}
	require.NoError(t, db.Default().Apply(context.Background(), &b))

	var curs []*kvstore.Cursor
	for range 2 {
		c, err := db.Default().Cursor(kvstore.IterOptions{})
		require.NoError(t, err)
		require.True(t, c.First())
		curs = append(curs, c)
	}
	_, err := db.Get([]byte{0, 1})
	require.ErrorIs(t, err, kvstore.ErrBusy, "a third reader while two cursors hold both")
	require.NoError(t, curs[0].Close())
	v, err := db.Get([]byte{0, 1})
	require.NoError(t, err)
	require.Len(t, v, 100)
	require.NoError(t, curs[1].Close())

	st, err := db.Stats(context.Background())
	require.NoError(t, err)
	require.LessOrEqual(t, st.OpenReaders, 2)
}
