package kvstore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

func TestSmoke(t *testing.T) {
	ctx := context.Background()
	clk := kvstore.NewManualClock(time.Unix(1_700_000_000, 0))
	for _, path := range []string{filepath.Join(t.TempDir(), "a.db"), ""} {
		db, err := kvstore.Open(path, kvstore.Options{Clock: clk})
		require.NoError(t, err)
		require.NoError(t, db.Put([]byte("a"), []byte("1")))
		require.NoError(t, db.Put([]byte("b"), nil))
		v, err := db.Get([]byte("b"))
		require.NoError(t, err)
		require.NotNil(t, v)
		require.Len(t, v, 0)
		users, err := db.CreateColumnFamily("users")
		require.NoError(t, err)
		require.NoError(t, users.PutTTL([]byte("x"), []byte("y"), time.Second))
		require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
			require.NoError(t, tx.Put([]byte("c"), []byte("3")))
			return tx.CF(users).Put([]byte("z"), []byte("w"))
		}))
		var keys []string
		for e, err := range users.All() {
			require.NoError(t, err)
			keys = append(keys, string(e.Key))
		}
		require.Equal(t, []string{"x", "z"}, keys)
		clk.Advance(2 * time.Second)
		_, err = users.Get([]byte("x"))
		require.ErrorIs(t, err, kvstore.ErrNotFound)
		n, err := users.Count()
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		names, err := db.ListColumnFamilies()
		require.NoError(t, err)
		require.Equal(t, []string{"default", "users"}, names)
		require.NoError(t, db.IntegrityCheck(ctx))
		st, err := db.Stats(ctx)
		require.NoError(t, err)
		t.Logf("%+v", st)
		require.NoError(t, db.Close())
	}
}
