package tests

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/internal/testutil/tempstore"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

// documentedQuery returns the SQL block of docs/format.md between the
// markers <!-- marker --> and <!-- /marker -->.
func documentedQuery(t *testing.T, marker string) string {
	b, err := os.ReadFile("../docs/format.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(b), "<!-- "+marker+" -->")
	require.True(t, ok, "marker %s in docs/format.md", marker)
	q, _, ok := strings.Cut(rest, "<!-- /"+marker+" -->")
	require.True(t, ok, "end marker %s in docs/format.md", marker)
	q = strings.TrimSpace(q)
	q = strings.TrimPrefix(q, "```sql")
	return strings.TrimSpace(strings.TrimSuffix(q, "```"))
}

// shellQuery runs the documented query of marker (docs/format.md), with
// the log's name in place of metrics (the query's own), read-only on the
// store at path, and returns the lines the shell writes.
func shellQuery(t *testing.T, marker, path, log string) []string {
	t.Helper()
	q := strings.ReplaceAll(documentedQuery(t, marker), "timelog:metrics/", "timelog:"+log+"/")
	return testutil.Shell(t, q, "-readonly", "-batch", "-bail", path)
}

// shellRecords is how the documented query lists records: the timestamp
// and the handle as SQLite's signed integer.
func shellRecords(rs []timelog.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%d|%d", r.Ts, int64(r.Handle))
	}
	return out
}

// The query docs/format.md gives, run by the stock sqlite3 shell, lists what
// the log returns: from dense pages (small ones, several a flush, and one
// of a thousand records with multi-byte varints).
func TestTimelogDocumentedShellQuery(t *testing.T) {
	testutil.SQLite3(t)
	path := tempstore.Path(t, "shell.db")
	db, err := kvstore.Open(path, tempstore.Options(kvstore.Options{}))
	require.NoError(t, err)
	l, err := timelog.Open(context.Background(), db, "metrics", timelog.Options{Maintenance: timelog.Manual, PageMaxBytes: 64})
	require.NoError(t, err)
	in := []timelog.Record{{Ts: 5, Handle: 1}, {Ts: math.MaxInt64, Handle: 2}, {Ts: math.MinInt64, Handle: 3}, {Ts: 5, Handle: 4},
		{Ts: -7, Handle: 5}, {Ts: 0, Handle: 6}, {Ts: 123456789012, Handle: 7}}
	require.NoError(t, l.AppendBatch(in[:4]))
	require.NoError(t, l.Flush(context.Background()))
	require.NoError(t, l.AppendBatch(in[4:]))
	require.NoError(t, l.Append(5, math.MaxUint64))
	require.NoError(t, l.Close())
	big, err := timelog.Open(context.Background(), db, "big", timelog.Options{Maintenance: timelog.Manual})
	require.NoError(t, err)
	var wantBig []string
	for i := range 1000 {
		ts, h := int64(1_000_000+i*i*977), uint64(i)*0x9E3779B97F4A7C15
		require.NoError(t, big.Append(ts, h))
		wantBig = append(wantBig, fmt.Sprintf("%d|%d", ts, int64(h)))
	}
	require.NoError(t, big.Close())
	require.NoError(t, db.Close())

	want := []string{
		fmt.Sprintf("%d|3", int64(math.MinInt64)), "-7|5", "0|6", "5|1", "5|4", "5|-1", "123456789012|7",
		fmt.Sprintf("%d|2", int64(math.MaxInt64)),
	}
	require.Equal(t, want, shellQuery(t, "timelog-query", path, "metrics"))
	require.Equal(t, wantBig, shellQuery(t, "timelog-query", path, "big"))
}

// The same query lists the pages of the fixed layout that logs written
// before dense pages hold: those of a store that code wrote
// (timelog/testdata/v2-pages.db.gz). Its log "old" holds 600 records in
// three flushes (records i ≡ f mod 3 in flush f, timestamp i·7919 mod 600
// − 300, handle i·0x9E3779B97F4A7C15), and a delete of [100, 200) made
// before the second flush: the records of flush 1 in its range never
// reached a page, and it is stored to hide those of flush 0. The query does
// not apply stored deletes (docs/format.md): it lists every stored record,
// and the log returns them less those the delete hides.
func TestTimelogDocumentedShellQueryFixedPages(t *testing.T) {
	testutil.SQLite3(t)
	path := tempstore.Path(t, "v2.db")
	require.NoError(t, os.WriteFile(path, testutil.ReadGzip(t, "../timelog/testdata/v2-pages.db.gz"), 0o600))

	var stored []timelog.Record // in the order of their sequence numbers
	var hidden int
	for f := range 3 {
		for i := f; i < 600; i += 3 {
			r := timelog.Record{Ts: int64(i*7919%600) - 300, Handle: uint64(i) * 0x9E3779B97F4A7C15}
			if r.Ts >= 100 && r.Ts < 200 {
				if f == 1 {
					continue
				}
				if f == 0 {
					hidden++
				}
			}
			stored = append(stored, r)
		}
	}
	slices.SortStableFunc(stored, func(a, b timelog.Record) int { return cmp.Compare(a.Ts, b.Ts) })
	listed := shellQuery(t, "timelog-query", path, "old")
	require.Equal(t, shellRecords(stored), listed)

	db, err := kvstore.Open(path, kvstore.Options{ReadOnly: true})
	require.NoError(t, err)
	defer db.Close()
	l, err := timelog.Open(context.Background(), db, "old", timelog.Options{ReadOnly: true})
	require.NoError(t, err)
	defer l.Close()
	require.Equal(t, l.Stats().Pages, l.Stats().FixedPages, "every page of the fixture has the fixed layout")
	returned := shellRecords(testutil.Drain(t, l.All()))
	require.Len(t, returned, len(stored)-hidden)
	require.Subset(t, listed, returned)
}

