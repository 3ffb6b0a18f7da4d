package timelog_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

// oldLog is a values log rewritten in the values layout before value
// blocks.
type oldLog struct {
	want   map[uint64]string // the values by handle
	gone   []uint64          // handles without a value (holes)
	blocks []hiddenRow       // the value rows before the rewrite
	old    []hiddenRow       // the value rows after it
}

// writeOldLayout makes log name of db a values log as the layout before
// value blocks left it, through the hidden tables as that code wrote them:
// pages, tombstones and meta rows as today (their layout did not change),
// and the values table with one row per value, keyed by the handle (8
// bytes, big-endian), holding the value as it is, without the meta row
// "valueslayout". The records come from fill, written with today's code
// and flushed; their values are then moved to one row each.
func writeOldLayout(t testing.TB, db *kvstore.Store, name string, fill func(l *timelog.Log) []uint64) oldLog {
	t.Helper()
	l, err := timelog.Open(context.Background(), db, name, manual(timelog.Options{Values: true, MemtableMaxBytes: 64 << 20, PageMaxBytes: 8 + 24*4}))
	require.NoError(t, err)
	gone := fill(l)
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, l.IntegrityCheck(ctx))
	want := map[uint64]string{}
	for _, e := range collectEntries(t, l.AllValues()) {
		want[e.Handle] = string(e.Value)
	}
	require.NoError(t, l.Close())
	o := oldLog{want: want, gone: gone, blocks: valueRows(t, db, name)}

	vals, err := layer.OpenHiddenTable(ctx, db, "timelog", name+"/values")
	require.NoError(t, err)
	meta, err := layer.OpenHiddenTable(ctx, db, "timelog", name+"/meta")
	require.NoError(t, err)
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		for _, r := range o.blocks {
			if err := tx.CF(vals).Delete(r.key); err != nil {
				return err
			}
		}
		for h, v := range want {
			if err := tx.CF(vals).Put(binary.BigEndian.AppendUint64(nil, h), []byte(v)); err != nil {
				return err
			}
		}
		return tx.CF(meta).Delete([]byte("valueslayout"))
	}))
	o.old = valueRows(t, db, name)
	require.Len(t, o.old, len(want))
	return o
}

// layoutRow returns the meta row "valueslayout" of log name (nil: none).
func layoutRow(t *testing.T, db *kvstore.Store, name string) []byte {
	t.Helper()
	meta, err := layer.OpenHiddenTable(ctx, db, "timelog", name+"/meta")
	require.NoError(t, err)
	v, err := meta.Get([]byte("valueslayout"))
	if err != nil {
		require.ErrorIs(t, err, kvstore.ErrNotFound)
		return nil
	}
	return v
}

// sizedValues appends n values of lengths cycling through sizes, value i
// filled with byte i.
func sizedValues(t testing.TB, l *timelog.Log, n int, sizes []int) {
	t.Helper()
	ts := make([]int64, n)
	vs := make([][]byte, n)
	for i := range n {
		ts[i] = int64(i)
		vs[i] = bytes.Repeat([]byte{byte(i)}, sizes[i%len(sizes)])
	}
	_, err := l.AppendValues(ts, vs)
	require.NoError(t, err)
}

// checkConverted opens log name writable and checks that its values were
// converted to the blocks one flush of them writes, readable through every
// path.
func checkConverted(t *testing.T, db *kvstore.Store, name string, o oldLog) {
	t.Helper()
	l := openLog(t, db, name, manual(timelog.Options{}))
	require.True(t, l.Values())
	require.Equal(t, binary.BigEndian.AppendUint64(nil, 1), layoutRow(t, db, name))
	require.NoError(t, l.IntegrityCheck(ctx))
	s, err := l.Snapshot()
	require.NoError(t, err)
	checkValues(t, s, o.want, o.gone)
	require.NoError(t, s.Close())

	// Writes go on after the last handle.
	last := uint64(0)
	for h := range o.want {
		last = max(last, h)
	}
	h, err := l.AppendValue(1000, []byte("after the conversion"))
	require.NoError(t, err)
	require.Greater(t, h, last)
	o.want[h] = "after the conversion"
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, l.IntegrityCheck(ctx))
	require.NoError(t, l.Close())

	r := openLog(t, db, name, timelog.Options{ReadOnly: true})
	s, err = r.Snapshot()
	require.NoError(t, err)
	defer s.Close()
	checkValues(t, s, o.want, o.gone)
}

