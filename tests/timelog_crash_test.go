package tests

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/internal/testutil/tempstore"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

// The crash test starts a child process that appends, deletes, flushes and
// compacts a log, reporting each operation on stdout before it makes it,
// kills it with SIGKILL at a random moment, and checks the file:
//   - everything flushed before the kill is there, and the log is exactly
//     the state of the last flush that started (if it committed) or of the
//     last that finished: never half a flush;
//   - no record that still exists was reported dropped.
//
// The suite runs against encrypted stores too (SNKV_TEST_ENCRYPTION=1, as
// make test's second run asks: tempstore.Options).

const (
	tlCrashEnvPath  = "TIMELOG_CRASH_PATH"
	tlCrashEnvSeed  = "TIMELOG_CRASH_SEED"
	tlCrashEnvFirst = "TIMELOG_CRASH_FIRST" // first handle the child uses
)

// TestTimelogCrashChild is the body of TestTimelogCrashKill's children.
func TestTimelogCrashChild(t *testing.T) {
	seed := startChild(t, tlCrashEnvSeed)
	path := os.Getenv(tlCrashEnvPath)
	h, _ := strconv.ParseUint(os.Getenv(tlCrashEnvFirst), 10, 64)
	err := func() error {
		db, err := kvstore.Open(path, tempstore.Options(kvstore.Options{}))
		if err != nil {
			return err
		}
		l, err := timelog.Open(context.Background(), db, "crash", timelog.Options{
			Maintenance: timelog.Manual, MemtableMaxBytes: 64 << 20, PageMaxBytes: 8 + 24*40,
			OnDrop: func(r timelog.Record) { crashSay("X %d", r.Handle) },
		})
		if err != nil {
			return err
		}
		rng := rand.New(rand.NewPCG(seed, 7))
		return tlCrashWorkload(l, rng, func() error {
			n := 1 + rng.IntN(60)
			batch := make([]timelog.Record, n)
			for i := range batch {
				h++
				batch[i] = timelog.Record{Ts: int64(rng.IntN(1000)), Handle: h}
				crashSay("A %d %d", batch[i].Ts, h)
			}
			return l.AppendBatch(batch)
		})
	}()
	fmt.Fprintf(os.Stderr, "crash child: %v\n", err)
	os.Exit(3)
}

// startTLCrashChild starts the child test (TestTimelogCrashChild or
// TestTimelogCrashValuesChild) on the store at path.
func startTLCrashChild(t *testing.T, test, path string, seed, first uint64) *testutil.Child {
	return testutil.StartChild(t, test, tlCrashEnvPath+"="+path, tlCrashEnvSeed+"="+fmt.Sprint(seed), tlCrashEnvFirst+"="+fmt.Sprint(first))
}

// waitFlushes waits until the child has reported n more finished flushes.
func waitFlushes(c *testutil.Child, n int) {
	for range n {
		c.WaitFor("F done")
	}
}

// tlKillLoop starts kills children running test one after another on one
// store file (opened with opts), kills each at a random moment after one
// to three flushes, and after every kill requires the log "crash" to be at
// a flush boundary: records returns what the log holds, checking it
// against the lines the child wrote.
func tlKillLoop(t *testing.T, test string, kills int, opts kvstore.Options, records func(i int, lines []string, l *timelog.Log) []timelog.Record) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "crash.db")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	var base tlModel
	for i := range kills {
		c := startTLCrashChild(t, test, path, seed+uint64(i), uint64(i+1)<<32)
		waitFlushes(c, 1+rng.IntN(3))
		time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond) // a random moment
		lines := c.Kill()
		atStart, atDone, _ := replayTLCrashLines(base, lines)

		db, err := kvstore.Open(path, tempstore.Options(opts))
		require.NoError(t, err)
		require.NoError(t, db.IntegrityCheck(context.Background()))
		l, err := timelog.Open(context.Background(), db, "crash", timelog.Options{Maintenance: timelog.Manual})
		require.NoError(t, err, "the dead child's lock is gone")
		got := records(i, lines, l)
		base = tlFlushBoundary(t, got, atStart, atDone, "kill %d (seed %d)", i, seed)
		require.NoError(t, l.Close())
		require.NoError(t, db.Close())
		t.Logf("kill %d: %d lines, %d records", i, len(lines), len(got))
	}
}

