package timelog_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

// smallStore opens a store whose MaxValueSize bounds value blocks to a few
// values each.
func smallStore(t *testing.T, maxValue int) *kvstore.Store {
	t.Helper()
	db, err := kvstore.Open(t.TempDir()+"/small.db", sealedOpts(kvstore.Options{Sync: kvstore.SyncOff, MaxValueSize: maxValue}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// valueRows returns the rows of the values table of log name.
func valueRows(t testing.TB, db *kvstore.Store, name string) []hiddenRow {
	t.Helper()
	return hiddenRows(t, db, name+"/values")
}

// checkValues reads every value of want through s, by range and by point
// look-up, and checks that the handles of gone have none.
func checkValues(t *testing.T, s *timelog.Snapshot, want map[uint64]string, gone []uint64) {
	t.Helper()
	es := collectEntries(t, s.AllValues())
	require.Len(t, es, len(want))
	for _, e := range es {
		require.Equal(t, want[e.Handle], string(e.Value), "handle %d", e.Handle)
	}
	rev := collectEntries(t, s.RangeValuesReverse(-1<<62, 1<<62))
	require.Len(t, rev, len(want))
	for _, e := range rev {
		require.Equal(t, want[e.Handle], string(e.Value), "handle %d", e.Handle)
	}
	for h, v := range want {
		got, err := s.Value(h)
		require.NoError(t, err, "handle %d", h)
		require.Equal(t, v, string(got))
	}
	for _, h := range gone {
		_, err := s.Value(h)
		require.ErrorIs(t, err, timelog.ErrValueNotFound, "handle %d", h)
	}
}

// Handles inside one flush's range taken by transactions (committed: rows
// of their own, which no block may span; rolled back: holes) and records
// deleted while buffered (holes) all read back right.
func TestValueBlocksWithHoles(t *testing.T) {
	db := smallStore(t, 256)
	l := openLog(t, db, "h", manual(timelog.Options{Values: true, PageMaxBytes: 8 + 24*4}))
	want := map[uint64]string{}
	var gone []uint64
	add := func(ts int64) uint64 {
		v := fmt.Sprint("buffered ", ts)
		h, err := l.AppendValue(ts, []byte(v))
		require.NoError(t, err)
		want[h] = v
		return h
	}
	for ts := range int64(3) {
		add(ts)
	}
	var inTx uint64
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		var err error
		inTx, err = l.In(tx).AppendValues([]int64{100, 101}, [][]byte{[]byte("in tx a"), []byte("in tx b")})
		return err
	}))
	want[inTx], want[inTx+1] = "in tx a", "in tx b"
	for ts := int64(3); ts < 6; ts++ {
		add(ts)
	}
	tx, err := db.Begin(ctx, true)
	require.NoError(t, err)
	rolled, err := l.In(tx).AppendValue(102, []byte("rolled back"))
	require.NoError(t, err)
	require.NoError(t, tx.Rollback())
	gone = append(gone, rolled)
	for ts := int64(6); ts < 20; ts++ {
		add(ts)
	}
	for h, v := range want {
		if v == "buffered 7" || v == "buffered 8" {
			delete(want, h)
			gone = append(gone, h)
		}
	}
	require.NoError(t, l.DeleteRange(7, 9)) // deleted while buffered
	s, err := l.Snapshot()
	require.NoError(t, err)
	// From the buffer and the transaction's rows (a buffered value of a
	// record deleted while buffered goes at the flush).
	checkValues(t, s, want, []uint64{rolled})
	require.NoError(t, s.Close())
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, l.IntegrityCheck(ctx))
	rows := valueRows(t, db, "h")
	require.Greater(t, len(rows), 2, "several blocks")
	require.Less(t, len(rows), len(want), "many values per row")
	s, err = l.Snapshot()
	require.NoError(t, err)
	defer s.Close()
	checkValues(t, s, want, gone)
}

