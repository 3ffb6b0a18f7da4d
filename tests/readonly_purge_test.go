package tests

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/kvstore"
)

// A purge on a read-only store (a LiteFS replica's, docs/replication.md)
// fails with ErrReadOnly, whether or not anything has expired, for a
// column family with TTL tables and one without: purging is the writer's
// job. A purge that found nothing to delete used to return nil there.
func TestReadOnlyStoreRefusesPurge(t *testing.T) {
	ctx := context.Background()
	clk := kvstore.NewManualClock(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	path := filepath.Join(t.TempDir(), "ro.db")
	db, err := kvstore.Open(path, kvstore.Options{Clock: clk})
	require.NoError(t, err)
	ttlCF, err := db.ColumnFamilyOrCreate("ttl")
	require.NoError(t, err)
	require.NoError(t, ttlCF.PutTTL([]byte("k"), []byte("v"), time.Hour))
	require.NoError(t, db.Put([]byte("plain"), []byte("v")))
	require.NoError(t, db.Close())

	r, err := kvstore.Open(path, kvstore.Options{ReadOnly: true, Clock: clk})
	require.NoError(t, err)
	defer r.Close()
	rTTL, err := r.OpenColumnFamily("ttl")
	require.NoError(t, err)
	for _, expired := range []bool{false, true} {
		if expired {
			clk.Advance(2 * time.Hour)
		}
		for range 2 { // a second call after the first looked
			_, err = r.PurgeExpiredAll(ctx)
			require.ErrorIs(t, err, kvstore.ErrReadOnly, "PurgeExpiredAll, expired %v", expired)
			_, err = rTTL.PurgeExpired(ctx)
			require.ErrorIs(t, err, kvstore.ErrReadOnly, "PurgeExpired of a column family with TTL, expired %v", expired)
			_, err = r.PurgeExpiredN(ctx, 10)
			require.ErrorIs(t, err, kvstore.ErrReadOnly, "PurgeExpiredN of a column family without TTL, expired %v", expired)
		}
	}
	_, err = rTTL.Get([]byte("k"))
	require.ErrorIs(t, err, kvstore.ErrNotFound, "expired by the read-only store's clock all the same")
}
