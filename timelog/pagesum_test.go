package timelog_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

// pageRow is one row of a log's pages table.
// pageRow is a row of a log's pages table.
type pageRow = hiddenRow

// flipStore writes a log "flip" of two overlapping flushes (so that
// compaction has work) into a fresh store file, and returns the file, the
// log's records and its page rows: the first flush as two pages of the
// fixed layout that logs written before dense pages hold (4 and 1
// records), the second as one dense page.
func flipStore(t *testing.T) (string, []timelog.Record, []pageRow) {
	t.Helper()
	db, path := openStore(t)
	l, err := timelog.Open(context.Background(), db, "flip", manual(timelog.Options{PageMaxBytes: 8 + 24*4}))
	require.NoError(t, err)
	require.NoError(t, l.AppendBatch(recs(1, 10, 3, 30, 5, 50, 7, 70, 9, 90)))
	reset := timelog.WriteFixedPages()
	require.NoError(t, l.Flush(ctx))
	reset()
	require.NoError(t, l.AppendBatch(recs(2, 20, 4, 40, 6, 60, -8, 80)))
	require.NoError(t, l.Flush(ctx))
	want := collect(t, l.All())
	require.Len(t, want, 9)
	require.NoError(t, l.Close())
	rows := pageRows(t, db, "flip")
	require.Len(t, rows, 3)
	require.NoError(t, db.Close())
	return path, want, rows
}

