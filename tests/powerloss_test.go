//go:build linux

package tests

import (
	"bytes"
	"context"
	"fmt"
	"maps"
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
)

// The power-loss suite (issue #37: "the power-loss suite checks that the
// feed and the data agree after a crash"). A SIGKILL loses nothing the
// operating system has, so the crash loops never test the order of
// fsyncs; here the child's file operations go through the recorder
// (powerloss_vfs_test.go), the run stops at a random operation, and the
// parent builds from the log a state a power cut could leave: everything
// synced, plus some of what was written since each file's last sync —
// a prefix of it, a random subset (a disk may reorder), all of it or none —
// with writes torn at 512-byte sectors now and then. It then opens that
// state and checks the store (powerCheck).

// Environment of a power-loss child: where it logs, and after how many
// recorded operations it stops.
const (
	powerEnvLog = "SNKV_POWER_CHILD_LOG"
	powerEnvCut = "SNKV_POWER_CHILD_CUT"
)

// powerEnvLyingDisk, set to 1, makes TestPowerLossFeedAgreesWithData
// model a disk whose fsync does nothing (syncs are ignored and a random
// subset of the writes is kept): TestPowerLossCatchesALyingDisk runs it so
// and expects it to fail.
const powerEnvLyingDisk = "SNKV_POWER_LYING_DISK"

// TestPowerLossChild is the body of the power-loss suite's child: the
// crash suite's loop (TestCrashChild) with its file operations recorded;
// run directly, it does nothing.
func TestPowerLossChild(t *testing.T) {
	testutil.ChildOnly(t)
	cut, _ := strconv.ParseInt(os.Getenv(powerEnvCut), 10, 64)
	if err := installPowerRecorder(os.Getenv(powerEnvLog), cut); err != nil {
		fmt.Fprintf(os.Stderr, "power child: %v\n", err)
		os.Exit(3)
	}
	TestCrashChild(t)
}

// powerSector is the unit a write is torn at.
const powerSector = 512

// Ways a power cut treats what was written since a file's last sync.
const (
	powerKeepNone   = iota // only what was synced
	powerKeepPrefix        // a prefix of each file's unsynced operations, the last write torn now and then
	powerKeepSubset        // a random subset, each kept write torn at sectors now and then
	powerKeepAll           // everything (what a SIGKILL leaves)
)

var powerModeNames = [...]string{"none", "prefix", "subset", "all"}

// powerFiles reads the store's files in dir (all but -shm) by base name.
func powerFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		if e.IsDir() || strings.HasSuffix(e.Name(), "-shm") || strings.HasSuffix(e.Name(), ".log") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = b
	}
	return out
}

// powerWriteFiles makes dir hold exactly files (and no -shm): the state a
// store is opened in after the cut.
func powerWriteFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		if _, ok := files[e.Name()]; !ok && !e.IsDir() && !strings.HasSuffix(e.Name(), ".log") {
			require.NoError(t, os.Remove(filepath.Join(dir, e.Name())))
		}
	}
	for name, b := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
	}
}

// powerApply applies one write or truncation to file; keep, when not
// nil, says which of the write's sectors (by index from the first it
// touches) reach the disk. A sector that does not, past the file's end,
// reads as zeros when a later one extends the file.
func powerApply(file []byte, rec powerRecord, keep func(i int) bool) []byte {
	if rec.op == powerOpTruncate {
		if int(rec.off) <= len(file) {
			return file[:rec.off]
		}
		return append(file, make([]byte, int(rec.off)-len(file))...)
	}
	for i, at := 0, rec.off; at < rec.off+int64(len(rec.data)); i++ {
		end := min((at/powerSector+1)*powerSector, rec.off+int64(len(rec.data)))
		if keep == nil || keep(i) {
			if int64(len(file)) < end {
				file = append(file, make([]byte, end-int64(len(file)))...)
			}
			copy(file[at:end], rec.data[at-rec.off:end-rec.off])
		}
		at = end
	}
	return file
}

