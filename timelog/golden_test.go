package timelog_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

// golden compares got with testdata/golden/name, or rewrites the file with
// -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	testutil.Golden(t, name, got, "the bytes a log writes changed: a format change must be deliberate (docs/format.md), then go test -run Golden -update")
}

// dumpTables writes every row of the log's tables with the given suffixes,
// in key order: the key in hex, then the value as a hex dump with its
// printable bytes beside it.
func dumpTables(t *testing.T, db *kvstore.Store, log string, suffixes ...string) string {
	t.Helper()
	var b strings.Builder
	for _, suffix := range suffixes {
		cf, err := layer.OpenHiddenTable(ctx, db, "timelog", log+suffix)
		require.NoError(t, err)
		fmt.Fprintf(&b, "table %s\n", log+suffix)
		for e, err := range cf.All() {
			require.NoError(t, err)
			fmt.Fprintf(&b, "key %x (%d bytes)\n", e.Key, len(e.Value))
			hexDump(&b, e.Value)
		}
	}
	return b.String()
}

func hexDump(b *strings.Builder, v []byte) {
	for o := 0; o < len(v); o += 16 {
		line := v[o:min(o+16, len(v))]
		fmt.Fprintf(b, "  %04x ", o)
		for i := range 16 {
			if i%4 == 0 {
				b.WriteByte(' ')
			}
			if i < len(line) {
				fmt.Fprintf(b, "%02x", line[i])
			} else {
				b.WriteString("  ")
			}
		}
		b.WriteString("  ")
		for _, c := range line {
			if c < 0x20 || c > 0x7e {
				c = '.'
			}
			b.WriteByte(c)
		}
		b.WriteByte('\n')
	}
}

// TestGoldenPages pins the bytes of the log's tables (docs/format.md): dense
// pages with their block index, the fixed 24-byte pages of older logs,
// deletes, the meta counters and page summaries.
func TestGoldenPages(t *testing.T) {
	db, _ := openStore(t)
	// A regular series, 5% of it late, in pages of at most 1,200 bytes (a
	// page of more than 256 records carries a block index entry).
	dense := openLog(t, db, "dense", manual(timelog.Options{PageMaxBytes: 1200}))
	rng := rand.New(rand.NewPCG(7, 8))
	var batch []timelog.Record
	for i := range 700 {
		ts := int64(1_000 + 10*i)
		if i > 20 && rng.IntN(20) == 0 {
			ts -= int64(1 + rng.IntN(200))
		}
		batch = append(batch, timelog.Record{Ts: ts, Handle: uint64(5_000 + i)})
	}
	require.NoError(t, dense.AppendBatch(batch))
	require.NoError(t, dense.Flush(ctx))
	require.NoError(t, dense.DeleteRange(2_000, 2_100)) // stored: it hides flushed records
	require.NoError(t, dense.Flush(ctx))
	golden(t, "pages-dense.txt", dumpTables(t, db, "dense", "/pages", "/tombs", "/meta"))

	// The widest records: the ends of the int64 range, equal timestamps
	// in append order, handles that jump across the uint64 range.
	wide := openLog(t, db, "wide", manual(timelog.Options{}))
	require.NoError(t, wide.AppendBatch([]timelog.Record{
		{Ts: math.MaxInt64, Handle: 0}, {Ts: math.MinInt64, Handle: math.MaxUint64},
		{Ts: 0, Handle: 1 << 63}, {Ts: 0, Handle: 1}, {Ts: -1, Handle: 42},
		{Ts: math.MinInt64 + 1, Handle: 1<<63 - 1},
	}))
	require.NoError(t, wide.Flush(ctx))
	golden(t, "pages-wide.txt", dumpTables(t, db, "wide", "/pages", "/meta"))

	// The fixed 24-byte layout (version 2) that logs written before dense
	// pages hold, as that code wrote it.
	fixed := openLog(t, db, "fixed", manual(timelog.Options{PageMaxBytes: 8 + 24*3}))
	reset := timelog.WriteFixedPages()
	require.NoError(t, fixed.AppendBatch(recs(3, 30, 1, 10, 2, 20, -4, 40)))
	require.NoError(t, fixed.Flush(ctx))
	reset()
	golden(t, "pages-fixed.txt", dumpTables(t, db, "fixed", "/pages", "/meta"))
}

// TestGoldenValueBlocks pins the bytes of a values log's table: blocks
// (with an empty value, and a hole where a transaction took a handle),
// a block rewritten after a removal (it keeps its key), and a lone value
// too large to share a row with a block's header.
func TestGoldenValueBlocks(t *testing.T) {
	db, err := kvstore.Open(filepath.Join(t.TempDir(), "v.db"), sealedOpts(kvstore.Options{Sync: kvstore.SyncOff, MaxValueSize: 200}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	l := openLog(t, db, "vals", manual(timelog.Options{Values: true, ValueBlockBytes: 96}))
	_, err = l.AppendValues([]int64{10, 20, 30}, [][]byte{[]byte("ten"), {}, []byte("thirty")})
	require.NoError(t, err)
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		_, err := l.In(tx).AppendValue(35, []byte("in a transaction"))
		return err
	}))
	_, err = l.AppendValues([]int64{40, 50, 60, 70}, [][]byte{
		[]byte("forty"), []byte(strings.Repeat("fifty ", 8)), []byte(strings.Repeat("L", 190)), []byte("seventy"),
	})
	require.NoError(t, err)
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, l.DeleteRange(20, 21)) // the empty value goes: its block is rewritten
	require.NoError(t, l.Flush(ctx))
	l.Compact()
	drain(t, l)
	golden(t, "value-blocks.txt", dumpTables(t, db, "vals", "/values"))
}