// TestTimelogCrashKill kills a child appending to a log at random moments
// (see the top of the file).
func TestTimelogCrashKill(t *testing.T) {
	kills := 12
	if testing.Short() {
		kills = 2
	}
	tlKillLoop(t, "TestTimelogCrashChild", kills, kvstore.Options{}, func(i int, lines []string, l *timelog.Log) []timelog.Record {
		got := testutil.Drain(t, l.All())
		_, _, drops := replayTLCrashLines(nil, lines)
		for _, r := range got {
			require.False(t, drops[r.Handle], "kill %d: handle %d reported dropped but still there", i, r.Handle)
		}
		return got
	})
}

// tlCrashWorkload runs the crash children's endless random workload on l:
// appends (by appendSome, which reports them with crashSay), range deletes,
// flushes and compactions, each reported before (and, for flushes and
// compactions, after) it happens. It returns only on an error.
func tlCrashWorkload(l *timelog.Log, rng *rand.Rand, appendSome func() error) error {
	ctx := context.Background()
	for {
		switch op := rng.IntN(20); {
		case op < 14:
			if err := appendSome(); err != nil {
				return err
			}
		case op < 16:
			lo := int64(rng.IntN(1000))
			hi := lo + int64(rng.IntN(200))
			crashSay("D %d %d", lo, hi)
			if err := l.DeleteRange(lo, hi); err != nil {
				return err
			}
		case op < 18:
			crashSay("F start")
			if err := l.Flush(ctx); err != nil {
				return err
			}
			crashSay("F done")
		default:
			if err := tlCompact(ctx, l); err != nil {
				return err
			}
			crashSay("C done")
		}
	}
}

// tlCompact compacts all of l: Compact, then maintenance steps until none
// is left to do.
func tlCompact(ctx context.Context, l *timelog.Log) error {
	l.Compact()
	for {
		did, err := l.MaintStep(ctx)
		if err != nil || !did {
			return err
		}
	}
}

// tlModel is what a log holds: its records in timestamp order, those of
// one timestamp in the order they were appended.
type tlModel []timelog.Record

// replayTLCrashLines replays what a crash child reported (see
// tlCrashWorkload) on base, and returns the model as it was when the last
// flush started and when the last one finished, and the handles reported
// dropped.
func replayTLCrashLines(base tlModel, lines []string) (atStart, atDone tlModel, drops map[uint64]bool) {
	m := slices.Clone(base) // base's order, then appends in their order
	at := func() tlModel {
		out := slices.Clone(m)
		slices.SortStableFunc(out, func(a, b timelog.Record) int { return cmp.Compare(a.Ts, b.Ts) })
		return out
	}
	drops = map[uint64]bool{}
	for _, l := range lines {
		var a, b int64
		var h uint64
		switch {
		case strings.HasPrefix(l, "A "):
			_, _ = fmt.Sscanf(l, "A %d %d", &a, &h)
			m = append(m, timelog.Record{Ts: a, Handle: h})
		case strings.HasPrefix(l, "D "):
			_, _ = fmt.Sscanf(l, "D %d %d", &a, &b)
			m = slices.DeleteFunc(m, func(r timelog.Record) bool { return r.Ts >= a && r.Ts < b })
		case l == "F start":
			atStart = at()
		case l == "F done":
			atDone = at()
		case strings.HasPrefix(l, "X "):
			_, _ = fmt.Sscanf(l, "X %d", &h)
			drops[h] = true
		}
	}
	return atStart, atDone, drops
}

// tlFlushBoundary requires the records got to be the log at the last flush
// that finished or the last that started (never half a flush), and returns
// that model.
func tlFlushBoundary(t *testing.T, got []timelog.Record, atStart, atDone tlModel, what string, args ...any) tlModel {
	t.Helper()
	switch {
	case slices.Equal(got, atDone):
		return atDone
	case slices.Equal(got, atStart):
		return atStart
	}
	t.Fatalf("%s: the log is neither the last finished flush (%d records) nor the last started (%d): %d records",
		fmt.Sprintf(what, args...), len(atDone), len(atStart), len(got))
	return nil
}

