package columnfamily_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/columnfamily"
	"github.com/snkv-go/snkv/internal/catalog"
	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/family"
	"github.com/snkv-go/snkv/iterator"
	"github.com/snkv-go/snkv/ttl"
	"github.com/stretchr/testify/require"
)

// store is a registry on a new file, opened as kvstore.Open opens one,
// with a manual clock.
type store struct {
	reg   *catalog.Registry
	db    *engine.DB
	clock *ttl.ManualClock
}

func openStore(t *testing.T) *store {
	t.Helper()
	db, err := engine.Open(engine.Config{Path: filepath.Join(t.TempDir(), "s.db"), Journal: "WAL", Sync: "NORMAL", BusyTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	clock := ttl.NewManualClock(time.Unix(1_700_000_000, 0))
	r := catalog.NewRegistry(&family.Env{DB: db, Clock: clock, MaxValueSize: family.DefaultMaxValueSize})
	require.NoError(t, r.Init(context.Background(), false))
	return &store{reg: r, db: db, clock: clock}
}

// create makes column family name and returns its handle, built as
// kvstore builds one.
func (s *store) create(t *testing.T, name string) *columnfamily.ColumnFamily {
	t.Helper()
	f, err := s.reg.Create(context.Background(), name)
	require.NoError(t, err)
	return family.NewHandle(f).(*columnfamily.ColumnFamily)
}

func b(s string) []byte { return []byte(s) }

// The constructors columnfamily registers at init build handles: none for
// no family, a failing one for a nil handle, one of another store that
// fails with ErrForeignHandle inside this store's transaction.
func TestHandles(t *testing.T) {
	require.Nil(t, family.NewHandle(nil).(*columnfamily.ColumnFamily))
	s, other := openStore(t), openStore(t)
	cf := s.create(t, "users")
	require.Equal(t, "users", cf.Name())
	require.Equal(t, "columnfamily(users)", cf.String())

	tx, err := s.db.Begin(context.Background(), true)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	bound := family.BindHandle(cf, tx).(*columnfamily.ColumnFamily)
	require.NoError(t, bound.Put(b("k"), b("v")))
	none := family.BindHandle((*columnfamily.ColumnFamily)(nil), tx).(*columnfamily.ColumnFamily)
	require.ErrorIs(t, none.Put(b("k"), b("v")), engine.ErrInvalidArgument)
	foreign := family.BindHandle(other.create(t, "users"), tx).(*columnfamily.ColumnFamily)
	require.ErrorIs(t, foreign.Put(b("k"), b("v")), engine.ErrForeignHandle)
}

func TestPointOperations(t *testing.T) {
	cf := openStore(t).create(t, "users")
	require.NoError(t, cf.Put(b("a"), b("1")))
	require.NoError(t, cf.Put(b("b"), nil))
	v, err := cf.Get(b("b"))
	require.NoError(t, err)
	require.Equal(t, []byte{}, v, "nil is stored as an empty value")
	ok, err := cf.Exists(b("a"))
	require.NoError(t, err)
	require.True(t, ok)
	wrote, err := cf.PutIfAbsent(b("a"), b("2"))
	require.NoError(t, err)
	require.False(t, wrote)
	many, err := cf.GetMany([][]byte{b("a"), b("zz")})
	require.NoError(t, err)
	require.Equal(t, [][]byte{b("1"), nil}, many)
	n, err := cf.Count()
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	require.NoError(t, cf.Delete(b("a")))
	require.ErrorIs(t, cf.Delete(b("a")), engine.ErrNotFound)
	_, err = cf.Get(b("a"))
	require.ErrorIs(t, err, engine.ErrNotFound)
	require.ErrorIs(t, cf.Put(nil, b("v")), engine.ErrInvalidKey)
}

// Cursor returns the public cursor over the column family's keys, in the
// order and range its options say; Scan yields the same entries.
func TestIterations(t *testing.T) {
	cf := openStore(t).create(t, "users")
	for _, k := range []string{"a1", "a2", "b1", "c1"} {
		require.NoError(t, cf.Put(b(k), b("v"+k)))
	}
	cur, err := cf.Cursor(iterator.Options{Prefix: b("a"), Reverse: true})
	require.NoError(t, err)
	var keys []string
	for ok := cur.First(); ok; ok = cur.Next() {
		keys = append(keys, string(cur.Key()))
	}
	require.NoError(t, cur.Err())
	require.NoError(t, cur.Close())
	require.Equal(t, []string{"a2", "a1"}, keys)

	keys = nil
	for e, err := range cf.Range(b("a2"), b("c1")) {
		require.NoError(t, err)
		require.Equal(t, "v"+string(e.Key), string(e.Value))
		keys = append(keys, string(e.Key))
	}
	require.Equal(t, []string{"a2", "b1"}, keys)
}

// A batch is checked whole before anything is written.
func TestApply(t *testing.T) {
	cf := openStore(t).create(t, "users")
	var batch columnfamily.Batch
	batch.Put(b("a"), b("1"))
	batch.Delete(nil)
	err := cf.Apply(context.Background(), &batch)
	require.ErrorIs(t, err, engine.ErrInvalidKey)
	require.Contains(t, err.Error(), "batch operation 1")
	_, err = cf.Get(b("a"))
	require.ErrorIs(t, err, engine.ErrNotFound, "nothing written")
	batch.Reset()
	batch.Put(b("a"), b("1"))
	batch.PutTTL(b("t"), b("2"), time.Minute)
	require.NoError(t, cf.Apply(context.Background(), &batch))
	require.True(t, cf.HasTTL())
	require.ErrorIs(t, cf.Apply(context.Background(), nil), engine.ErrInvalidArgument)
}

// Keys expire by the store's clock, and PurgeExpired removes them.
func TestTTL(t *testing.T) {
	s := openStore(t)
	cf := s.create(t, "sessions")
	require.NoError(t, cf.PutTTL(b("k"), b("v"), time.Minute))
	require.NoError(t, cf.Put(b("p"), b("v")))
	left, err := cf.TTL(b("k"))
	require.NoError(t, err)
	require.Equal(t, time.Minute, left)
	left, err = cf.TTL(b("p"))
	require.NoError(t, err)
	require.Equal(t, ttl.NoTTL, left)
	s.clock.Advance(time.Minute)
	_, err = cf.Get(b("k"))
	require.ErrorIs(t, err, engine.ErrNotFound, "expired at its expiry")
	require.NoError(t, cf.PutTTL(b("k2"), b("v"), time.Second))
	s.clock.Advance(time.Second)
	n, err := cf.PurgeExpired(context.Background())
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, 1)
	problems, err := cf.CheckTTL(context.Background())
	require.NoError(t, err)
	require.Empty(t, problems)
}

// A handle of a dropped column family fails with ErrNotFound, and never
// reaches a column family of the same name created since.
func TestDroppedHandle(t *testing.T) {
	s := openStore(t)
	old := s.create(t, "users")
	require.NoError(t, old.Put(b("k"), b("old")))
	require.NoError(t, s.reg.Drop(context.Background(), "users"))
	s.clock.Advance(time.Millisecond)
	fresh := s.create(t, "users")
	require.ErrorIs(t, old.Put(b("k"), b("x")), engine.ErrNotFound)
	_, err := old.Get(b("k"))
	require.ErrorIs(t, err, engine.ErrNotFound)
	_, err = fresh.Get(b("k"))
	require.ErrorIs(t, err, engine.ErrNotFound, "the new one is empty")
}
