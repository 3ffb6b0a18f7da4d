package changefeed_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/kvstore"
)

// A Delete inside a transaction of a key whose TTL has run out removes it
// (and reports ErrNotFound): the feed records that removal as its expiry,
// so that replaying the feed still gives the rows.
func TestDeleteOfAnExpiredKeyInATransactionIsRecorded(t *testing.T) {
	s, clock, _ := openStore(t)
	ctx := context.Background()
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{}))
	require.NoError(t, s.PutTTL([]byte("k"), []byte("v"), time.Second))
	clock.Advance(2 * time.Second)
	require.NoError(t, s.Update(ctx, func(tx *kvstore.Tx) error {
		require.ErrorIs(t, tx.Delete([]byte("k")), kvstore.ErrNotFound)
		return nil
	}))
	got := readAll(t, s, changefeed.Filter{})
	require.Equal(t, "expired", got[len(got)-1].Op, "%v", got)
	require.Equal(t, "k", got[len(got)-1].Key)
}
