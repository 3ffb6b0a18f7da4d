package timelog_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
	db, err := kvstore.Open(path, kvstore.Options{Sync: kvstore.SyncOff})
	require.NoError(t, err)
	defer db.Close()
	reset := timelog.WriteFixedPages()
	defer reset()
	l, err := timelog.Open(db, "old", manual(timelog.Options{Values: values, PageMaxBytes: 8 + 24*8}))
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
			db, err := kvstore.Open(path, kvstore.Options{Sync: kvstore.SyncOff})
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
	path := os.Getenv(convertEnvPath)
	if path == "" {
		t.Skip("runs only as the child process of TestConvertPagesKill")
	}
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	l, err := timelog.Open(db, "old", manual(timelog.Options{CompactMaxPages: 2}))
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
	exe, err := os.Executable()
	require.NoError(t, err)
	fixed := math.MaxInt
	midway := 0 // kills that left the conversion half done
	for kill := 0; fixed > 0; kill++ {
		require.Less(t, kill, 200, "the conversion does not progress")
		c := startChildRunEnv(t, exe, "^TestConvertPagesChild$", convertEnvPath+"="+path)
		c.waitLine(t, func(l string) bool { return l == "S" || l == "end" })
		time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond) // a random moment
		lines := c.kill(t)

		db, err := kvstore.Open(path, kvstore.Options{})
		require.NoError(t, err)
		require.NoError(t, db.IntegrityCheck(ctx))
		l, err := timelog.Open(db, "old", manual(timelog.Options{}))
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
		t.Logf("kill %d: %d steps seen, %d fixed pages left", kill, strings.Count(strings.Join(lines, "\n"), "S"), fixed)
	}
	require.Positive(t, midway, "no kill landed inside the conversion")
}

// Background maintenance converts the pages of an older log on its own,
// without a Compact request.
func TestFixedPagesConvertedInBackground(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	want, _ := fixedLog(t, path, false, 40)
	db, err := kvstore.Open(path, kvstore.Options{Sync: kvstore.SyncOff})
	require.NoError(t, err)
	defer db.Close()
	l := openLog(t, db, "old", timelog.Options{MaintInterval: time.Millisecond, CompactOverlapPages: 1 << 20})
	require.Eventually(t, func() bool { return l.Stats().FixedPages == 0 }, time.Minute, time.Millisecond)
	require.Equal(t, want, collect(t, l.All()))
	require.NoError(t, l.IntegrityCheck(ctx))
}