// Removing part of a block rewrites it; removing all of it deletes it; a
// snapshot taken before still reads every value it can return.
func TestValueBlocksPartialRemovalAndSnapshots(t *testing.T) {
	db := smallStore(t, 256)
	l := openLog(t, db, "r", manual(timelog.Options{Values: true, PageMaxBytes: 8 + 24*4}))
	all := map[uint64]string{}
	hs := make([]uint64, 40)
	for i := range hs {
		v := fmt.Sprintf("value %02d", i)
		h, err := l.AppendValue(int64(i), []byte(v))
		require.NoError(t, err)
		hs[i], all[h] = h, v
	}
	require.NoError(t, l.Flush(ctx))
	before := valueRows(t, db, "r")
	s0, err := l.Snapshot()
	require.NoError(t, err)
	defer s0.Close()

	// Part of the first block (its first handle included: the key stays),
	// and one value in the middle of another.
	require.NoError(t, l.DeleteRange(0, 2))
	require.NoError(t, l.DeleteRange(21, 22))
	compactAll(t, l)
	require.NoError(t, l.IntegrityCheck(ctx))
	after := valueRows(t, db, "r")
	require.Len(t, after, len(before), "no block emptied")
	require.Equal(t, before[0].key, after[0].key, "a rewritten block keeps its key")
	require.NotEqual(t, before[0].value, after[0].value)
	live := pick(all, hs[2:21], hs[22:])
	s1, err := l.Snapshot()
	require.NoError(t, err)
	defer s1.Close()
	checkValues(t, s1, live, []uint64{hs[0], hs[1], hs[21]})
	checkValues(t, s0, all, nil) // as before the rewrite

	require.NoError(t, l.DeleteBefore(40))
	compactAll(t, l)
	require.NoError(t, l.IntegrityCheck(ctx))
	require.Empty(t, valueRows(t, db, "r"), "emptied blocks are deleted")
	s2, err := l.Snapshot()
	require.NoError(t, err)
	defer s2.Close()
	checkValues(t, s2, map[uint64]string{}, hs)
	checkValues(t, s1, live, nil)
	checkValues(t, s0, all, nil)
}

func pick(all map[uint64]string, parts ...[]uint64) map[uint64]string {
	m := map[uint64]string{}
	for _, p := range parts {
		for _, h := range p {
			m[h] = all[h]
		}
	}
	return m
}

// Values up to the store's MaxValueSize: one that fits a block's header
// beside it shares no row; one that does not is a row of its own.
func TestValueBlocksMaxValueSize(t *testing.T) {
	const limit = 128
	db := smallStore(t, limit)
	l := openLog(t, db, "m", manual(timelog.Options{Values: true, PageMaxBytes: 8 + 24*4}))
	sizes := []int{0, 3, limit, limit - 20, limit - 19, 5, 0, limit, 7}
	want := map[uint64]string{}
	for i, n := range sizes {
		v := bytes.Repeat([]byte{byte('a' + i)}, n)
		h, err := l.AppendValue(int64(i), v)
		require.NoError(t, err)
		want[h] = string(v)
	}
	var inTx uint64
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		var err error
		inTx, err = l.In(tx).AppendValues([]int64{50, 51}, [][]byte{bytes.Repeat([]byte("T"), limit), []byte("t")})
		return err
	}))
	want[inTx], want[inTx+1] = string(bytes.Repeat([]byte("T"), limit)), "t"
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, l.IntegrityCheck(ctx))
	for _, r := range valueRows(t, db, "m") {
		require.LessOrEqual(t, len(r.value), limit)
	}
	s, err := l.Snapshot()
	require.NoError(t, err)
	checkValues(t, s, want, nil)
	for _, e := range collectEntries(t, s.AllValues()) {
		require.NotNil(t, e.Value, "an empty value is empty, not nil")
	}
	require.NoError(t, s.Close())
	require.NoError(t, l.DeleteRange(2, 5)) // the lone ones and a block
	compactAll(t, l)
	require.NoError(t, l.IntegrityCheck(ctx))
	s, err = l.Snapshot()
	require.NoError(t, err)
	defer s.Close()
	require.Len(t, collectEntries(t, s.AllValues()), len(want)-3)
}

