package kvstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// staleCalls runs every call of a handle and returns each one's error.
func staleCalls(cf *kvstore.ColumnFamily) map[string]error {
	ctx := context.Background()
	out := map[string]error{}
	_, out["Get"] = cf.Get(b("k"))
	_, out["Exists"] = cf.Exists(b("k"))
	_, out["GetMany"] = cf.GetMany([][]byte{b("k"), b("zz")})
	_, out["TTL"] = cf.TTL(b("k"))
	_, out["Count"] = cf.Count()
	out["Put"] = cf.Put(b("k2"), b("stale"))
	out["PutTTL"] = cf.PutTTL(b("k3"), b("stale"), time.Hour)
	_, out["PutIfAbsent"] = cf.PutIfAbsent(b("k4"), b("stale"))
	out["Delete"] = cf.Delete(b("k"))
	out["Expire"] = cf.Expire(b("k"), time.Hour)
	out["Persist"] = cf.Persist(b("k"))
	var bt kvstore.Batch
	bt.Put(b("k5"), b("stale"))
	bt.Delete(b("k"))
	out["Apply"] = cf.Apply(ctx, &bt)
	out["Clear"] = cf.Clear()
	for _, err := range cf.All() {
		out["All"] = err
	}
	return out
}

// A handle whose column family another store (or process) dropped fails
// every call with ErrNotFound, and never writes into a column family of
// the same name created since.
func TestStaleHandleAfterDropElsewhere(t *testing.T) {
	clk := kvstore.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	path := tempPath(t)
	a := openAt(t, path, kvstore.Options{Clock: clk})
	bStore := openAt(t, path, kvstore.Options{Clock: clk})
	cfA, err := a.CreateColumnFamily("x")
	require.NoError(t, err)
	require.NoError(t, cfA.Put(b("k"), b("v")))
	require.NoError(t, bStore.DropColumnFamily("x"))

	for call, err := range staleCalls(cfA) {
		require.ErrorIs(t, err, kvstore.ErrNotFound, "%s after the drop", call)
	}

	// Created again elsewhere: the old handle still fails, and wrote
	// nothing into the new one. (Only a column family created, dropped and
	// created again within one millisecond of the clock gets the same
	// creation stamp; see docs/concurrency.md.)
	for _, advance := range []time.Duration{time.Second, time.Hour} {
		cfA, err = a.ColumnFamilyOrCreate("y")
		require.NoError(t, err)
		require.NoError(t, cfA.Put(b("k"), b("old")))
		clk.Advance(advance)
		require.NoError(t, bStore.DropColumnFamily("y"))
		cfB, err := bStore.CreateColumnFamily("y")
		require.NoError(t, err)
		require.NoError(t, cfB.Put(b("k"), b("new")))
		for call, err := range staleCalls(cfA) {
			require.ErrorIs(t, err, kvstore.ErrNotFound, "%s after the re-creation", call)
		}
		require.Equal(t, []kv{{"k", "new"}}, contents(t, cfB), "the stale handle wrote nothing")
		// A handle opened now is the new column family's.
		fresh, err := a.OpenColumnFamily("y")
		require.NoError(t, err)
		v, err := fresh.Get(b("k"))
		require.NoError(t, err)
		require.Equal(t, "new", string(v))
		require.NoError(t, bStore.DropColumnFamily("y"))
	}
}
