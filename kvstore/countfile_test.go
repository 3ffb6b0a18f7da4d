package kvstore_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// CountKeysFile lists the column families of an encrypted store with their
// counts without its secret, writing nothing, and those of a store in the
// clear the same way.
func TestCountKeysFile(t *testing.T) {
	ctx := context.Background()
	clock := kvstore.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, enc := range []*kvstore.Encryption{nil, rawKey(7)} {
		path := tempPath(t)
		s, err := kvstore.Open(path, kvstore.Options{Encryption: enc, Clock: clock})
		require.NoError(t, err)
		require.NoError(t, s.Put(b("a"), b("secret value")))
		cf, err := s.CreateColumnFamily("Sessions")
		require.NoError(t, err)
		require.NoError(t, cf.PutTTL(b("t1"), b("x"), time.Minute))
		require.NoError(t, cf.PutTTL(b("t2"), b("y"), time.Hour))
		require.NoError(t, cf.Put(b("p"), b("z")))
		require.NoError(t, s.Close())
		clock.Advance(2 * time.Minute)

		if enc != nil {
			_, err = kvstore.Open(path, kvstore.Options{})
			require.ErrorIs(t, err, kvstore.ErrAuth, "the store needs its secret to open")
		}
		before, err := os.ReadFile(path)
		require.NoError(t, err)
		got, err := kvstore.CountKeysFile(ctx, path, kvstore.Options{Clock: clock, Encryption: rawKey(9)})
		require.NoError(t, err)
		require.Equal(t, []kvstore.KeyCounts{
			{Name: "Sessions", Stored: 3, Live: 2, TTL: 2, Expired: 1},
			{Name: "default", Stored: 1, Live: 1},
		}, got)
		after, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, before, after, "nothing is written")
	}
	missing := tempPath(t)
	_, err := kvstore.CountKeysFile(ctx, missing, kvstore.Options{})
	require.Error(t, err, "a missing store")
	require.NoFileExists(t, missing)
	//lint:ignore SA1012 a nil context is refused, which is what is tested
	_, err = kvstore.CountKeysFile(nil, tempPath(t), kvstore.Options{}) //nolint:staticcheck
	require.ErrorIs(t, err, kvstore.ErrInvalidArgument)
}
