package timelog_test

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

// fixedLog writes the log "old" into a fresh store file at path as a log
// from before dense pages holds it: every page in the fixed 24-byte layout
// (8 records a page), some of them overlapping, a delete stored beside them;
// with values, a values log. It returns the records and the values the
// log returns. Each of its 6 flushes holds perFlush records.
func fixedLog(t *testing.T, path string, values bool, perFlush int) ([]timelog.Record, map[uint64]string) {
	t.Helper()
	db, err := kvstore.Open(path, sealedOpts(kvstore.Options{Sync: kvstore.SyncOff}))
	require.NoError(t, err)
	defer db.Close()
	reset := timelog.WriteFixedPages()
	defer reset()
	l, err := timelog.Open(context.Background(), db, "old", manual(timelog.Options{Values: values, PageMaxBytes: 8 + 24*8}))
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(7, 8))
	for f := range 6 {
		ts := make([]int64, perFlush)
		for i := range ts {
			ts[i] = int64(f*perFlush*3/4 + rng.IntN(perFlush*3/2)) // flushes overlap
		}
		if values {
			vs := make([][]byte, len(ts))
			for i := range vs {
				vs[i] = fmt.Appendf(nil, "v%d-%d", f, i)
			}
			_, err = l.AppendValues(ts, vs)
		} else {
			batch := make([]timelog.Record, len(ts))
			for i := range ts {
				batch[i] = timelog.Record{Ts: ts[i], Handle: uint64(f*1000 + i)}
			}
			err = l.AppendBatch(batch)
		}
		require.NoError(t, err)
		require.NoError(t, l.Flush(ctx))
	}
	if values {
		_, err = l.AppendValues([]int64{math.MinInt64, math.MaxInt64}, [][]byte{[]byte("first"), []byte("last")})
		require.NoError(t, err)
	} else {
		require.NoError(t, l.Append(math.MinInt64, 1))
		require.NoError(t, l.Append(math.MaxInt64, math.MaxUint64))
	}
	require.NoError(t, l.DeleteRange(int64(perFlush), int64(perFlush)+20))
	require.NoError(t, l.Flush(ctx))
	st := l.Stats()
	require.Equal(t, st.Pages, st.FixedPages, "every page in the fixed layout")
	require.Greater(t, st.Overlapping, 0)
	want := collect(t, l.All())
	vals := map[uint64]string{}
	if values {
		for e, err := range l.AllValues() {
			require.NoError(t, err)
			vals[e.Handle] = string(e.Value)
		}
	}
	require.NoError(t, l.Close())
	return want, vals
}

// A log of fixed-layout pages opens and reads unchanged, read-only too;
// compaction rewrites every page as dense ones, and the log returns the
// same records (and values) after it, through every path.
func TestFixedPagesConverted(t *testing.T) {
	for _, values := range []bool{false, true} {
		t.Run(fmt.Sprintf("values=%v", values), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "old.db")
			want, vals := fixedLog(t, path, values, 40)
			db, err := kvstore.Open(path, sealedOpts(kvstore.Options{Sync: kvstore.SyncOff}))
			require.NoError(t, err)
			defer db.Close()

			ro := openLog(t, db, "old", timelog.Options{ReadOnly: true})
			require.Equal(t, want, collect(t, ro.All()))
			require.NoError(t, ro.Close())

			var dropped []timelog.Record
			l := openLog(t, db, "old", manual(timelog.Options{
				CompactMaxPages: 2, OnDrop: func(r timelog.Record) { dropped = append(dropped, r) },
			}))
			require.Equal(t, want, collect(t, l.All()))
			require.NoError(t, l.IntegrityCheck(ctx))
			before := l.Stats().FixedPages
			require.Greater(t, before, 4)
			compactAll(t, l)
			st := l.Stats()
			require.Zero(t, st.FixedPages)
			require.Zero(t, st.Overlapping)
			require.Greater(t, st.CompactedPages, int64(before))
			require.NoError(t, l.IntegrityCheck(ctx))
			require.Equal(t, want, collect(t, l.All()))
			n, err := l.Count()
			require.NoError(t, err)
			require.EqualValues(t, len(want), n)
			for _, r := range dropped { // the delete's records, removed
				require.True(t, r.Ts >= 40 && r.Ts < 60, "%+v", r)
			}
			if values {
				s, err := l.Snapshot()
				require.NoError(t, err)
				for h, v := range vals {
					got, err := s.Value(h)
					require.NoError(t, err)
					require.Equal(t, v, string(got))
				}
				require.NoError(t, s.Close())
			}
			require.NoError(t, l.Close())
		})
	}
}