// The values crash test: a child appends records with values, deletes,
// flushes and compacts a values log and is killed with SIGKILL at a random
// moment. After every kill the log must hold exactly the records of a flush
// boundary, each with its own value, and IntegrityCheck must find no value
// without its record, no record without its value and no damaged or
// overlapping value block. The child's small MaxValueSize packs a few
// values per block, so compaction rewrites blocks partly, and some values
// are rows of their own.

// tlCrashMaxValue is the child's store MaxValueSize: value blocks hold a
// few values each, and some values fill a row of their own.
const tlCrashMaxValue = 1024

func tlCrashValue(h uint64, ts int64) []byte {
	v := fmt.Appendf(nil, "%d@%d:%s", h, ts, strings.Repeat("v", int(h%97)))
	if h%53 == 0 {
		v = append(v, strings.Repeat("w", tlCrashMaxValue-len(v))...)
	}
	return v
}

// loneValue is the value of the first record of each batch, appended alone
// to learn the handle the batch starts after.
func loneValue(ts int64) []byte { return fmt.Appendf(nil, "lone@%d", ts) }

// TestTimelogCrashValuesChild is the body of TestTimelogCrashValuesKill's
// children.
func TestTimelogCrashValuesChild(t *testing.T) {
	seed := startChild(t, tlCrashEnvSeed)
	path := os.Getenv(tlCrashEnvPath)
	err := func() error {
		db, err := kvstore.Open(path, tempstore.Options(kvstore.Options{MaxValueSize: tlCrashMaxValue}))
		if err != nil {
			return err
		}
		l, err := timelog.Open(context.Background(), db, "crash", timelog.Options{
			Values: true, Maintenance: timelog.Manual, MemtableMaxBytes: 64 << 20, PageMaxBytes: 8 + 24*40,
		})
		if err != nil {
			return err
		}
		rng := rand.New(rand.NewPCG(seed, 11))
		return tlCrashWorkload(l, rng, func() error {
			n := 1 + rng.IntN(60)
			ts := make([]int64, n)
			vals := make([][]byte, n)
			for i := range ts {
				ts[i] = int64(rng.IntN(1000))
			}
			// Handles are assigned in order: the next is the one
			// after the last, so values can name their handle.
			first, err := l.AppendValue(ts[0], loneValue(ts[0]))
			if err != nil {
				return err
			}
			crashSay("A %d %d", ts[0], first)
			for i := range ts {
				vals[i] = tlCrashValue(first+1+uint64(i), ts[i])
			}
			got, err := l.AppendValues(ts, vals)
			if err != nil {
				return err
			}
			if got != first+1 {
				return fmt.Errorf("handle %d, want %d", got, first+1)
			}
			for i := range ts {
				crashSay("A %d %d", ts[i], got+uint64(i))
			}
			return nil
		})
	}()
	fmt.Fprintf(os.Stderr, "crash child: %v\n", err)
	os.Exit(3)
}

// TestTimelogCrashValuesKill kills a child appending records with values at
// random moments (see the top of the file): every record the log holds has
// its own value, and IntegrityCheck finds records and values in step.
func TestTimelogCrashValuesKill(t *testing.T) {
	kills := 10
	if testing.Short() {
		kills = 2
	}
	tlKillLoop(t, "TestTimelogCrashValuesChild", kills, kvstore.Options{MaxValueSize: tlCrashMaxValue}, func(i int, _ []string, l *timelog.Log) []timelog.Record {
		require.True(t, l.Values())
		require.NoError(t, l.IntegrityCheck(context.Background()), "kill %d: records and values disagree", i)
		var got []timelog.Record
		for _, e := range testutil.Drain(t, l.AllValues()) {
			got = append(got, e.Record)
			require.Contains(t, []string{string(tlCrashValue(e.Handle, e.Ts)), string(loneValue(e.Ts))}, string(e.Value),
				"kill %d: value of handle %d", i, e.Handle)
		}
		return got
	})
}
