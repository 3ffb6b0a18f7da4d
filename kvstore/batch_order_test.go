package kvstore_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TestApplyLargeBatchActsInOrder checks that a batch large enough to be
// written in key order leaves what writing its operations one by one in
// the order they were added leaves: a later put, TTL put or delete of a key
// wins, whatever the keys' order in the batch.
func TestApplyLargeBatchActsInOrder(t *testing.T) {
	ctx := context.Background()
	clk := kvstore.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, err := kvstore.Open(filepath.Join(t.TempDir(), "b.db"), kvstore.Options{Clock: clk})
	require.NoError(t, err)
	defer s.Close()
	cf, err := s.CreateColumnFamily("c")
	require.NoError(t, err)

	type want struct {
		value []byte
		ttl   time.Duration // 0: none
	}
	model := map[string]*want{}
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 5 {
		var b kvstore.Batch
		for i := range 500 {
			k := batchOrderKey(r.IntN(240))
			switch r.IntN(4) {
			case 0:
				b.Delete(k)
				delete(model, string(k))
			case 1:
				d := time.Duration(1+r.IntN(60)) * time.Minute
				v := fmt.Appendf(nil, "r%d-%d-ttl", round, i)
				b.PutTTL(k, v, d)
				model[string(k)] = &want{v, d}
			default:
				v := fmt.Appendf(nil, "r%d-%d", round, i)
				b.Put(k, v)
				model[string(k)] = &want{v, 0}
			}
		}
		require.NoError(t, cf.Apply(ctx, &b))
		for i := range 240 {
			k := batchOrderKey(i)
			w := model[string(k)]
			v, left, err := cf.GetTTL(k)
			if w == nil {
				require.ErrorIs(t, err, kvstore.ErrNotFound, "key %s", k)
				continue
			}
			require.NoError(t, err, "key %s", k)
			require.Equal(t, w.value, v, "key %s", k)
			if w.ttl == 0 {
				require.Equal(t, kvstore.NoTTL, left, "key %s", k)
			} else {
				require.Equal(t, w.ttl, left, "key %s", k)
			}
		}
	}
}

// batchOrderKey is key i of TestApplyLargeBatchActsInOrder: short keys,
// and long ones that share their first eight bytes and more.
func batchOrderKey(i int) []byte {
	if i%2 == 0 {
		return fmt.Appendf(nil, "k%03d", i)
	}
	return fmt.Appendf(nil, "shared-prefix-%03d", i)
}

// TestApplyLargeBatchFeedOrder checks what a change feed records of a
// large batch: every change, in key order, and a key's changes in the
// order the batch added them.
func TestApplyLargeBatchFeedOrder(t *testing.T) {
	ctx := context.Background()
	s, err := kvstore.Open(filepath.Join(t.TempDir(), "f.db"), kvstore.Options{})
	require.NoError(t, err)
	defer s.Close()
	cf, err := s.CreateColumnFamily("c")
	require.NoError(t, err)
	require.NoError(t, changefeed.Enable(ctx, s, "c", changefeed.Options{KeepValues: true}))
	require.NoError(t, cf.Put([]byte("k050"), []byte("old"))) // so its delete is recorded
	from, err := changefeed.Now(ctx, s)
	require.NoError(t, err)

	var b kvstore.Batch
	for i := 99; i >= 0; i-- { // descending: the batch is out of key order
		b.Put(fmt.Appendf(nil, "k%03d", i), []byte("first"))
	}
	b.Delete([]byte("k050"))
	b.Put([]byte("k007"), []byte("second"))
	require.NoError(t, cf.Apply(ctx, &b))

	rd, err := changefeed.NewReader(ctx, s, from, changefeed.ReaderOptions{})
	require.NoError(t, err)
	got, err := rd.Read(ctx)
	require.NoError(t, err)
	require.Len(t, got, 102)
	var prev []byte
	for i, c := range got {
		require.GreaterOrEqual(t, bytes.Compare(c.Key, prev), 0, "change %d out of key order", i)
		prev = c.Key
	}
	at := func(key string) (ops []changefeed.Op, values []string) {
		for _, c := range got {
			if string(c.Key) == key {
				ops, values = append(ops, c.Op), append(values, string(c.Value))
			}
		}
		return ops, values
	}
	ops, values := at("k050")
	require.Equal(t, []changefeed.Op{changefeed.OpPut, changefeed.OpDelete}, ops)
	require.Equal(t, "first", values[0])
	ops, values = at("k007")
	require.Equal(t, []changefeed.Op{changefeed.OpPut, changefeed.OpPut}, ops)
	require.Equal(t, []string{"first", "second"}, values)
	_, err = cf.Get([]byte("k050"))
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	v, err := cf.Get([]byte("k007"))
	require.NoError(t, err)
	require.Equal(t, "second", string(v))
}