// powerImage builds the files a power cut at the end of log could leave,
// from base (the files when the run started, all synced): every operation
// up to a file's last sync, and of the operations after it what mode
// keeps. It reports how many unsynced operations it dropped and tore.
// Creating and deleting a file count as done at once (directory entries
// are not modelled).
//
// With lying, syncs are ignored: a disk whose fsync does nothing.
func powerImage(base map[string][]byte, log []powerRecord, mode int, lying bool, rng *rand.Rand) (files map[string][]byte, dropped, torn int) {
	files = map[string][]byte{}
	for name, b := range base {
		files[name] = slices.Clone(b)
	}
	pending := map[string][]powerRecord{}
	for _, rec := range log {
		switch rec.op {
		case powerOpWrite, powerOpTruncate:
			pending[rec.name] = append(pending[rec.name], rec)
		case powerOpSync:
			if lying {
				continue
			}
			for _, p := range pending[rec.name] {
				files[rec.name] = powerApply(files[rec.name], p, nil)
			}
			delete(pending, rec.name)
		case powerOpDelete:
			delete(files, rec.name)
			delete(pending, rec.name)
		}
	}
	tear := func(rec powerRecord) func(int) bool {
		if rec.op != powerOpWrite || rng.IntN(4) != 0 {
			return nil
		}
		torn++
		return func(int) bool { return rng.IntN(2) == 0 }
	}
	names := make([]string, 0, len(pending))
	for name := range pending {
		names = append(names, name)
	}
	slices.Sort(names) // one seed, one image
	for _, name := range names {
		ops := pending[name]
		n := len(ops)
		switch mode {
		case powerKeepNone:
			ops = nil
		case powerKeepPrefix:
			ops = ops[:rng.IntN(len(ops)+1)]
		}
		dropped += n - len(ops)
		for i, rec := range ops {
			var keep func(int) bool
			switch {
			case mode == powerKeepSubset && rng.IntN(2) == 0:
				dropped++
				continue
			case mode == powerKeepSubset, mode == powerKeepPrefix && i == len(ops)-1:
				keep = tear(rec)
			}
			files[name] = powerApply(files[name], rec, keep)
		}
	}
	return files, dropped, torn
}

// startPowerChild starts the power-loss child on the store at path; it
// logs to logPath and stops after cut operations.
func startPowerChild(t *testing.T, path, logPath string, cut int, seed uint64, clockMs int64, full bool) *testutil.Child {
	t.Helper()
	env := []string{
		crashEnvPath + "=" + path,
		crashEnvMode + "=" + crashModeLoop,
		crashEnvSeed + "=" + strconv.FormatUint(seed, 10),
		crashEnvClock + "=" + strconv.FormatInt(clockMs, 10),
		powerEnvLog + "=" + logPath,
		powerEnvCut + "=" + strconv.Itoa(cut),
	}
	if full {
		env = append(env, crashEnvSync+"=full")
	}
	return testutil.StartChild(t, "TestPowerLossChild", env...)
}

// requireSameFiles fails unless got holds exactly the files of want.
func requireSameFiles(t *testing.T, want, got map[string][]byte, msg string) {
	t.Helper()
	require.ElementsMatch(t, slices.Collect(maps.Keys(want)), slices.Collect(maps.Keys(got)), "%s: the files", msg)
	for name, b := range want {
		require.True(t, bytes.Equal(b, got[name]), "%s: %s (%d bytes, %d rebuilt)", msg, name, len(b), len(got[name]))
	}
}

// powerCut is what one cut did, for the test's log and its final checks.
type powerCut struct {
	mode, ops, dropped, torn int
}

