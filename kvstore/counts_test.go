package kvstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

func TestCountKeys(t *testing.T) {
	ctx := context.Background()
	clock := kvstore.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	db := openTemp(t, kvstore.Options{Clock: clock})

	kc, err := db.CountKeys(ctx, "DEFAULT")
	require.NoError(t, err)
	require.Equal(t, kvstore.KeyCounts{Name: "default"}, kc, "an empty column family, name as stored")

	cf, err := db.CreateColumnFamily("sessions")
	require.NoError(t, err)
	for i := range 10 {
		require.NoError(t, cf.Put([]byte(fmt.Sprintf("p%02d", i)), []byte("v")))
	}
	kc, err = db.CountKeys(ctx, "sessions")
	require.NoError(t, err)
	require.Equal(t, kvstore.KeyCounts{Name: "sessions", Stored: 10, Live: 10}, kc, "no TTL tables yet")

	for i := range 6 {
		require.NoError(t, cf.PutTTL([]byte(fmt.Sprintf("t%02d", i)), []byte("v"), time.Duration(i+1)*time.Minute))
	}
	clock.Advance(3 * time.Minute) // t00, t01, t02 expire (expiry <= now)
	kc, err = db.CountKeys(ctx, "sessions")
	require.NoError(t, err)
	require.Equal(t, kvstore.KeyCounts{Name: "sessions", Stored: 16, Live: 13, TTL: 6, Expired: 3}, kc)
	n, err := cf.Count()
	require.NoError(t, err)
	require.Equal(t, kc.Live, n, "Live agrees with Count")

	// Counting deletes nothing, so it works read-only and leaves the keys.
	require.NoError(t, db.Close())
	ro := openAt(t, db.Path(), kvstore.Options{ReadOnly: true, Clock: clock})
	kc2, err := ro.CountKeys(ctx, "sessions")
	require.NoError(t, err)
	require.Equal(t, kc, kc2)
	require.NoError(t, ro.Close())

	rw := openAt(t, db.Path(), kvstore.Options{Clock: clock})
	purged, err := rw.PurgeExpiredAll(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, purged)
	kc, err = rw.CountKeys(ctx, "sessions")
	require.NoError(t, err)
	require.Equal(t, kvstore.KeyCounts{Name: "sessions", Stored: 13, Live: 13, TTL: 3}, kc)

	_, err = rw.CountKeys(ctx, "missing")
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	_, err = rw.CountKeys(ctx, "__snkv_catalog")
	require.ErrorIs(t, err, kvstore.ErrReservedName)
	_, err = rw.CountKeys(ctx, "")
	require.ErrorIs(t, err, kvstore.ErrInvalidName)
}

// CountKeys sees the keys that have expired but are still stored, which
// every read hides, so an operator can tell when a purge is due.
func ExampleStore_CountKeys() {
	clock := kvstore.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	db, err := kvstore.Open("", kvstore.Options{Clock: clock})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	_ = db.Put([]byte("config"), []byte("v"))
	_ = db.PutTTL([]byte("session:1"), []byte("a"), time.Minute)
	_ = db.PutTTL([]byte("session:2"), []byte("b"), time.Hour)
	clock.Advance(10 * time.Minute) // session:1 expires

	kc, err := db.CountKeys(context.Background(), kvstore.DefaultColumnFamily)
	if err != nil {
		panic(err)
	}
	fmt.Printf("live %d, with TTL %d, expired awaiting purge %d\n", kc.Live, kc.TTL, kc.Expired)
	// Output: live 2, with TTL 2, expired awaiting purge 1
}
