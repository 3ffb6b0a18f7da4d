package main

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
	"github.com/stretchr/testify/require"
)

// t0ms is the fixture's "now" in milliseconds: the unit of the "cpu" log.
var t0ms = t0.UnixMilli()

// logFixture is the fixture store plus three logs written with the
// library and flushed:
//   - "cpu": ten records a second apart from t0 (ms), handles 100..109, one
//     more at t0+2s appended after the others (handle 200), then
//     [t0+5s, t0+7s) deleted and one record appended after the delete at
//     t0+6s (handle 300): 10 visible records;
//   - "edge": records at the ends of the int64 range and at 0;
//   - "idle": no records.
func logFixture(t testing.TB) string {
	t.Helper()
	path := fixture(t)
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	ctx := context.Background()

	cpu, err := timelog.Open(context.Background(), db, "cpu", timelog.Options{Maintenance: timelog.Manual})
	require.NoError(t, err)
	var batch []timelog.Record
	for i := range 10 {
		batch = append(batch, timelog.Record{Ts: t0ms + int64(i)*1000, Handle: uint64(100 + i)})
	}
	require.NoError(t, cpu.AppendBatch(batch))
	require.NoError(t, cpu.Append(t0ms+2000, 200))
	require.NoError(t, cpu.Flush(ctx))
	require.NoError(t, cpu.DeleteRange(t0ms+5000, t0ms+7000))
	require.NoError(t, cpu.Append(t0ms+6000, 300))
	require.NoError(t, cpu.Close())

	edge, err := timelog.Open(context.Background(), db, "edge", timelog.Options{Maintenance: timelog.Manual})
	require.NoError(t, err)
	require.NoError(t, edge.AppendBatch([]timelog.Record{
		{Ts: math.MaxInt64, Handle: math.MaxUint64}, {Ts: 0, Handle: 1}, {Ts: math.MinInt64, Handle: 0},
	}))
	require.NoError(t, edge.Close())

	idle, err := timelog.Open(context.Background(), db, "idle", timelog.Options{Maintenance: timelog.Manual})
	require.NoError(t, err)
	require.NoError(t, idle.Close())
	return path
}

// jsonNumbers parses every line of out as a JSON object, numbers kept exact.
func jsonNumbers(t testing.TB, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for _, l := range lines(out) {
		d := json.NewDecoder(strings.NewReader(l))
		d.UseNumber()
		var m map[string]any
		require.NoError(t, d.Decode(&m), "line %q", l)
		objs = append(objs, m)
	}
	return objs
}

func num(n int64) json.Number { return json.Number(itoa(n)) }

func TestTimelogJSON(t *testing.T) {
	path := logFixture(t)

	r := cli(t, nil, "ls", path, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	got := jsonNumbers(t, r.stdout)
	require.Len(t, got, 6)
	require.Equal(t, []map[string]any{
		{"log": "cpu", "records": num(10)}, {"log": "edge", "records": num(3)}, {"log": "idle", "records": num(0)},
	}, got[3:], "the logs follow the column families")

	r = cli(t, nil, "timelog", "ls", path, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	got = jsonNumbers(t, r.stdout)
	require.Len(t, got, 3)
	cpu := got[0]
	require.Equal(t, "cpu", cpu["log"])
	require.Equal(t, num(10), cpu["records"])
	require.Equal(t, num(t0ms), cpu["first"])
	require.Equal(t, num(t0ms+9000), cpu["last"])
	require.Equal(t, num(1), cpu["tombstones"])
	require.Equal(t, map[string]any{
		"log": "edge", "records": num(3), "stored": num(3), "pages": num(1), "tombstones": num(0),
		"overlapping": num(0), "first": num(math.MinInt64), "last": num(math.MaxInt64),
	}, got[1])
	require.Equal(t, map[string]any{
		"log": "idle", "records": num(0), "stored": num(0), "pages": num(0), "tombstones": num(0), "overlapping": num(0),
	}, got[2], "an empty log has no first or last")

	r = cli(t, nil, "timelog", "range", path, "cpu", "--json", "--start", itoa(t0ms+2000), "--end", itoa(t0ms+3000), "--time-unit", "ms")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []map[string]any{
		{"log": "cpu", "ts": num(t0ms + 2000), "handle": num(102), "time": "2030-01-02T03:04:07Z"},
		{"log": "cpu", "ts": num(t0ms + 2000), "handle": num(200), "time": "2030-01-02T03:04:07Z"},
	}, jsonNumbers(t, r.stdout), "equal timestamps in append order")

	r = cli(t, nil, "timelog", "range", path, "edge", "--json", "--reverse")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []map[string]any{
		{"log": "edge", "ts": num(math.MaxInt64), "handle": json.Number("18446744073709551615")},
		{"log": "edge", "ts": num(0), "handle": num(1)},
		{"log": "edge", "ts": num(math.MinInt64), "handle": num(0)},
	}, jsonNumbers(t, r.stdout), "the whole int64 range, exactly")

	r = cli(t, nil, "timelog", "tail", path, "cpu", "-n", "2", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []map[string]any{
		{"log": "cpu", "ts": num(t0ms + 8000), "handle": num(108)},
		{"log": "cpu", "ts": num(t0ms + 9000), "handle": num(109)},
	}, jsonNumbers(t, r.stdout))

	r = cli(t, nil, "timelog", "count", path, "cpu", "--json", "--start", itoa(t0ms+5000))
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []map[string]any{{"log": "cpu", "records": num(4)}}, jsonNumbers(t, r.stdout), "t0+6s (after the delete), 7s, 8s, 9s")

	r = cli(t, nil, "timelog", "stats", path, "cpu", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	st := jsonNumbers(t, r.stdout)
	require.Len(t, st, 1)
	require.Equal(t, num(10), st[0]["records"])

	r = cli(t, nil, "timelog", "count", path, "nope", "--json")
	require.Equal(t, 3, r.code)
	require.Empty(t, r.stdout)
}

// TestTimelogNextToWriter runs the read commands while the test holds the
// log open for writing: they take no writer lock, and see what was
// flushed, not what is still buffered.
func TestTimelogNextToWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.db")
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	l, err := timelog.Open(context.Background(), db, "live", timelog.Options{Maintenance: timelog.Manual})
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()
	require.NoError(t, l.AppendBatch([]timelog.Record{{Ts: 1, Handle: 1}, {Ts: 2, Handle: 2}}))
	require.NoError(t, l.Flush(context.Background()))
	require.NoError(t, l.Append(3, 3)) // buffered only

	r := cli(t, nil, "timelog", "count", path, "live")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "2\n", r.stdout)
	r = cli(t, nil, "timelog", "tail", path, "live", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Len(t, lines(r.stdout), 2)

	require.NoError(t, l.Flush(context.Background()))
	r = cli(t, nil, "ls", path)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "TIME-SERIES LOG  RECORDS\nlive             3\n")
}

// TestTimelogCompletion checks that the shell completion of LOG offers the
// logs of the store.
func TestTimelogCompletion(t *testing.T) {
	path := logFixture(t)
	r := cli(t, nil, "__complete", "timelog", "range", path, "")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []string{"cpu", "edge", "idle", ":4"}, lines(r.stdout))
}