// TestPowerLossFeedAgreesWithData runs the crash suite's loop (TTL writes,
// batches, transactions, expiries, purges, column family churn,
// checkpoints) on a store whose column families have a feed that keeps
// values, stops it at a random file operation, every other run with
// synchronous=FULL, and opens a state a power cut at that moment could
// leave. After every cut:
//   - the log rebuilds, with every operation applied, exactly the files the
//     child left (the recorder saw every write);
//   - that state, which a SIGKILL would leave, and the cut's state pass
//     feedCheck: the feed has no gap, keeps each transaction together, and
//     replaying it gives the column families' rows;
//   - the cut's feed is a prefix of the SIGKILL state's, ending at the end
//     of a transaction: the store is a prefix of the history, with no
//     commit half-applied;
//   - with SyncFull every commit the child reported is there; with
//     SyncNormal a reported commit may be lost, but nothing from before
//     the run (all of it synced when the run started);
//   - SQLite's integrity_check, IntegrityCheck and the crash suite's checks
//     of the hidden tables pass, and the store takes writes (crashVerify).
func TestPowerLossFeedAgreesWithData(t *testing.T) {
	// A store takes perStore cuts (its feed, read whole after each, grows),
	// then the run goes on with a new one.
	cuts, perStore, maxOps := 32, 4, 6000
	if testing.Short() {
		cuts, perStore, maxOps = 3, 3, 800
	}
	lying := os.Getenv(powerEnvLyingDisk) == "1"
	if lying {
		cuts, perStore, maxOps = 12, 4, 3000
	}
	refDir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 38))
	seed := rng.Uint64()
	t.Logf("seed %d", seed)
	rng = rand.New(rand.NewPCG(seed, 38))
	var dir, path, logPath string
	prevSeq := 0
	var done []powerCut
	for i := range cuts {
		if i%perStore == 0 {
			dir = t.TempDir()
			path, logPath = filepath.Join(dir, "power.db"), filepath.Join(dir, "ops.log")
			feedCrashSetup(t, path)
			prevSeq = 0
		}
		full := i%2 == 1
		label := fmt.Sprintf("cut %d (seed %d)", i, seed)
		base := powerFiles(t, dir)
		clockMs := crashStart.Add(time.Duration(i) * time.Hour).UnixMilli()
		child := startPowerChild(t, path, logPath, 1+rng.IntN(maxOps), seed+uint64(i), clockMs, full)
		child.WaitFor("cut")
		// The child starts from the sequence the last cut left (prevSeq) and
		// reports each commit after it; a cut inside its first commit
		// leaves it nothing reported.
		reported := max(crashLastSeq(t, child.Kill()), prevSeq)
		log, err := readPowerLog(logPath)
		require.NoError(t, err)

		// Every operation applied: what the child left on disk.
		all, _, _ := powerImage(base, log, powerKeepAll, false, rng)
		requireSameFiles(t, powerFiles(t, dir), all, label+": the log rebuilds the files the child left")
		powerWriteFiles(t, refDir, all)
		ref, _ := feedCheck(t, filepath.Join(refDir, "power.db"), label+" with every write kept")

		// The power cut.
		c := powerCut{mode: rng.IntN(powerKeepAll), ops: len(log)} // all is the state checked above
		if lying {
			c.mode = powerKeepSubset
		}
		var img map[string][]byte
		img, c.dropped, c.torn = powerImage(base, log, c.mode, lying, rng)
		powerWriteFiles(t, dir, img)
		label += " " + powerModeNames[c.mode]
		changes, held := feedCheck(t, path, label)

		require.LessOrEqual(t, len(changes), len(ref), "%s: the feed is a prefix of the history", label)
		if len(changes) > 0 {
			require.Equal(t, ref[:len(changes)], changes, "%s: the feed is a prefix of the history", label)
		}
		if n := len(changes); n > 0 && n < len(ref) {
			require.NotEqual(t, ref[n].Tx, changes[n-1].Tx, "%s: transaction %d is whole", label, changes[n-1].Tx)
		}
		seq := 0
		if v, ok := held[crashCFs[0]][crashSeqKey]; ok {
			seq, err = strconv.Atoi(v)
			require.NoError(t, err)
		}
		require.GreaterOrEqual(t, seq, prevSeq, "%s: nothing synced before the run is lost", label)
		require.LessOrEqual(t, seq, reported+1, "%s: at most one commit past the last reported", label)
		if full {
			require.GreaterOrEqual(t, seq, reported, "%s: SyncFull keeps every reported commit", label)
		}
		crashVerify(t, path, clockMs, 0)
		prevSeq = seq
		t.Logf("%s: %d operations, %d unsynced dropped, %d torn; sequence %d of %d reported, %d of %d changes",
			label, c.ops, c.dropped, c.torn, seq, reported, len(changes), len(ref))
		done = append(done, c)
	}
	if !testing.Short() {
		lost := slices.ContainsFunc(done, func(c powerCut) bool { return c.dropped > 0 })
		torn := slices.ContainsFunc(done, func(c powerCut) bool { return c.torn > 0 })
		require.True(t, lost && torn, "the cuts dropped and tore unsynced writes")
	}
}

