package timelog_test

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

func collectEntries(t testing.TB, seq iter.Seq2[timelog.Entry, error]) []timelog.Entry {
	t.Helper()
	return testutil.Drain(t, seq)
}

func TestValuesBufferedFlushedCompacted(t *testing.T) {
	db, _ := openStore(t)
	l := openLog(t, db, "v", manual(timelog.Options{Values: true, MemtableMaxBytes: 24 * 8, PageMaxBytes: 8 + 24*4}))
	require.True(t, l.Values())
	var hs []uint64
	for i := range 20 {
		h, err := l.AppendValue(int64(i), []byte(fmt.Sprint("v", i)))
		require.NoError(t, err)
		hs = append(hs, h)
	}
	require.True(t, slices.IsSorted(hs))
	check := func(s *timelog.Snapshot, from int) {
		es := collectEntries(t, s.AllValues())
		require.Len(t, es, 20-from)
		for i, e := range es {
			require.Equal(t, int64(from+i), e.Ts)
			require.Equal(t, hs[from+i], e.Handle)
			require.Equal(t, fmt.Sprint("v", from+i), string(e.Value))
		}
	}
	old, err := l.Snapshot()
	require.NoError(t, err)
	defer old.Close()
	check(old, 0) // partly buffered
	require.NoError(t, l.DeleteBefore(5))
	compactAll(t, l)
	require.NoError(t, l.IntegrityCheck(ctx))
	check(old, 0) // its values outlive their rows
	v, err := old.Value(hs[0])
	require.NoError(t, err)
	require.Equal(t, "v0", string(v))
	cur, err := l.Snapshot()
	require.NoError(t, err)
	defer cur.Close()
	check(cur, 5)
	_, err = cur.Value(hs[0])
	require.ErrorIs(t, err, timelog.ErrValueNotFound)
	rev := collectEntries(t, cur.RangeValuesReverse(10, 12))
	require.Equal(t, []string{"v11", "v10"}, []string{string(rev[0].Value), string(rev[1].Value)})
	fresh := collectEntries(t, l.RangeValues(10, 12))
	require.Equal(t, []string{"v10", "v11"}, []string{string(fresh[0].Value), string(fresh[1].Value)})
	require.Len(t, collectEntries(t, l.AllValues()), 15)
	require.Len(t, collectEntries(t, l.RangeValuesReverse(0, 100)), 15)
}

func TestValuesBadInputWritesNothing(t *testing.T) {
	db, _ := openStore(t)
	plain := openLog(t, db, "plain", manual(timelog.Options{}))
	_, err := plain.AppendValue(1, []byte("x"))
	require.ErrorIs(t, err, timelog.ErrNoValues)

	small, err := kvstore.Open(t.TempDir()+"/s.db", sealedOpts(kvstore.Options{Sync: kvstore.SyncOff, MaxValueSize: 128}))
	require.NoError(t, err)
	defer small.Close()
	l := openLog(t, small, "v", manual(timelog.Options{Values: true, PageMaxBytes: 8 + 24*4}))
	require.ErrorIs(t, l.Append(1, 1), timelog.ErrValuesLog)
	require.ErrorIs(t, l.AppendBatch([]timelog.Record{{Ts: 1, Handle: 1}}), timelog.ErrValuesLog)
	_, err = l.AppendValues([]int64{1, 2}, [][]byte{[]byte("ok"), bytes.Repeat([]byte("x"), 129)})
	require.ErrorIs(t, err, timelog.ErrValueTooLarge)
	_, err = l.AppendValues([]int64{1, 2}, [][]byte{[]byte("ok")})
	require.ErrorIs(t, err, timelog.ErrInvalidArgument)
	require.Empty(t, collect(t, l.All()))
	h, err := l.AppendValue(1, bytes.Repeat([]byte("x"), 128))
	require.NoError(t, err)
	require.NoError(t, l.Flush(ctx))
	s, err := l.Snapshot()
	require.NoError(t, err)
	defer s.Close()
	v, err := s.Value(h)
	require.NoError(t, err)
	require.Len(t, v, 128)
}

