package kvstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/snkv-go/snkv/iterator"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// Bad arguments get ErrInvalidArgument, never a panic, and write nothing.
func TestNilArgumentsAreErrors(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	require.NoError(t, db.Put(b("k"), b("v")))
	var nilCtx context.Context
	ctx := context.Background()
	var nilStore *kvstore.Store
	var nilCF *kvstore.ColumnFamily
	var nilTx *kvstore.Tx
	var nilCursor *kvstore.Cursor
	cases := []struct {
		name string
		call func() error
	}{
		{"Apply nil batch", func() error { return db.Apply(ctx, nil) }},
		{"Apply nil context", func() error { b := &kvstore.Batch{}; b.Put([]byte("x"), nil); return db.Apply(nilCtx, b) }},
		{"Update nil fn", func() error { return db.Update(ctx, nil) }},
		{"View nil fn", func() error { return db.View(ctx, nil) }},
		{"Update nil context", func() error { return db.Update(nilCtx, func(*kvstore.Tx) error { return nil }) }},
		{"View nil context", func() error { return db.View(nilCtx, func(*kvstore.Tx) error { return nil }) }},
		{"Begin nil context", func() error { _, err := db.Begin(nilCtx, true); return err }},
		{"PurgeExpired nil context", func() error { _, err := db.PurgeExpired(nilCtx); return err }},
		{"PurgeExpiredN nil context", func() error { _, err := db.PurgeExpiredN(nilCtx, 5); return err }},
		{"PurgeExpiredAll nil context", func() error { _, err := db.PurgeExpiredAll(nilCtx); return err }},
		{"Checkpoint nil context", func() error { _, err := db.Checkpoint(nilCtx, kvstore.CheckpointPassive); return err }},
		{"Vacuum nil context", func() error { return db.Vacuum(nilCtx) }},
		{"IncrementalVacuum nil context", func() error { return db.IncrementalVacuum(nilCtx, 0) }},
		{"Backup nil context", func() error { return db.Backup(nilCtx, t.TempDir()+"/b.db") }},
		{"IntegrityCheck nil context", func() error { return db.IntegrityCheck(nilCtx) }},
		{"Stats nil context", func() error { _, err := db.Stats(nilCtx); return err }},
		{"CheckTTL nil context", func() error { _, err := db.CheckTTL(nilCtx); return err }},
		{"tx.CF nil handle", func() error {
			return db.Update(ctx, func(tx *kvstore.Tx) error { return tx.CF(nil).Put(b("x"), b("y")) })
		}},
		{"tx.CF nil handle read", func() error {
			return db.View(ctx, func(tx *kvstore.Tx) error { _, err := tx.CF(nil).Get(b("k")); return err })
		}},
		{"nil Store Close", func() error { return nilStore.Close() }},
		{"nil Store Begin", func() error { _, err := nilStore.Begin(ctx, false); return err }},
		{"nil Store Update", func() error { return nilStore.Update(ctx, func(*kvstore.Tx) error { return nil }) }},
		{"nil Store CreateColumnFamily", func() error { _, err := nilStore.CreateColumnFamily("a"); return err }},
		{"nil Store OpenColumnFamily", func() error { _, err := nilStore.OpenColumnFamily("a"); return err }},
		{"nil Store ColumnFamilyOrCreate", func() error { _, err := nilStore.ColumnFamilyOrCreate("a"); return err }},
		{"nil Store DropColumnFamily", func() error { return nilStore.DropColumnFamily("a") }},
		{"nil Store ListColumnFamilies", func() error { _, err := nilStore.ListColumnFamilies(); return err }},
		{"nil Store Backup", func() error { return nilStore.Backup(ctx, "x") }},
		{"nil Store Default Put", func() error { return nilStore.Default().Put(b("k"), b("v")) }},
		{"nil CF Get", func() error { _, err := nilCF.Get(b("k")); return err }},
		{"nil CF Exists", func() error { _, err := nilCF.Exists(b("k")); return err }},
		{"nil CF Put", func() error { return nilCF.Put(b("k"), b("v")) }},
		{"nil CF PutTTL", func() error { return nilCF.PutTTL(b("k"), b("v"), time.Hour) }},
		{"nil CF PutExpireAt", func() error { return nilCF.PutExpireAt(b("k"), b("v"), time.Now().Add(time.Hour)) }},
		{"nil CF PutIfAbsent", func() error { _, err := nilCF.PutIfAbsent(b("k"), b("v")); return err }},
		{"nil CF Delete", func() error { return nilCF.Delete(b("k")) }},
		{"nil CF Count", func() error { _, err := nilCF.Count(); return err }},
		{"nil CF Clear", func() error { return nilCF.Clear() }},
		{"nil CF GetMany", func() error { _, err := nilCF.GetMany([][]byte{b("k")}); return err }},
		{"nil CF TTL", func() error { _, err := nilCF.TTL(b("k")); return err }},
		{"nil CF Expire", func() error { return nilCF.Expire(b("k"), time.Hour) }},
		{"nil CF Persist", func() error { return nilCF.Persist(b("k")) }},
		{"nil CF Apply", func() error { return nilCF.Apply(ctx, &kvstore.Batch{}) }},
		{"nil CF Cursor", func() error { _, err := nilCF.Cursor(kvstore.IterOptions{}); return err }},
		{"nil CF All", func() error {
			for _, err := range nilCF.All() {
				return err
			}
			return nil
		}},
		{"nil Tx Commit", func() error { return nilTx.Commit() }},
		{"nil Tx Rollback", func() error { return nilTx.Rollback() }},
		{"nil Tx CF", func() error { return nilTx.CF(db.Default()).Put(b("k"), b("v")) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = c.call() })
			require.ErrorIs(t, err, kvstore.ErrInvalidArgument)
		})
	}
	// A nil cursor reports itself closed.
	require.NotPanics(t, func() {
		require.False(t, nilCursor.First())
		require.False(t, nilCursor.Next())
		require.False(t, nilCursor.Seek(b("a")))
		require.False(t, nilCursor.Valid())
		require.Nil(t, nilCursor.Key())
		require.ErrorIs(t, nilCursor.Err(), iterator.ErrClosedCursor)
		require.ErrorIs(t, nilCursor.Close(), iterator.ErrClosedCursor)
		require.Equal(t, "", nilCF.Name())
		require.False(t, nilCF.HasTTL())
	})
	// Nothing was written by any of them.
	require.Equal(t, []kv{{"k", "v"}}, contents(t, db.Default()))
}

