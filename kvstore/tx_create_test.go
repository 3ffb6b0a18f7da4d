package kvstore_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

var errStop = errors.New("stop")

// A column family created in a transaction is visible to others once the
// transaction commits, with the keys written to it there.
func TestTxCreateColumnFamilyCommits(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	ctx := context.Background()
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		cf, err := tx.CreateColumnFamily("Sessions")
		require.NoError(t, err)
		require.Equal(t, "Sessions", cf.Name())
		_, err = tx.CreateColumnFamily("SESSIONS")
		require.ErrorIs(t, err, kvstore.ErrExists, "names compare without regard to ASCII case")
		return tx.CF(cf).Put(b("k"), b("v"))
	}))
	names, err := db.ListColumnFamilies()
	require.NoError(t, err)
	require.Equal(t, []string{"Sessions", "default"}, names)
	cf, err := db.OpenColumnFamily("sessions")
	require.NoError(t, err)
	require.Equal(t, []kv{{"k", "v"}}, contents(t, cf))
}

// A column family created in a transaction that rolls back leaves the
// file byte for byte as it was: nothing of it was committed.
func TestTxCreateColumnFamilyRollsBack(t *testing.T) {
	path := tempPath(t)
	db := openAt(t, path, kvstore.Options{})
	require.NoError(t, db.Put(b("a"), b("1")))
	_, err := db.Checkpoint(context.Background(), kvstore.CheckpointTruncate)
	require.NoError(t, err)
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	var created *kvstore.ColumnFamily
	err = db.Update(context.Background(), func(tx *kvstore.Tx) error {
		if created, err = tx.CreateColumnFamily("loaded"); err != nil {
			return err
		}
		for i := range 1000 {
			if err := tx.CF(created).Put([]byte{byte(i), byte(i >> 8)}, make([]byte, 100)); err != nil {
				return err
			}
		}
		return errStop
	})
	require.ErrorIs(t, err, errStop)
	_, err = db.OpenColumnFamily("loaded")
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	_, err = created.Get(b("k"))
	require.ErrorIs(t, err, kvstore.ErrNotFound, "the handle of a creation rolled back")
	_, err = db.Checkpoint(context.Background(), kvstore.CheckpointTruncate)
	require.NoError(t, err)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after, "the file is as it was")

	// The name is free again.
	_, err = db.CreateColumnFamily("loaded")
	require.NoError(t, err)
}

// Bad names, a read-only transaction and a nil Tx are refused.
func TestTxCreateColumnFamilyRefusals(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	ctx := context.Background()
	require.NoError(t, db.View(ctx, func(tx *kvstore.Tx) error {
		_, err := tx.CreateColumnFamily("x")
		require.ErrorIs(t, err, kvstore.ErrReadOnlyTx)
		return nil
	}))
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		_, err := tx.CreateColumnFamily("")
		require.ErrorIs(t, err, kvstore.ErrInvalidName)
		_, err = tx.CreateColumnFamily("__mine")
		require.ErrorIs(t, err, kvstore.ErrReservedName)
		_, err = tx.CreateColumnFamily("default")
		require.ErrorIs(t, err, kvstore.ErrExists)
		return nil
	}))
	var nilTx *kvstore.Tx
	_, err := nilTx.CreateColumnFamily("x")
	require.ErrorIs(t, err, kvstore.ErrInvalidArgument)
}