// A values table of one row per value is refused by a read-only Open,
// which changes nothing, and converted by a writable one into the blocks a
// flush writes: values up to MaxValueSize (lone rows among them), empty
// ones, chunks of old rows ending inside blocks.
func TestValuesOldLayoutConverted(t *testing.T) {
	const limit = 300
	sizes := []int{0, 1, 40, limit - 20, limit - 19, limit, 7, 100, 100}
	for _, chunk := range []int{1, 2, 5, 0} {
		t.Run(fmt.Sprintf("chunk=%d", chunk), func(t *testing.T) {
			defer timelog.SetConvertChunk(chunk, nil)()
			db := smallStore(t, limit)
			o := writeOldLayout(t, db, "old", func(l *timelog.Log) []uint64 {
				sizedValues(t, l, 60, sizes)
				return nil
			})
			require.Len(t, o.want, 60)

			_, err := timelog.Open(context.Background(), db, "old", timelog.Options{ReadOnly: true})
			require.ErrorIs(t, err, timelog.ErrValuesLayout)
			require.ErrorContains(t, err, "open the log writable once to convert it")
			require.Equal(t, o.old, valueRows(t, db, "old"), "a read-only open changes nothing")
			require.Nil(t, layoutRow(t, db, "old"))

			checkConverted(t, db, "old", o)
			// The rows one flush of the same values wrote (plus the new one).
			rows := valueRows(t, db, "old")
			require.Equal(t, o.blocks, rows[:len(rows)-1])
		})
	}
}

// Chunks of the default bounds over a table larger than one chunk, in rows
// and in bytes.
func TestValuesOldLayoutConvertedLarge(t *testing.T) {
	db, _ := openStore(t)
	o := writeOldLayout(t, db, "big", func(l *timelog.Log) []uint64 {
		// More than 4,096 rows, then three of 1.5 MiB: a chunk ends on its
		// byte bound.
		sizedValues(t, l, 4200, []int{100, 0, 1, 50})
		mb := bytes.Repeat([]byte{7}, 3<<19)
		_, err := l.AppendValues([]int64{1, 2, 3}, [][]byte{mb, mb, mb})
		require.NoError(t, err)
		return nil
	})
	checkConverted(t, db, "big", o)
	rows := valueRows(t, db, "big")
	require.Equal(t, o.blocks, rows[:len(rows)-1])
}

// Holes in the handles (records removed by compaction, a transaction
// rolled back, values written in a transaction) convert to the same
// values.
func TestValuesOldLayoutConvertedHoles(t *testing.T) {
	defer timelog.SetConvertChunk(3, nil)()
	db := smallStore(t, 256)
	o := writeOldLayout(t, db, "holes", func(l *timelog.Log) []uint64 {
		sizedValues(t, l, 40, []int{10, 60, 236, 256})
		tx, err := db.Begin(ctx, true)
		require.NoError(t, err)
		rolled, err := l.In(tx).AppendValues([]int64{50, 51}, [][]byte{[]byte("x"), []byte("y")})
		require.NoError(t, err)
		require.NoError(t, tx.Rollback())
		require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
			_, err := l.In(tx).AppendValues([]int64{52, 53}, [][]byte{[]byte("in tx"), nil})
			return err
		}))
		sizedValues(t, l, 20, []int{5})
		require.NoError(t, l.DeleteRange(10, 19))
		compactAll(t, l)
		return []uint64{rolled, rolled + 1}
	})
	for h := range uint64(40 + 4 + 20) {
		if _, ok := o.want[h]; !ok && h != o.gone[0] && h != o.gone[1] {
			o.gone = append(o.gone, h) // removed by the compaction
		}
	}
	require.Len(t, o.gone, 2+2*9, "holes: the rollback, ts 10 to 18 of both batches")
	checkConverted(t, db, "holes", o)
}