// IntegrityCheck notices a damaged block (its own checksum: the store's
// row checksum is right), a value without its record and a record
// without its value; reads return ErrCorrupt for the damaged block.
func TestValuesIntegrityCheckFindsDamage(t *testing.T) {
	db := smallStore(t, 256)
	l := openLog(t, db, "d", manual(timelog.Options{Values: true, PageMaxBytes: 8 + 24*4}))
	var hs []uint64
	for i := range 20 {
		h, err := l.AppendValue(int64(i), fmt.Appendf(nil, "value %d", i))
		require.NoError(t, err)
		hs = append(hs, h)
	}
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, l.IntegrityCheck(ctx))
	rows := valueRows(t, db, "d")
	require.Greater(t, len(rows), 1)
	cf, err := layer.OpenHiddenTable(ctx, db, "timelog", "d/values")
	require.NoError(t, err)
	first := rows[0]

	bad := slices.Clone(first.value)
	bad[len(bad)-1] ^= 0x20
	require.NoError(t, cf.Put(first.key, bad))
	err = l.IntegrityCheck(ctx)
	require.ErrorIs(t, err, timelog.ErrCorrupt)
	require.Contains(t, err.Error(), "checksum")
	s, err := l.Snapshot()
	require.NoError(t, err)
	_, err = s.Value(hs[0])
	require.ErrorIs(t, err, timelog.ErrCorrupt)
	var last error
	for _, err := range s.AllValues() {
		last = err
	}
	require.ErrorIs(t, last, timelog.ErrCorrupt)
	require.NoError(t, s.Close())
	compactAll(t, l) // nothing to remove: compaction does not read values
	require.NoError(t, cf.Put(first.key, first.value))
	require.NoError(t, l.IntegrityCheck(ctx))

	// A copy of a block far above every handle: values without a record.
	far := binary.BigEndian.AppendUint64(nil, 1<<40)
	require.NoError(t, cf.Put(far, first.value))
	err = l.IntegrityCheck(ctx)
	require.ErrorIs(t, err, timelog.ErrCorrupt)
	require.Contains(t, err.Error(), "values without a record")
	require.NoError(t, cf.Delete(far))

	// A block gone: records without their value; deleting them fails too.
	require.NoError(t, cf.Delete(first.key))
	err = l.IntegrityCheck(ctx)
	require.ErrorIs(t, err, timelog.ErrCorrupt)
	require.Contains(t, err.Error(), "records without a value")
	require.NoError(t, l.DeleteBefore(1))
	require.NoError(t, l.Flush(ctx)) // the delete now hides a stored record
	l.Compact()
	for {
		did, err := l.MaintStep(ctx)
		if err != nil {
			require.ErrorIs(t, err, timelog.ErrCorrupt)
			break
		}
		require.True(t, did, "compaction must meet the missing value")
	}
	require.NoError(t, cf.Put(first.key, first.value))
	compactAll(t, l)
	require.NoError(t, l.IntegrityCheck(ctx))
}

// A values table in the layout before value blocks (one row per value, no
// layout row) is refused by a read-only Open, and an unknown layout by
// every Open; an empty one is adopted.
func TestValuesOldLayoutRefused(t *testing.T) {
	db, _ := openStore(t)
	l, err := timelog.Open(context.Background(), db, "old", manual(timelog.Options{Values: true}))
	require.NoError(t, err)
	require.NoError(t, l.Close())
	meta, err := layer.OpenHiddenTable(ctx, db, "timelog", "old/meta")
	require.NoError(t, err)
	vals, err := layer.OpenHiddenTable(ctx, db, "timelog", "old/values")
	require.NoError(t, err)

	require.NoError(t, meta.Delete([]byte("valueslayout"))) // empty: adopted
	l, err = timelog.Open(context.Background(), db, "old", manual(timelog.Options{}))
	require.NoError(t, err)
	require.NoError(t, l.Close())
	layout, err := meta.Get([]byte("valueslayout"))
	require.NoError(t, err)
	require.Equal(t, binary.BigEndian.AppendUint64(nil, 1), layout)

	require.NoError(t, meta.Delete([]byte("valueslayout")))
	require.NoError(t, vals.Put(binary.BigEndian.AppendUint64(nil, 0), []byte("a raw value")))
	_, err = timelog.Open(context.Background(), db, "old", timelog.Options{ReadOnly: true}) // a writable one converts (valconvert_test.go)
	require.ErrorIs(t, err, timelog.ErrValuesLayout)
	got, err := vals.Get(binary.BigEndian.AppendUint64(nil, 0))
	require.NoError(t, err)
	require.Equal(t, "a raw value", string(got), "nothing changed")

	require.NoError(t, vals.Delete(binary.BigEndian.AppendUint64(nil, 0)))
	require.NoError(t, meta.Put([]byte("valueslayout"), binary.BigEndian.AppendUint64(nil, 2)))
	_, err = timelog.Open(context.Background(), db, "old", manual(timelog.Options{}))
	require.ErrorIs(t, err, timelog.ErrValuesLayout)
}