const convertEnvPath = "TIMELOG_CONVERT_PATH"

// TestConvertPagesChild runs only as the child of TestConvertPagesKill: it
// converts the log "old" step by step, saying "S" after each committed
// step and "end" when nothing is left, then waits to be killed.
func TestConvertPagesChild(t *testing.T) {
	testutil.ChildOnly(t)
	path := os.Getenv(convertEnvPath)
	db, err := kvstore.Open(path, sealedOpts(kvstore.Options{}))
	require.NoError(t, err)
	l, err := timelog.Open(context.Background(), db, "old", manual(timelog.Options{CompactMaxPages: 2}))
	require.NoError(t, err)
	l.Compact()
	for {
		did, err := l.MaintStep(ctx)
		require.NoError(t, err)
		if !did {
			break
		}
		_, _ = os.Stdout.WriteString("S\n")
	}
	_, _ = os.Stdout.WriteString("end\n")
	buf := make([]byte, 1)
	_, _ = os.Stdin.Read(buf) // until the parent kills the child or goes away
}

// The conversion killed with SIGKILL at random moments: after every kill
// the log opens, returns exactly the records it returned before, passes
// IntegrityCheck and holds no more fixed-layout pages than before; the
// conversion resumes where it stopped and ends with dense pages only.
func TestConvertPagesKill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	want, _ := fixedLog(t, path, false, 400)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	fixed := math.MaxInt
	midway := 0 // kills that left the conversion half done
	for kill := 0; fixed > 0; kill++ {
		require.Less(t, kill, 200, "the conversion does not progress")
		c := testutil.StartChild(t, "TestConvertPagesChild", convertEnvPath+"="+path)
		c.WaitLine(func(l string) bool { return l == "S" || l == "end" })
		time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond) // a random moment
		steps := 0
		for _, l := range c.Kill() {
			if l == "S" {
				steps++
			}
		}

		db, err := kvstore.Open(path, sealedOpts(kvstore.Options{}))
		require.NoError(t, err)
		require.NoError(t, db.IntegrityCheck(ctx))
		l, err := timelog.Open(context.Background(), db, "old", manual(timelog.Options{}))
		require.NoError(t, err)
		require.Equal(t, want, collect(t, l.All()), "kill %d", kill)
		require.NoError(t, l.IntegrityCheck(ctx))
		st := l.Stats()
		require.LessOrEqual(t, st.FixedPages, fixed, "kill %d", kill)
		if st.FixedPages > 0 && st.FixedPages < fixed {
			midway++
		}
		fixed = st.FixedPages
		require.NoError(t, l.Close())
		require.NoError(t, db.Close())
		t.Logf("kill %d: %d steps seen, %d fixed pages left", kill, steps, fixed)
	}
	require.Positive(t, midway, "no kill landed inside the conversion")
}

// Background maintenance converts the pages of an older log on its own,
// without a Compact request.
func TestFixedPagesConvertedInBackground(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	want, _ := fixedLog(t, path, false, 40)
	db, err := kvstore.Open(path, sealedOpts(kvstore.Options{Sync: kvstore.SyncOff}))
	require.NoError(t, err)
	defer db.Close()
	l := openLog(t, db, "old", timelog.Options{MaintInterval: time.Millisecond, CompactOverlapPages: 1 << 20})
	require.Eventually(t, func() bool { return l.Stats().FixedPages == 0 }, time.Minute, time.Millisecond)
	require.Equal(t, want, collect(t, l.All()))
	require.NoError(t, l.IntegrityCheck(ctx))
}