// In an encrypted store a log's values (and Objects' payloads) are sealed,
// while its pages stay in the clear: the documented shell query still lists
// the records, and no value is readable in the file.
func TestTimelogEncryptedStoreSealsValuesNotRecords(t *testing.T) {
	ctx := context.Background()
	path := tempstore.Path(t, "enc.db")
	enc := &kvstore.Encryption{Key: bytes.Repeat([]byte{4}, 32)}
	db, err := kvstore.Open(path, kvstore.Options{Encryption: enc})
	require.NoError(t, err)
	l, err := timelog.Open(context.Background(), db, "metrics", timelog.Options{Values: true, Maintenance: timelog.Manual})
	require.NoError(t, err)
	var ts []int64
	var vals [][]byte
	for i := range 50 {
		ts = append(ts, int64(100+i))
		vals = append(vals, fmt.Appendf(nil, "confidential %d", i))
	}
	first, err := l.AppendValues(ts, vals)
	require.NoError(t, err)
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, l.Close())
	type point struct{ X, Y int }
	objs, err := timelog.OpenObjects[point](context.Background(), db, "points", timelog.Options{Maintenance: timelog.Manual}, timelog.ObjectOptions[point]{})
	require.NoError(t, err)
	_, err = objs.Append(1, point{X: 424242, Y: 7})
	require.NoError(t, err)
	require.NoError(t, objs.Log().Flush(ctx))
	require.NoError(t, objs.Close())
	require.NoError(t, db.Close())

	raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	rows, err := raw.Query(`SELECT value FROM "` + layer.HiddenTableName("timelog", "metrics/values") + `"`)
	require.NoError(t, err)
	n := 0
	for rows.Next() {
		var v []byte
		require.NoError(t, rows.Scan(&v))
		require.NotContains(t, string(v), "confidential")
		n++
	}
	require.NoError(t, rows.Err())
	require.NoError(t, raw.Close())
	require.Positive(t, n)

	db, err = kvstore.Open(path, kvstore.Options{Encryption: enc})
	require.NoError(t, err)
	l, err = timelog.Open(context.Background(), db, "metrics", timelog.Options{Values: true, Maintenance: timelog.Manual})
	require.NoError(t, err)
	s, err := l.Snapshot()
	require.NoError(t, err)
	v, err := s.Value(first + 7)
	require.NoError(t, err)
	require.Equal(t, "confidential 7", string(v))
	s.Close()
	require.NoError(t, l.IntegrityCheck(ctx))
	require.NoError(t, l.Close())
	objs, err = timelog.OpenObjects[point](context.Background(), db, "points", timelog.Options{Maintenance: timelog.Manual}, timelog.ObjectOptions[point]{})
	require.NoError(t, err)
	s, err = objs.Log().Snapshot()
	require.NoError(t, err)
	for o, err := range objs.All(s) {
		require.NoError(t, err)
		require.Equal(t, point{X: 424242, Y: 7}, o.Value)
	}
	s.Close()
	require.NoError(t, objs.Close())
	require.NoError(t, db.Close())

	// The records stay listable with the documented shell query.
	lines := shellQuery(t, "timelog-query", path, "metrics")
	require.Len(t, lines, 50)
	require.True(t, strings.HasPrefix(lines[7], "107|"), lines[7])
}

// The values query of docs/format.md, run by the stock sqlite3 shell, lists
// the stored values by handle: from blocks with holes (a record deleted
// while buffered, a record removed by compaction), from several blocks (a
// small MaxValueSize bounds them) and from a lone value row; a removed
// record's value is gone.
func TestTimelogDocumentedValuesShellQuery(t *testing.T) {
	if tempstore.Sealed() {
		t.Skip("values are sealed in an encrypted store: the shell cannot read them")
	}
	testutil.SQLite3(t)
	ctx := context.Background()
	path := tempstore.Path(t, "shell.db")
	db, err := kvstore.Open(path, tempstore.Options(kvstore.Options{MaxValueSize: 64}))
	require.NoError(t, err)
	l, err := timelog.Open(context.Background(), db, "metrics", timelog.Options{Values: true, Maintenance: timelog.Manual, PageMaxBytes: 8 + 24*2})
	require.NoError(t, err)
	first, err := l.AppendValues([]int64{10, 20, 30}, [][]byte{[]byte("ten"), []byte("twenty"), []byte("thirty")})
	require.NoError(t, err)
	require.NoError(t, l.DeleteRange(20, 21))
	lone := strings.Repeat("L", 64)
	_, err = l.AppendValue(40, []byte(lone))
	require.NoError(t, err)
	require.NoError(t, l.Flush(ctx))
	var ts []int64
	var vals [][]byte
	for i := range 6 {
		ts = append(ts, int64(50+i))
		vals = append(vals, fmt.Appendf(nil, "value %d", 50+i))
	}
	next, err := l.AppendValues(ts, vals)
	require.NoError(t, err)
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, l.DeleteRange(52, 53))
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, tlCompact(ctx, l))
	require.NoError(t, l.IntegrityCheck(ctx))
	require.NoError(t, l.Close())
	require.NoError(t, db.Close())

	want := []string{fmt.Sprintf("%d|3|ten", first), fmt.Sprintf("%d|6|thirty", first+2), fmt.Sprintf("%d|64|%s", first+3, lone)}
	for i := range 6 {
		if i != 2 {
			want = append(want, fmt.Sprintf("%d|8|value %d", next+uint64(i), 50+i))
		}
	}
	require.Equal(t, want, shellQuery(t, "timelog-values-query", path, "metrics"))
}