func TestValuesHandlesSurviveReopen(t *testing.T) {
	db, _ := openStore(t)
	l, err := timelog.Open(context.Background(), db, "v", manual(timelog.Options{Values: true}))
	require.NoError(t, err)
	first, err := l.AppendValues([]int64{3, 1, 2}, [][]byte{[]byte("a"), []byte("b"), []byte("c")})
	require.NoError(t, err)
	require.NoError(t, l.Close())
	l, err = timelog.Open(context.Background(), db, "v", manual(timelog.Options{})) // values kept without the flag
	require.NoError(t, err)
	defer l.Close()
	require.True(t, l.Values())
	h, err := l.AppendValue(0, []byte("d"))
	require.NoError(t, err)
	require.Equal(t, first+3, h)
	s, err := l.Snapshot()
	require.NoError(t, err)
	defer s.Close()
	var got []string
	for _, e := range collectEntries(t, s.AllValues()) {
		got = append(got, string(e.Value))
	}
	require.Equal(t, []string{"d", "b", "c", "a"}, got)
}

// TestValuesRefusedOnAWrittenPlainLog: a log written without values holds
// handles the caller chose, so it cannot start assigning its own (they
// would collide with the stored ones, and a stored record would have no
// value): Open with Values refuses it, writable or read-only, and changes
// nothing. A plain log never written may still become a values log.
func TestValuesRefusedOnAWrittenPlainLog(t *testing.T) {
	db, _ := openStore(t)
	l, err := timelog.Open(context.Background(), db, "p", manual(timelog.Options{}))
	require.NoError(t, err)
	require.NoError(t, l.AppendBatch(recs(1, 0, 2, 1)))
	require.NoError(t, l.Close())

	_, err = timelog.Open(context.Background(), db, "p", manual(timelog.Options{Values: true}))
	require.ErrorIs(t, err, timelog.ErrNoValues)
	_, err = timelog.OpenObjects(context.Background(), db, "p", manual(timelog.Options{}), timelog.ObjectOptions[string]{})
	require.ErrorIs(t, err, timelog.ErrNoValues)
	_, err = timelog.Open(context.Background(), db, "p", timelog.Options{Values: true, ReadOnly: true})
	require.ErrorIs(t, err, timelog.ErrNoValues)

	l = openLog(t, db, "p", manual(timelog.Options{})) // unchanged, still plain, lock released
	require.False(t, l.Values())
	require.NoError(t, l.IntegrityCheck(ctx))
	require.Equal(t, recs(1, 0, 2, 1), collect(t, l.All()))

	e, err := timelog.Open(context.Background(), db, "e", manual(timelog.Options{}))
	require.NoError(t, err)
	require.NoError(t, e.Close())
	e = openLog(t, db, "e", manual(timelog.Options{Values: true}))
	require.True(t, e.Values())
	h, err := e.AppendValue(1, []byte("a"))
	require.NoError(t, err)
	require.NoError(t, e.Flush(ctx))
	v, err := e.Value(h)
	require.NoError(t, err)
	require.Equal(t, "a", string(v))
}

func TestValuesInTransaction(t *testing.T) {
	db, _ := openStore(t)
	l := openLog(t, db, "v", manual(timelog.Options{Values: true}))
	var committed uint64
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		var err error
		committed, err = l.In(tx).AppendValue(7, []byte("in tx"))
		return err
	}))
	tx, err := db.Begin(ctx, true)
	require.NoError(t, err)
	rolled, err := l.In(tx).AppendValues([]int64{8, 9}, [][]byte{[]byte("x"), []byte("y")})
	require.NoError(t, err)
	require.NoError(t, tx.Rollback())
	h, err := l.AppendValue(10, []byte("buffered"))
	require.NoError(t, err)
	require.Greater(t, h, rolled+1)
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, l.IntegrityCheck(ctx))
	s, err := l.Snapshot()
	require.NoError(t, err)
	defer s.Close()
	es := collectEntries(t, s.AllValues())
	require.Len(t, es, 2)
	require.Equal(t, committed, es[0].Handle)
	require.Equal(t, "in tx", string(es[0].Value))
	require.Equal(t, "buffered", string(es[1].Value))
}

func TestValuesDropRemovesTable(t *testing.T) {
	db, _ := openStore(t)
	l := oneValueLog(t, db, "x")
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, l.Drop(ctx))
	names, err := layer.ListHiddenTables(ctx, db, "timelog")
	require.NoError(t, err)
	require.Empty(t, names)
}

