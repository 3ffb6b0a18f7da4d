package kvstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/snkv-go/snkv/iterator"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// rangeModel fills cf and a model with keys k000..k099 and returns the
// model.
func rangeModel(t *testing.T, cf *kvstore.ColumnFamily) model {
	t.Helper()
	m := model{}
	var bt kvstore.Batch
	for i := range 100 {
		k, v := fmt.Sprintf("k%03d", i), fmt.Sprintf("v%d", i)
		bt.Put(b(k), b(v))
		m[k] = v
	}
	require.NoError(t, cf.Apply(context.Background(), &bt))
	return m
}

// deleteModel deletes the keys of [start, end) from m and returns how many.
func (m model) deleteRange(start, end []byte) int64 {
	var n int64
	for _, p := range m.selectKeys(kvstore.IterOptions{Start: start, End: end}) {
		delete(m, p.K)
		n++
	}
	return n
}

// DeleteRange deletes exactly the keys of [start, end), open at a nil end,
// and returns how many; a reversed range is refused.
func TestDeleteRange(t *testing.T) {
	inEachKind(t, kvstore.Options{}, func(t *testing.T, db *kvstore.Store) {
		cf := db.Default()
		m := rangeModel(t, cf)
		ctx := context.Background()
		for _, r := range []struct{ start, end []byte }{
			{b("k010"), b("k020")},
			{b("k005"), b("k012")}, // overlaps what is gone
			{b("k050"), b("k050")}, // empty
			{nil, []byte{}},        // an empty end bounds nothing
			{nil, b("k003")},
			{b("k095"), nil},
			{b("k030"), iterator.PrefixEnd(b("k03"))}, // a prefix
			{[]byte{}, b("k040")},
			{nil, nil},
		} {
			want := m.deleteRange(r.start, r.end)
			n, err := cf.DeleteRange(ctx, r.start, r.end)
			require.NoError(t, err, "[%q, %q)", r.start, r.end)
			require.Equal(t, want, n, "[%q, %q)", r.start, r.end)
			require.Equal(t, m.sorted(), contents(t, cf), "[%q, %q)", r.start, r.end)
		}
		_, err := cf.DeleteRange(ctx, b("z"), b("a"))
		require.ErrorIs(t, err, kvstore.ErrInvalidArgument)
		_, err = cf.DeleteRange(ctx, b("k090"), []byte{})
		require.ErrorIs(t, err, kvstore.ErrInvalidArgument, "start after an empty end")
		//lint:ignore SA1012 a nil context is refused, which is what is tested
		_, err = cf.DeleteRange(nil, nil, nil) //nolint:staticcheck
		require.ErrorIs(t, err, kvstore.ErrInvalidArgument)
	})
}

// The TTL state of the keys deleted goes with them: the counts, the TTL
// check and a key written again (permanent) say so; expired keys of the
// range are deleted but not counted.
func TestDeleteRangeTTL(t *testing.T) {
	clock := kvstore.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	db := openTemp(t, kvstore.Options{Clock: clock})
	ctx := context.Background()
	cf, err := db.CreateColumnFamily("sessions")
	require.NoError(t, err)
	for i := range 20 {
		k := b(fmt.Sprintf("s%02d", i))
		switch i % 3 {
		case 0:
			require.NoError(t, cf.Put(k, b("permanent")))
		case 1:
			require.NoError(t, cf.PutTTL(k, b("short"), time.Minute))
		default:
			require.NoError(t, cf.PutTTL(k, b("long"), time.Hour))
		}
	}
	clock.Advance(2 * time.Minute) // the i%3 == 1 keys expire
	before, err := db.CountKeys(ctx, "sessions")
	require.NoError(t, err)
	require.Equal(t, int64(20), before.Stored)
	require.Equal(t, int64(7), before.Expired) // 1, 4, ..., 19

	// [s00, s10): 0 3 6 9 permanent, 2 5 8 live with a TTL, 1 4 7 expired.
	n, err := cf.DeleteRange(ctx, b("s00"), b("s10"))
	require.NoError(t, err)
	require.Equal(t, int64(7), n, "live keys only")
	after, err := db.CountKeys(ctx, "sessions")
	require.NoError(t, err)
	require.Equal(t, kvstore.KeyCounts{Name: "sessions", Stored: 10, Live: 6, TTL: 7, Expired: 4}, after)
	problems, err := cf.CheckTTL(ctx)
	require.NoError(t, err)
	require.Empty(t, problems)
	require.NoError(t, db.IntegrityCheck(ctx))

	require.NoError(t, cf.Put(b("s02"), b("again")))
	d, err := cf.TTL(b("s02"))
	require.NoError(t, err)
	require.Equal(t, kvstore.NoTTL, d, "no TTL of the deleted key is left behind")
	purged, err := cf.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 4, purged, "the expired keys left are those outside the range")
}

