package kvstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// A TTL written again over a key's TTL: within the same millisecond (the
// same expiry, which the write keeps in place), with another expiry, in
// one transaction and across many, each key keeps exactly one row in each
// index, its latest value and expiry, and the purge takes it when that
// expiry passes.
func TestTTLRewriteKeepsOneRowPerIndex(t *testing.T) {
	f := newTTLFixture(t)
	ctx := context.Background()
	cf := f.cf(t, "c")
	key := func(i int) []byte { return fmt.Appendf(nil, "k%03d", i) }

	// The same expiry twice: the clock does not move between the writes.
	require.NoError(t, cf.PutTTL(key(0), []byte("a"), time.Minute))
	require.NoError(t, cf.PutTTL(key(0), []byte("b"), time.Minute))
	require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, "c", "k000"))
	v, left, err := cf.GetTTL(key(0))
	require.NoError(t, err)
	require.Equal(t, "b", string(v))
	require.Equal(t, time.Minute, left)

	// Many keys, each written two to four times in one transaction with
	// the same and with other expiries, then again in a later one.
	for round := range 3 {
		require.NoError(t, f.db.Update(ctx, func(tx *kvstore.Tx) error {
			h := tx.CF(cf)
			for i := range 300 {
				for j := range 2 + i%3 {
					d := time.Duration(1+(i+j+round)%2) * time.Hour
					if err := h.PutTTL(key(i), fmt.Appendf(nil, "v%d-%d-%d", round, i, j), d); err != nil {
						return err
					}
				}
			}
			return nil
		}))
		f.clk.Advance(time.Millisecond)
	}
	require.Equal(t, [3]int64{300, 300, 300}, ttlCounts(t, f.path, "c"))
	problems, err := cf.CheckTTL(ctx)
	require.NoError(t, err)
	require.Empty(t, problems)
	for i := range 300 {
		last := 2 + i%3 - 1
		d := time.Duration(1+(i+last+2)%2) * time.Hour
		v, left, err := cf.GetTTL(key(i))
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("v2-%d-%d", i, last), string(v))
		require.Equal(t, d-time.Millisecond, left, "key %d", i)
	}

	// The keys whose last expiry is an hour away go first, and only they.
	f.clk.Advance(time.Hour)
	n, err := cf.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 150, n)
	require.Equal(t, [3]int64{150, 150, 150}, ttlCounts(t, f.path, "c"))
	f.clk.Advance(time.Hour)
	n, err = cf.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 150, n)
	f.checkEmptied(t, cf)
}