// The model of a power cut: what was synced stays, a write after the
// last sync is kept whole, dropped, or torn at sectors, never anything
// else; a later sync makes what came before it stay.
func TestPowerImageModel(t *testing.T) {
	fill := func(b byte, n int) []byte { return bytes.Repeat([]byte{b}, n) }
	base := map[string][]byte{"f": fill(1, 1024), "gone": fill(9, 10)}
	log := []powerRecord{
		{op: powerOpWrite, name: "f", off: 0, data: fill(2, 512)},
		{op: powerOpSync, name: "f"},
		{op: powerOpDelete, name: "gone"},
		{op: powerOpWrite, name: "f", off: 512, data: fill(3, 1024)}, // over the second sector, then past the end
		{op: powerOpWrite, name: "n", off: 0, data: []byte("new")},
		{op: powerOpTruncate, name: "n", off: 2},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	none, dropped, _ := powerImage(base, log, powerKeepNone, false, rng)
	require.Equal(t, map[string][]byte{"f": append(fill(2, 512), fill(1, 512)...)}, none)
	require.Equal(t, 3, dropped)
	all, dropped, torn := powerImage(base, log, powerKeepAll, false, rng)
	require.Equal(t, map[string][]byte{"f": append(fill(2, 512), fill(3, 1024)...), "n": []byte("ne")}, all)
	require.Zero(t, dropped+torn)
	require.Equal(t, fill(1, 1024), base["f"], "the base is not changed")

	seen := map[string]bool{}
	for range 300 {
		for _, mode := range []int{powerKeepPrefix, powerKeepSubset} {
			img, _, _ := powerImage(base, log, mode, false, rng)
			f := img["f"]
			require.Equal(t, fill(2, 512), f[:512], "synced")
			require.Contains(t, []int{1024, 1536}, len(f))
			var sectors []byte
			for at := 512; at < len(f); at += 512 {
				s := f[at : at+512]
				switch {
				case bytes.Equal(s, fill(3, 512)):
				case at == 512 && bytes.Equal(s, fill(1, 512)):
				case at == 1024 && bytes.Equal(s, fill(0, 512)): // past the old end, not written
				default:
					require.Failf(t, "a sector is old, new, or zeros past the old end", "sector at %d: % x…", at, s[:4])
				}
				sectors = append(sectors, s[0])
			}
			seen[string(sectors)] = true
			if n, ok := img["n"]; ok {
				require.Contains(t, []string{"new", "ne", "", "\x00\x00"}, string(n))
			}
		}
	}
	require.True(t, seen["\x03\x00"] || seen["\x01\x03"], "a write is torn at sectors now and then")
	require.True(t, seen["\x01"] && seen["\x03\x03"], "a write is dropped or kept whole")
}

// The suite has teeth: run with a disk whose fsync does nothing, it
// fails (SQLite's ordering of syncs is what keeps a store sound and a
// prefix of its history, and the checks see the difference).
func TestPowerLossCatchesALyingDisk(t *testing.T) {
	if testutil.IsChild(t) {
		t.Skip("not inside itself")
	}
	out, err := testutil.RunChild(context.Background(), t, "TestPowerLossFeedAgreesWithData", powerEnvLyingDisk+"=1")
	require.Error(t, err, "the suite passed on a disk whose fsync does nothing:\n%s", out)
	require.Contains(t, string(out), "--- FAIL: TestPowerLossFeedAgreesWithData")
	for _, harness := range []string{"the log rebuilds the files", "the child ended", "wrote no line", "panic:"} {
		require.NotContains(t, string(out), harness, "the run failed for another reason")
	}
	i := bytes.Index(out, []byte("Error:"))
	require.GreaterOrEqual(t, i, 0)
	t.Logf("caught: %s", out[i:min(len(out), i+400)])
}