// fixtureStore unpacks testdata/v2-pages.db.gz, a store written by the
// code before dense pages, into a temporary file and returns its path. It
// holds the log "old" — 600 records appended in three flushes (records
// i ≡ f mod 3 in flush f, timestamp i·7919 mod 600 − 300, handle
// i·0x9E3779B97F4A7C15), with DeleteRange(100, 200) appended before the
// second flush, 40 records a page — and the values log "oldvals": 150
// values "value i" at timestamp i mod 97, 50 records a page.
func fixtureStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "v2.db")
	require.NoError(t, os.WriteFile(path, testutil.ReadGzip(t, "testdata/v2-pages.db.gz"), 0o600))
	return path
}

// fixtureWant returns what the fixture's logs hold: the records of "old"
// and the (timestamp, value) pairs of "oldvals", in the order the logs
// return them.
func fixtureWant() ([]timelog.Record, []string) {
	type seqRec struct {
		timelog.Record
		seq int
	}
	var all []seqRec
	seq := 0
	for f := range 3 {
		for i := f; i < 600; i += 3 {
			seq++
			all = append(all, seqRec{timelog.Record{Ts: int64(i*7919%600) - 300, Handle: uint64(i) * 0x9E3779B97F4A7C15}, seq})
		}
		if f == 1 {
			seq++
			del := seq
			all = slices.DeleteFunc(all, func(r seqRec) bool { return r.seq < del && r.Ts >= 100 && r.Ts < 200 })
		}
	}
	slices.SortStableFunc(all, func(a, b seqRec) int { return cmp.Compare(a.Ts, b.Ts) })
	recs := make([]timelog.Record, len(all))
	for i, r := range all {
		recs[i] = r.Record
	}
	var vals []string
	for ts := range 97 {
		for i := ts; i < 150; i += 97 {
			vals = append(vals, fmt.Sprintf("%d=value %d", ts, i))
		}
	}
	return recs, vals
}

// checkFixture requires db's logs to hold what fixtureWant says.
func checkFixture(t *testing.T, db *kvstore.Store, o timelog.Options) {
	t.Helper()
	recs, vals := fixtureWant()
	l := openLog(t, db, "old", o)
	require.Equal(t, recs, collect(t, l.All()))
	n, err := l.Count()
	require.NoError(t, err)
	require.EqualValues(t, len(recs), n)
	require.NoError(t, l.Close())
	v := openLog(t, db, "oldvals", o)
	s, err := v.Snapshot()
	require.NoError(t, err)
	var got []string
	for e, err := range s.AllValues() {
		require.NoError(t, err)
		got = append(got, fmt.Sprintf("%d=%s", e.Ts, e.Value))
		one, err := s.Value(e.Handle)
		require.NoError(t, err)
		require.Equal(t, e.Value, one)
	}
	require.NoError(t, s.Close())
	require.Equal(t, vals, got)
	require.NoError(t, v.Close())
}

// A store written by the code before dense pages opens and reads
// unchanged, read-only and writable; compaction converts every page, after
// which both logs read the same, and the file passes IntegrityCheck.
func TestWrittenBeforeDensePages(t *testing.T) {
	path := fixtureStore(t)
	db, err := kvstore.Open(path, sealedOpts(kvstore.Options{Sync: kvstore.SyncOff}))
	require.NoError(t, err)
	defer db.Close()
	checkFixture(t, db, timelog.Options{ReadOnly: true})
	checkFixture(t, db, manual(timelog.Options{}))
	for _, name := range []string{"old", "oldvals"} {
		l := openLog(t, db, name, manual(timelog.Options{}))
		require.Positive(t, l.Stats().FixedPages, name)
		compactAll(t, l)
		require.Zero(t, l.Stats().FixedPages, name)
		require.NoError(t, l.IntegrityCheck(ctx))
		require.NoError(t, l.Close())
	}
	checkFixture(t, db, manual(timelog.Options{}))
	require.NoError(t, db.IntegrityCheck(ctx))
}