// withPage copies the store file at src, stores value as the page under
// key in the copy (through the store, so the row's own checksum is right
// and only the page's checksum can notice), and opens the log "flip" on it.
func withPage(t *testing.T, src string, key, value []byte) (*kvstore.Store, *timelog.Log) {
	t.Helper()
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "copy.db")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	db, err := kvstore.Open(path, sealedOpts(kvstore.Options{Sync: kvstore.SyncOff}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	pages, err := layer.OpenHiddenTable(ctx, db, "timelog", "flip/pages")
	require.NoError(t, err)
	require.NoError(t, pages.Put(key, value))
	l, err := timelog.Open(context.Background(), db, "flip", manual(timelog.Options{PageMaxBytes: 8 + 24*4}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return db, l
}

// checkCorrupt requires err to be the log's ErrCorrupt, naming the log.
func checkCorrupt(t *testing.T, err error, what string) {
	t.Helper()
	require.ErrorIs(t, err, timelog.ErrCorrupt, what)
	require.Contains(t, err.Error(), "flip", what)
}

// countOrCorrupt requires CountRange(t1, t2) to be want or ErrCorrupt.
func countOrCorrupt(t *testing.T, l *timelog.Log, want int, t1, t2 int64) {
	t.Helper()
	n, err := l.CountRange(t1, t2)
	if err != nil {
		checkCorrupt(t, err, "CountRange")
		return
	}
	require.EqualValues(t, want, n)
}

// readColumns returns the log's records read through ColumnsAll, or the
// first error.
func readColumns(l *timelog.Log) ([]timelog.Record, error) {
	s, err := l.Snapshot()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var out []timelog.Record
	for c, err := range s.ColumnsAll() {
		if err != nil {
			return out, err
		}
		for i := range c.Ts {
			out = append(out, timelog.Record{Ts: c.Ts[i], Handle: c.Handles[i]})
		}
	}
	return out, nil
}

// readAll returns the log's records, or the first error.
func readAll(l *timelog.Log) ([]timelog.Record, error) {
	var out []timelog.Record
	for r, err := range l.All() {
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Flipping any byte of any page (all 8 bits) is caught by the page
// checksum: reads, counts and compaction return ErrCorrupt naming the log,
// and nothing changed is ever returned.
func TestPageByteFlips(t *testing.T) {
	src, want, rows := flipStore(t)
	flips, detected := 0, 0
	for pi, row := range rows {
		for i := range row.value {
			if testing.Short() && i >= 8 && i%5 != 0 {
				continue // -short: the header and every fifth record byte
			}
			flips++
			v := slices.Clone(row.value)
			v[i] ^= 0xFF
			_, l := withPage(t, src, row.key, v)
			got, err := readAll(l)
			cols, cerr := readColumns(l)
			if err == nil {
				require.NoError(t, cerr, "page %d byte %d: Columns", pi, i)
				require.Equal(t, want, cols, "page %d byte %d: Columns", pi, i)
			} else {
				checkCorrupt(t, cerr, "ColumnsAll")
			}
			// Min reads the first cluster, the two overlapping pages
			// [-8, 6] and [1, 7] (rows 0 and 1); Max the last, [9, 9].
			for _, m := range []struct {
				name  string
				f     func() (timelog.Record, bool, error)
				want  timelog.Record
				reads bool
			}{{"Min", l.Min, want[0], pi < 2}, {"Max", l.Max, want[len(want)-1], pi == 2}} {
				r, ok, merr := m.f()
				if err != nil && m.reads {
					checkCorrupt(t, merr, m.name)
					continue
				}
				require.NoError(t, merr, "page %d byte %d: %s", pi, i, m.name)
				require.True(t, ok)
				require.Equal(t, m.want, r, "page %d byte %d: %s", pi, i, m.name)
			}
			if err == nil {
				require.Equal(t, want, got, "page %d byte %d", pi, i)
				n, err := l.Count()
				require.NoError(t, err)
				require.EqualValues(t, len(want), n)
				continue
			}
			detected++
			checkCorrupt(t, err, "All")
			// Counts read only the pages they must split (others are
			// counted from their summaries): a count is exact or corrupt.
			countOrCorrupt(t, l, len(want), math.MinInt64, math.MaxInt64)
			countOrCorrupt(t, l, 4, 2, 6) // 2, 3, 4, 5: the end is exclusive
			// Compaction refuses a damaged page it has to rewrite (and
			// leaves the others alone): it never turns it into good data.
			l.Compact()
			for range 10 {
				did, err := l.MaintStep(ctx)
				if err != nil {
					checkCorrupt(t, err, "MaintStep")
				}
				if !did {
					break
				}
			}
			_, err = readAll(l)
			checkCorrupt(t, err, "All after MaintStep")
			require.NoError(t, l.Close())
		}
	}
	t.Logf("%d page byte flips: %d detected, %d without effect", flips, detected, flips-detected)
	// CRC-32C detects every error confined to 32 consecutive bits.
	require.Equal(t, flips, detected)
}

// A page of any other version, the never-released version 1 (the record
// count where the checksum now is) included, is corrupt, never misread;
// so is a fixed-layout page relabelled as dense, or the reverse.
func TestPageOtherVersionIsCorrupt(t *testing.T) {
	src, _, rows := flipStore(t)
	var row, dense pageRow // a fixed-layout page and the dense one
	for _, r := range rows {
		if r.value[3] == 3 {
			dense = r
		} else if row.key == nil {
			row = r
		}
	}
	require.NotNil(t, dense.key)
	require.EqualValues(t, 2, row.value[3])
	n := (len(row.value) - 8) / 24
	v1 := slices.Clone(row.value)
	v1[3] = 1
	binary.BigEndian.PutUint32(v1[4:], uint32(n))
	for _, c := range []pageRow{
		{row.key, v1}, {row.key, append([]byte("TLP\x03"), row.value[4:]...)},
		{row.key, append([]byte("TLP\x04"), row.value[4:]...)},
		{dense.key, append([]byte("TLP\x02"), dense.value[4:]...)},
		{dense.key, append([]byte("TLP\x04"), dense.value[4:]...)},
		{row.key, append(bytes.Clone(row.value[:4]), row.value[:4]...)},
	} {
		_, l := withPage(t, src, c.key, c.value)
		_, err := readAll(l)
		checkCorrupt(t, err, "All")
		countOrCorrupt(t, l, 4, 2, 6) // 2, 3, 4, 5: the end is exclusive
		_, err = l.MaintStep(ctx)
		require.True(t, err == nil || errors.Is(err, timelog.ErrCorrupt), "%v", err)
	}
}

// edgeStore writes a log "flip" of sorted records as several disjoint
// dense pages into a fresh store file, and returns the file, the records
// and the page rows in key order.
func edgeStore(t *testing.T) (string, []timelog.Record, []pageRow) {
	t.Helper()
	db, path := openStore(t)
	l, err := timelog.Open(context.Background(), db, "flip", manual(timelog.Options{PageMaxBytes: 64}))
	require.NoError(t, err)
	var rs []int64
	for i := range int64(40) {
		rs = append(rs, 10+3*i, 1000+7*i)
	}
	require.NoError(t, l.AppendBatch(recs(rs...)))
	require.NoError(t, l.Flush(ctx))
	want := collect(t, l.All())
	require.Len(t, want, 40)
	require.NoError(t, l.Close())
	rows := pageRows(t, db, "flip")
	require.GreaterOrEqual(t, len(rows), 3)
	require.NoError(t, db.Close())
	return path, want, rows
}

// Min reads only the first page of a log of disjoint pages and Max only the
// last one, each checking the page it reads: any byte flip of the first
// page makes Min fail with ErrCorrupt while Max reads on, and the reverse
// for the last page. Rows in the pages table that the log does not list
// (before its first page, after its last) change neither.
func TestMinMaxCheckTheirPage(t *testing.T) {
	src, want, rows := edgeStore(t)
	first, last := want[0], want[len(want)-1]
	// The first page breaks Min, the last one Max.
	for _, c := range []struct {
		row   pageRow
		minOK bool
	}{{rows[0], false}, {rows[len(rows)-1], true}} {
		for i := range c.row.value {
			v := slices.Clone(c.row.value)
			v[i] ^= 0xFF
			_, l := withPage(t, src, c.row.key, v)
			mn, ok, minErr := l.Min()
			mx, ok2, maxErr := l.Max()
			if c.minOK {
				require.NoError(t, minErr, "last page, byte %d", i)
				require.True(t, ok)
				require.Equal(t, first, mn)
				checkCorrupt(t, maxErr, "Max")
			} else {
				require.NoError(t, maxErr, "first page, byte %d", i)
				require.True(t, ok2)
				require.Equal(t, last, mx)
				checkCorrupt(t, minErr, "Min")
			}
			require.NoError(t, l.Close())
		}
	}
	for _, key := range [][]byte{bytes.Repeat([]byte{0}, 16), bytes.Repeat([]byte{0xFF}, 16)} {
		_, l := withPage(t, src, key, []byte("not a page"))
		for _, m := range []struct {
			f    func() (timelog.Record, bool, error)
			want timelog.Record
		}{{l.Min, first}, {l.Max, last}} {
			r, ok, err := m.f()
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, m.want, r)
		}
		require.Equal(t, want, collect(t, l.All()))
	}
}

// pageRows returns the rows of log's pages table, copied.
func pageRows(t *testing.T, db *kvstore.Store, log string) []pageRow {
	t.Helper()
	return hiddenRows(t, db, log+"/pages")
}