// A busy timeout SQLite cannot hold is refused, not wrapped to a negative
// (no waiting) value.
func TestBusyTimeoutLimit(t *testing.T) {
	_, err := kvstore.Open(tempPath(t), kvstore.Options{BusyTimeout: kvstore.MaxBusyTimeout + time.Millisecond})
	require.ErrorIs(t, err, kvstore.ErrInvalidOption)
	_, err = kvstore.Open(tempPath(t), kvstore.Options{BusyTimeout: 30 * 24 * time.Hour})
	require.ErrorIs(t, err, kvstore.ErrInvalidOption)
	db := openTemp(t, kvstore.Options{BusyTimeout: kvstore.MaxBusyTimeout})
	require.NoError(t, db.Put(b("k"), b("v")))
}

// Update whose function commits (or rolls back) itself reports what
// happened instead of ErrTxDone.
func TestUpdateWhoseFunctionEndsTheTransaction(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	ctx := context.Background()
	err := db.Update(ctx, func(tx *kvstore.Tx) error {
		require.NoError(t, tx.Put(b("a"), b("1")))
		return tx.Commit()
	})
	require.NoError(t, err)
	v, err := db.Get(b("a"))
	require.NoError(t, err)
	require.Equal(t, "1", string(v))

	err = db.Update(ctx, func(tx *kvstore.Tx) error {
		require.NoError(t, tx.Put(b("b"), b("2")))
		return tx.Rollback()
	})
	require.ErrorIs(t, err, kvstore.ErrTxDone)
	_, err = db.Get(b("b"))
	require.ErrorIs(t, err, kvstore.ErrNotFound)

	// Committed, then fn fails: the error is fn's, the data stays.
	boom := errors.New("boom")
	err = db.Update(ctx, func(tx *kvstore.Tx) error {
		require.NoError(t, tx.Put(b("c"), b("3")))
		require.NoError(t, tx.Commit())
		return boom
	})
	require.ErrorIs(t, err, boom)
	_, err = db.Get(b("c"))
	require.NoError(t, err)

	// View whose function commits its read transaction: nil.
	require.NoError(t, db.View(ctx, func(tx *kvstore.Tx) error { return tx.Commit() }))
	// The store is still usable: the writer was given back.
	require.NoError(t, db.Put(b("d"), b("4")))
}