// In batches, the range is deleted as in one go; cancelled, the keys
// deleted are whole batches from the start of the range, and their count
// is what the call returns; a second call finishes.
func TestDeleteRangeInBatches(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	cf := db.Default()
	ctx := context.Background()
	m := rangeModel(t, cf)
	want := m.deleteRange(b("k007"), b("k093"))
	n, err := cf.DeleteRangeInBatches(ctx, b("k007"), b("k093"), 10)
	require.NoError(t, err)
	require.Equal(t, want, n)
	require.Equal(t, m.sorted(), contents(t, cf))
	_, err = cf.DeleteRangeInBatches(ctx, nil, nil, 0)
	require.ErrorIs(t, err, kvstore.ErrInvalidArgument)

	for stop := 1; stop < 40; stop += 3 {
		require.NoError(t, cf.Clear())
		m := rangeModel(t, cf)
		n, err := cf.DeleteRangeInBatches(newCancelAfter(stop), nil, nil, 7)
		if err == nil {
			require.Equal(t, int64(100), n)
			continue
		}
		require.ErrorIs(t, err, context.Canceled)
		require.Zero(t, n%7, "whole batches")
		left := contents(t, cf)
		require.Len(t, left, 100-int(n), "the count returned is what was deleted")
		require.Equal(t, m.sorted()[n:], left, "from the start of the range")
		rest, err := cf.DeleteRangeInBatches(ctx, nil, nil, 7)
		require.NoError(t, err)
		require.Equal(t, 100-n, rest)
	}
}

// In a transaction both delete there: a rollback keeps every key, a
// read-only transaction is refused; Store and Tx forward to default.
func TestDeleteRangeInTx(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	ctx := context.Background()
	m := rangeModel(t, db.Default())
	err := db.Update(ctx, func(tx *kvstore.Tx) error {
		n, err := tx.DeleteRange(ctx, nil, b("k050"))
		require.NoError(t, err)
		require.Equal(t, int64(50), n)
		n, err = tx.DeleteRangeInBatches(ctx, b("k050"), nil, 3)
		require.NoError(t, err)
		require.Equal(t, int64(50), n, "in one go")
		require.Empty(t, collect(t, tx.All()))
		return errors.New("roll back")
	})
	require.Error(t, err)
	require.Equal(t, m.sorted(), contents(t, db.Default()))
	require.NoError(t, db.View(ctx, func(tx *kvstore.Tx) error {
		_, err := tx.DeleteRange(ctx, nil, nil)
		require.ErrorIs(t, err, kvstore.ErrReadOnlyTx)
		return nil
	}))
	n, err := db.DeleteRange(ctx, b("k090"), nil)
	require.NoError(t, err)
	require.Equal(t, int64(10), n)

	// A handle of a column family dropped meanwhile reports ErrNotFound.
	other, err := db.CreateColumnFamily("other")
	require.NoError(t, err)
	require.NoError(t, db.DropColumnFamily("other"))
	_, err = other.DeleteRange(ctx, nil, nil)
	require.ErrorIs(t, err, kvstore.ErrNotFound)
}