// valueModel extends the record model with the value of every handle.
func TestValuesModelRandomized(t *testing.T) {
	steps := 3000
	if testing.Short() {
		steps = 800
	}
	seed := seedOf(t)
	t.Logf("seed %d (rerun with TIMELOG_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x51))
	// A small MaxValueSize makes value blocks of a few values, and values
	// near it lone rows.
	maxValue := []int{400, 1000, 4000}[rng.IntN(3)]
	t.Logf("MaxValueSize %d", maxValue)
	db := smallStore(t, maxValue)
	opts := randomOptions(rng)
	opts.Values = true
	l := openLog(t, db, "vm", opts)
	m := &model{}
	vals := map[uint64][]byte{}
	type snap struct {
		s *timelog.Snapshot
		m *model
	}
	var snaps []snap
	randVal := func() []byte {
		n := rng.IntN(300)
		if rng.IntN(20) == 0 {
			n = maxValue - rng.IntN(40)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return b
	}
	verify := func(step int, s *timelog.Snapshot, want *model) {
		es := collectEntries(t, s.AllValues())
		require.Len(t, es, len(want.recs), "seed %d step %d", seed, step)
		for i, e := range es {
			require.Equal(t, want.recs[i], e.Record, "seed %d step %d", seed, step)
			require.Equal(t, vals[e.Handle], e.Value, "seed %d step %d handle %d", seed, step, e.Handle)
		}
		if len(want.recs) == 0 {
			return
		}
		for range 10 { // point look-ups
			r := want.recs[rng.IntN(len(want.recs))]
			v, err := s.Value(r.Handle)
			require.NoError(t, err, "seed %d step %d handle %d", seed, step, r.Handle)
			require.Equal(t, vals[r.Handle], v, "seed %d step %d handle %d", seed, step, r.Handle)
		}
		lo := want.recs[rng.IntN(len(want.recs))].Ts
		rev := collectEntries(t, s.RangeValuesReverse(lo, lo+1+int64(rng.IntN(50))))
		for _, e := range rev {
			require.Equal(t, vals[e.Handle], e.Value, "seed %d step %d handle %d", seed, step, e.Handle)
		}
	}
	for step := 0; step < steps; step++ {
		switch op := rng.IntN(100); {
		case op < 40:
			v := randVal()
			ts := int64(rng.IntN(200)) - 100
			h, err := l.AppendValue(ts, v)
			require.NoError(t, err)
			vals[h] = v
			m.add(timelog.Record{Ts: ts, Handle: h})
		case op < 50:
			n := 1 + rng.IntN(20)
			ts := make([]int64, n)
			vs := make([][]byte, n)
			for i := range ts {
				ts[i], vs[i] = int64(rng.IntN(200))-100, randVal()
			}
			first, err := l.AppendValues(ts, vs)
			require.NoError(t, err)
			for i := range ts {
				vals[first+uint64(i)] = vs[i]
				m.add(timelog.Record{Ts: ts[i], Handle: first + uint64(i)})
			}
		case op < 58:
			lo := int64(rng.IntN(220)) - 110
			hi := lo + int64(rng.IntN(60))
			require.NoError(t, l.DeleteRange(lo, hi))
			if lo < hi {
				m.del(lo, hi-1)
			}
		case op < 63:
			v := randVal()
			ts := int64(rng.IntN(200)) - 100
			var h uint64
			require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
				var err error
				h, err = l.In(tx).AppendValue(ts, v)
				return err
			}))
			vals[h] = v
			m.add(timelog.Record{Ts: ts, Handle: h})
		case op < 73:
			require.NoError(t, l.Flush(ctx))
			require.NoError(t, l.IntegrityCheck(ctx), "seed %d step %d", seed, step)
		case op < 83:
			_, err := l.MaintStep(ctx)
			require.NoError(t, err)
			require.NoError(t, l.IntegrityCheck(ctx), "seed %d step %d", seed, step)
		case op < 86:
			compactAll(t, l)
			require.NoError(t, l.IntegrityCheck(ctx), "seed %d step %d", seed, step)
		case op < 93 && len(snaps) < 4: // the store has 8 read connections
			s, err := l.Snapshot()
			require.NoError(t, err)
			snaps = append(snaps, snap{s, m.clone()})
		default:
			if len(snaps) > 0 {
				i := rng.IntN(len(snaps))
				verify(step, snaps[i].s, snaps[i].m)
				require.NoError(t, snaps[i].s.Close())
				snaps = slices.Delete(snaps, i, i+1)
			}
		}
		if step%50 == 0 {
			s, err := l.Snapshot()
			require.NoError(t, err)
			verify(step, s, m)
			require.NoError(t, s.Close())
		}
	}
	for _, s := range snaps {
		verify(steps, s.s, s.m)
		require.NoError(t, s.s.Close())
	}
	compactAll(t, l)
	require.NoError(t, l.IntegrityCheck(ctx))
	s, err := l.Snapshot()
	require.NoError(t, err)
	defer s.Close()
	verify(steps, s, m)
}