// A conversion that fails part way (here: an error after a few chunks
// were written in its transaction) leaves the old layout whole, and the
// next writable Open converts it.
func TestValuesOldLayoutConversionAtomic(t *testing.T) {
	db := smallStore(t, 256)
	o := writeOldLayout(t, db, "crash", func(l *timelog.Log) []uint64 {
		sizedValues(t, l, 30, []int{10, 100, 256})
		return nil
	})
	chunks := 0
	reset := timelog.SetConvertChunk(2, func() error {
		if chunks++; chunks == 3 {
			return context.Canceled
		}
		return nil
	})
	_, err := timelog.Open(context.Background(), db, "crash", manual(timelog.Options{}))
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 3, chunks)
	reset()
	require.Equal(t, o.old, valueRows(t, db, "crash"), "the old layout is whole")
	require.Nil(t, layoutRow(t, db, "crash"))
	_, err = timelog.Open(context.Background(), db, "crash", timelog.Options{ReadOnly: true})
	require.ErrorIs(t, err, timelog.ErrValuesLayout)

	checkConverted(t, db, "crash", o)
}

// A row that is not an old value row fails the conversion with ErrCorrupt
// and changes nothing.
func TestValuesOldLayoutCorruptRow(t *testing.T) {
	db := smallStore(t, 256)
	o := writeOldLayout(t, db, "bad", func(l *timelog.Log) []uint64 {
		sizedValues(t, l, 10, []int{10})
		return nil
	})
	vals, err := layer.OpenHiddenTable(ctx, db, "timelog", "bad/values")
	require.NoError(t, err)
	require.NoError(t, vals.Put([]byte("short"), []byte("?")))
	_, err = timelog.Open(context.Background(), db, "bad", manual(timelog.Options{}))
	require.ErrorIs(t, err, timelog.ErrCorrupt)
	require.Len(t, valueRows(t, db, "bad"), len(o.old)+1)
	require.Nil(t, layoutRow(t, db, "bad"))
}

// TestCrashConvertChild converts the old values table of the store at
// convertEnvPath and blocks in the middle of it, after a few chunks were
// written in its transaction, saying "blocked", until it is killed.
func TestCrashConvertChild(t *testing.T) {
	testutil.ChildOnly(t)
	path := os.Getenv(convertEnvPath)
	db, err := kvstore.Open(path, sealedOpts(kvstore.Options{MaxValueSize: 256}))
	require.NoError(t, err)
	chunks := 0
	timelog.SetConvertChunk(2, func() error {
		if chunks++; chunks == 3 {
			_, _ = os.Stdout.WriteString("blocked\n")
			select {}
		}
		return nil
	})
	_, err = timelog.Open(context.Background(), db, "killed", manual(timelog.Options{}))
	fmt.Fprintf(os.Stderr, "convert child: the conversion ended: %v\n", err)
	os.Exit(3)
}

// A process killed in the middle of a conversion leaves the old layout
// whole; the next writable Open converts it.
func TestCrashConvertKill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "convert.db")
	db, err := kvstore.Open(path, sealedOpts(kvstore.Options{Sync: kvstore.SyncOff, MaxValueSize: 256}))
	require.NoError(t, err)
	o := writeOldLayout(t, db, "killed", func(l *timelog.Log) []uint64 {
		sizedValues(t, l, 40, []int{10, 100, 256})
		return nil
	})
	require.NoError(t, db.Close())

	c := testutil.StartChild(t, "TestCrashConvertChild", convertEnvPath+"="+path)
	c.WaitFor("blocked")
	c.Kill()

	db, err = kvstore.Open(path, sealedOpts(kvstore.Options{MaxValueSize: 256}))
	require.NoError(t, err)
	defer db.Close()
	require.Equal(t, o.old, valueRows(t, db, "killed"), "the old layout is whole")
	require.Nil(t, layoutRow(t, db, "killed"))
	checkConverted(t, db, "killed", o)
}
