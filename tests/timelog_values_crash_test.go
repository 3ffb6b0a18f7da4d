package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
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
	testutil.ChildOnly(t)
	path := os.Getenv(tlCrashEnvPath)
	exitWithParent()
	seed, _ := strconv.ParseUint(os.Getenv(tlCrashEnvSeed), 10, 64)
	err := func() error {
		db, err := kvstore.Open(path, tempstore.Options(kvstore.Options{MaxValueSize: tlCrashMaxValue}))
		if err != nil {
			return err
		}
		l, err := timelog.Open(db, "crashv", timelog.Options{
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
// random moments (see the top of the file).
func TestTimelogCrashValuesKill(t *testing.T) {
	kills := 10
	if testing.Short() {
		kills = 2
	}
	path := filepath.Join(t.TempDir(), "crashv.db")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	var base tlModel
	for i := range kills {
		c := startTLCrashChild(t, "TestTimelogCrashValuesChild", path, seed+uint64(i), 0)
		waitFlushes(c, 1+rng.IntN(3))
		time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond) // a random moment
		lines := c.Kill()

		atStart, atDone, _ := replayTLCrashLines(base, lines)

		db, err := kvstore.Open(path, tempstore.Options(kvstore.Options{MaxValueSize: tlCrashMaxValue}))
		require.NoError(t, err)
		l, err := timelog.Open(db, "crashv", timelog.Options{Maintenance: timelog.Manual})
		require.NoError(t, err)
		require.True(t, l.Values())
		require.NoError(t, l.IntegrityCheck(context.Background()), "kill %d (seed %d): records and values disagree", i, seed)
		s, err := l.Snapshot()
		require.NoError(t, err)
		var got []timelog.Record
		for e, err := range s.AllValues() {
			require.NoError(t, err)
			got = append(got, e.Record)
			require.Contains(t, []string{string(tlCrashValue(e.Handle, e.Ts)), string(loneValue(e.Ts))}, string(e.Value),
				"kill %d: value of handle %d", i, e.Handle)
		}
		require.NoError(t, s.Close())
		base = tlFlushBoundary(t, got, atStart, atDone, "kill %d (seed %d)", i, seed)
		require.NoError(t, l.Close())
		require.NoError(t, db.Close())
		t.Logf("kill %d: %d lines, %d records", i, len(lines), len(got))
	}
}