// Stats.BufferBytes counts buffered values.
func TestValuesBufferBytes(t *testing.T) {
	db, _ := openStore(t)
	l := openLog(t, db, "b", manual(timelog.Options{Values: true, MemtableMaxBytes: 24 * 20}))
	_, err := l.AppendValues([]int64{1, 2, 3}, [][]byte{make([]byte, 100), make([]byte, 50), nil})
	require.NoError(t, err)
	require.NoError(t, l.DeleteBefore(0))
	require.Equal(t, 4*24+150, l.Stats().BufferBytes)
	_, err = l.AppendValues([]int64{4, 5}, [][]byte{make([]byte, 200), make([]byte, 200)}) // seals the first buffer
	require.NoError(t, err)
	st := l.Stats()
	require.Equal(t, 1, st.SealedRuns)
	require.Equal(t, 6*24+550, st.BufferBytes)
	require.NoError(t, l.Flush(ctx))
	require.Zero(t, l.Stats().BufferBytes)
}

// Every byte of a value block, inverted in turn (stored through the store,
// so the row's own checksum is right and only the block's can notice),
// either leaves every read exact or makes reads and IntegrityCheck return
// ErrCorrupt; no read returns a wrong value.
func TestValueBlockByteFlips(t *testing.T) {
	db := smallStore(t, 256)
	l := openLog(t, db, "f", manual(timelog.Options{Values: true, PageMaxBytes: 8 + 24*4}))
	want := map[uint64]string{}
	for i := range 12 {
		v := fmt.Sprintf("value %d", i)
		h, err := l.AppendValue(int64(i), []byte(v))
		require.NoError(t, err)
		if i != 3 {
			want[h] = v
		}
	}
	require.NoError(t, l.DeleteRange(3, 4)) // a hole in the block
	require.NoError(t, l.Flush(ctx))
	rows := valueRows(t, db, "f")
	require.Len(t, rows, 1)
	cf, err := layer.OpenHiddenTable(ctx, db, "timelog", "f/values")
	require.NoError(t, err)
	row := rows[0]
	detected := 0
	for i := range row.value {
		bad := slices.Clone(row.value)
		bad[i] ^= 0xff
		require.NoError(t, cf.Put(row.key, bad))
		s, err := l.Snapshot()
		require.NoError(t, err)
		var failed error
		for e, err := range s.AllValues() {
			if err != nil {
				failed = err
				break
			}
			require.Equal(t, want[e.Handle], string(e.Value), "flip of byte %d", i)
		}
		for h, v := range want {
			got, err := s.Value(h)
			if err != nil {
				require.ErrorIs(t, err, timelog.ErrCorrupt, "flip of byte %d", i)
				continue
			}
			require.Equal(t, v, string(got), "flip of byte %d", i)
		}
		require.NoError(t, s.Close())
		if failed != nil {
			require.ErrorIs(t, failed, timelog.ErrCorrupt, "flip of byte %d", i)
			require.ErrorIs(t, l.IntegrityCheck(ctx), timelog.ErrCorrupt, "flip of byte %d", i)
			detected++
		} else {
			require.NoError(t, l.IntegrityCheck(ctx), "flip of byte %d", i)
		}
	}
	require.Equal(t, len(row.value), detected, "every flip detected")
	require.NoError(t, cf.Put(row.key, row.value))
	require.NoError(t, l.IntegrityCheck(ctx))
}
