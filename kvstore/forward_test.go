package kvstore_test

import (
	"context"
	"iter"
	"reflect"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// defaultCF is the part of the ColumnFamily method set that can fail,
// which Store and Tx offer for their default column family.
type defaultCF interface {
	All() iter.Seq2[kvstore.Entry, error]
	Apply(ctx context.Context, b *kvstore.Batch) error
	Backward() iter.Seq2[kvstore.Entry, error]
	CheckTTL(ctx context.Context) ([]string, error)
	Clear() error
	Count() (int64, error)
	Cursor(opts kvstore.IterOptions) (*kvstore.Cursor, error)
	Delete(key []byte) error
	DeleteRange(ctx context.Context, start, end []byte) (int64, error)
	DeleteRangeInBatches(ctx context.Context, start, end []byte, batch int) (int64, error)
	Exists(key []byte) (bool, error)
	Expire(key []byte, d time.Duration) error
	ExpireAt(key []byte, at time.Time) error
	Get(key []byte) ([]byte, error)
	GetMany(keys [][]byte) ([][]byte, error)
	GetTTL(key []byte) ([]byte, time.Duration, error)
	Persist(key []byte) error
	Prefix(prefix []byte) iter.Seq2[kvstore.Entry, error]
	PurgeExpired(ctx context.Context) (int, error)
	PurgeExpiredN(ctx context.Context, max int) (int, error)
	Put(key, value []byte) error
	PutExpireAt(key, value []byte, at time.Time) error
	PutIfAbsent(key, value []byte) (bool, error)
	PutIfAbsentTTL(key, value []byte, d time.Duration) (bool, error)
	PutTTL(key, value []byte, d time.Duration) error
	Range(start, end []byte) iter.Seq2[kvstore.Entry, error]
	Scan(opts kvstore.IterOptions) iter.Seq2[kvstore.Entry, error]
	TTL(key []byte) (time.Duration, error)
}

// seqErrs drains seq and returns the errors it yielded, failing the test
// if it yielded an entry.
func seqErrs(t *testing.T, seq iter.Seq2[kvstore.Entry, error]) []error {
	t.Helper()
	var errs []error
	for e, err := range seq {
		require.Error(t, err, "yielded entry %q", e.Key)
		errs = append(errs, err)
	}
	return errs
}

// defaultCFCalls returns a call of every method of defaultCF, made through
// h. Each returns the call's error; an iteration returns the errors it
// yielded.
func defaultCFCalls(t *testing.T, h defaultCF) map[string]func() []error {
	ctx := context.Background()
	at := time.Now().Add(time.Hour)
	one := func(err error) []error { return []error{err} }
	return map[string]func() []error{
		"All":      func() []error { return seqErrs(t, h.All()) },
		"Apply":    func() []error { bt := &kvstore.Batch{}; bt.Put(b("k"), b("v")); return one(h.Apply(ctx, bt)) },
		"Backward": func() []error { return seqErrs(t, h.Backward()) },
		"CheckTTL": func() []error { _, err := h.CheckTTL(ctx); return one(err) },
		"Clear":    func() []error { return one(h.Clear()) },
		"Count":    func() []error { _, err := h.Count(); return one(err) },
		"Cursor": func() []error {
			c, err := h.Cursor(kvstore.IterOptions{})
			require.Nil(t, c)
			return one(err)
		},
		"Delete":      func() []error { return one(h.Delete(b("k"))) },
		"DeleteRange": func() []error { _, err := h.DeleteRange(ctx, nil, nil); return one(err) },
		"DeleteRangeInBatches": func() []error {
			_, err := h.DeleteRangeInBatches(ctx, nil, nil, 10)
			return one(err)
		},
		"Exists":         func() []error { _, err := h.Exists(b("k")); return one(err) },
		"Expire":         func() []error { return one(h.Expire(b("k"), time.Hour)) },
		"ExpireAt":       func() []error { return one(h.ExpireAt(b("k"), at)) },
		"Get":            func() []error { _, err := h.Get(b("k")); return one(err) },
		"GetMany":        func() []error { _, err := h.GetMany([][]byte{b("k")}); return one(err) },
		"GetTTL":         func() []error { _, _, err := h.GetTTL(b("k")); return one(err) },
		"Persist":        func() []error { return one(h.Persist(b("k"))) },
		"Prefix":         func() []error { return seqErrs(t, h.Prefix(b("k"))) },
		"PurgeExpired":   func() []error { _, err := h.PurgeExpired(ctx); return one(err) },
		"PurgeExpiredN":  func() []error { _, err := h.PurgeExpiredN(ctx, 5); return one(err) },
		"Put":            func() []error { return one(h.Put(b("k"), b("v"))) },
		"PutExpireAt":    func() []error { return one(h.PutExpireAt(b("k"), b("v"), at)) },
		"PutIfAbsent":    func() []error { _, err := h.PutIfAbsent(b("k"), b("v")); return one(err) },
		"PutIfAbsentTTL": func() []error { _, err := h.PutIfAbsentTTL(b("k"), b("v"), time.Hour); return one(err) },
		"PutTTL":         func() []error { return one(h.PutTTL(b("k"), b("v"), time.Hour)) },
		"Range":          func() []error { return seqErrs(t, h.Range(b("a"), b("z"))) },
		"Scan":           func() []error { return seqErrs(t, h.Scan(kvstore.IterOptions{})) },
		"TTL":            func() []error { _, err := h.TTL(b("k")); return one(err) },
	}
}

// Every default-column-family method of a nil *Store or a nil *Tx
// returns ErrInvalidArgument (an iteration yields it once) instead of
// panicking on the nil pointer.
func TestNilStoreAndTxDefaultMethods(t *testing.T) {
	var nilStore *kvstore.Store
	var nilTx *kvstore.Tx
	for _, h := range []struct {
		name string
		h    defaultCF
	}{{"Store", nilStore}, {"Tx", nilTx}} {
		for name, call := range defaultCFCalls(t, h.h) {
			t.Run(h.name+"/"+name, func(t *testing.T) {
				var errs []error
				require.NotPanics(t, func() { errs = call() })
				require.Len(t, errs, 1)
				require.ErrorIs(t, errs[0], kvstore.ErrInvalidArgument)
			})
		}
	}
	// The accessors give zero values.
	require.NotPanics(t, func() {
		require.Equal(t, "", nilStore.Name())
		require.Equal(t, "", nilTx.Name())
		require.False(t, nilStore.HasTTL())
		require.False(t, nilTx.HasTTL())
		require.Equal(t, "columnfamily()", nilStore.String())
		require.Equal(t, "columnfamily()", nilTx.String())
		require.Nil(t, nilTx.Default())
	})
}

// The calls above cover every method a ColumnFamily has: Store and Tx
// forward each of them with the same signature, so code written against
// the default column family's methods keeps compiling.
func TestStoreAndTxForwardEveryColumnFamilyMethod(t *testing.T) {
	cfType := reflect.TypeFor[*kvstore.ColumnFamily]()
	covered := defaultCFCalls(t, nil)
	accessors := map[string]bool{"Name": true, "HasTTL": true, "String": true}
	for _, owner := range []reflect.Type{reflect.TypeFor[*kvstore.Store](), reflect.TypeFor[*kvstore.Tx]()} {
		for i := range cfType.NumMethod() {
			m := cfType.Method(i)
			fm, ok := owner.MethodByName(m.Name)
			require.True(t, ok, "%v lacks %s", owner, m.Name)
			// Drop the receivers and compare the rest of the signatures.
			require.Equal(t, m.Type.NumIn(), fm.Type.NumIn(), "%v.%s", owner, m.Name)
			for j := 1; j < m.Type.NumIn(); j++ {
				require.Equal(t, m.Type.In(j), fm.Type.In(j), "%v.%s argument %d", owner, m.Name, j)
			}
			require.Equal(t, m.Type.NumOut(), fm.Type.NumOut(), "%v.%s", owner, m.Name)
			for j := range m.Type.NumOut() {
				require.Equal(t, m.Type.Out(j), fm.Type.Out(j), "%v.%s result %d", owner, m.Name, j)
			}
			_, tested := covered[m.Name]
			require.True(t, tested || accessors[m.Name], "%s has no nil-receiver test", m.Name)
		}
	}
}

// The forwarding methods act on the default column family, in the
// transaction for a Tx; Tx.Default returns that bound handle.
func TestStoreAndTxForwardToDefault(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	ctx := context.Background()
	require.NoError(t, db.Put(b("a"), b("1")))
	require.Equal(t, "default", db.Name())
	require.Equal(t, db.Default().String(), db.String())
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		require.Equal(t, "default", tx.Name())
		require.NoError(t, tx.Put(b("b"), b("2")))
		v, err := tx.Default().Get(b("b"))
		require.NoError(t, err)
		require.Equal(t, "2", string(v))
		return tx.Default().Delete(b("a"))
	}))
	require.Equal(t, []kv{{"b", "2"}}, contents(t, db.Default()))
	// A handle taken from a finished transaction is done with it.
	var kept *kvstore.ColumnFamily
	require.NoError(t, db.View(ctx, func(tx *kvstore.Tx) error { kept = tx.Default(); return nil }))
	_, err := kept.Get(b("b"))
	require.ErrorIs(t, err, kvstore.ErrTxDone)
}
