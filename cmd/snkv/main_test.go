package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// The tests run the real binary, built once by TestMain.
var snkvBin string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "snkv-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	snkvBin = filepath.Join(dir, "snkv")
	if runtime.GOOS == "windows" {
		snkvBin += ".exe"
	}
	build := exec.Command("go", "build", "-o", snkvBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building snkv:", err)
		os.Exit(1)
	}
	// Others (the user the read-only tests switch to) must reach the binary.
	_ = os.Chmod(dir, 0o755)
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// t0 is the fixed "now" of the fixtures; the command sees it through the
// test-only SNKV_CLI_NOW variable.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// result is what one run of the binary did.
type result struct {
	stdout, stderr string
	code           int
}

// cli runs the binary with args, stdin from in (nil: empty), the clock at
// t0 and a clean environment.
func cli(t testing.TB, in io.Reader, args ...string) result {
	t.Helper()
	return cliAt(t, t0, in, args...)
}

// cliAt runs the binary with its clock at now.
func cliAt(t testing.TB, now time.Time, in io.Reader, args ...string) result {
	t.Helper()
	return cliDir(t, "", now, in, args...)
}

// cliDir runs the binary in the directory dir ("": the test's).
func cliDir(t testing.TB, dir string, now time.Time, in io.Reader, args ...string) result {
	t.Helper()
	cmd := snkvCmd(now, args...)
	cmd.Dir = dir
	return runCmd(t, cmd, in)
}

// snkvCmd is the command that runs the binary with args and its clock at
// now, in the test's environment.
func snkvCmd(now time.Time, args ...string) *exec.Cmd {
	cmd := exec.Command(snkvBin, args...)
	cmd.Env = append(os.Environ(), nowEnv+"="+now.Format(time.RFC3339Nano))
	return cmd
}

// runCmd runs cmd with stdin from in (nil: empty) and returns what it printed
// and its exit code; a command that could not run fails the test.
func runCmd(t testing.TB, cmd *exec.Cmd, in io.Reader) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err, "running %v", cmd.Args)
	}
	return result{out.String(), errb.String(), code}
}

// requireClean checks that a failure was reported as a message, never as a
// Go panic or stack trace.
func requireClean(t testing.TB, r result) {
	t.Helper()
	for _, bad := range []string{"panic", "goroutine ", ".go:"} {
		require.NotContains(t, r.stderr, bad, "stderr must hold a message, not a trace")
	}
	require.NotContains(t, r.stderr, ": snkv: ", "the library's prefix is not repeated inside the message")
	require.NotContains(t, r.stderr, "snkv: snkv", "the message has one prefix")
	require.NotContains(t, strings.TrimPrefix(r.stderr, "snkv: "), ": timelog: ", "the time-series package's prefix is not repeated in the message")
	require.NotContains(t, r.stderr, `timelog: "`, "the time-series package's prefix is not in the message")
}

// fixture writes a small store with the library: a default column family
// with text and binary keys, a "sessions" column family with TTL keys (one
// of them expired at t0 but not purged), and an empty "empty" one. The
// store's clock starts an hour before t0.
func fixture(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fixture.db")
	clock := kvstore.NewManualClock(t0.Add(-time.Hour))
	db, err := kvstore.Open(path, kvstore.Options{Clock: clock})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	for _, kv := range [][2]string{
		{"user:1", "alice"}, {"user:2", "bob"}, {"user:3", "carol"},
		{"config", `{"mode":"fast"}`}, {"bin\x00\xff", "\x01\x02tab\there"}, {"back\\slash", "caf\xc3\xa9"},
		{"zero", ""},
	} {
		require.NoError(t, db.Put([]byte(kv[0]), []byte(kv[1])))
	}
	s, err := db.CreateColumnFamily("sessions")
	require.NoError(t, err)
	require.NoError(t, s.PutTTL([]byte("tok-a"), []byte("A"), 90*time.Minute))     // 30m left at t0
	require.NoError(t, s.PutTTL([]byte("tok-b"), []byte("B"), 3*time.Hour+1500))   // 2h0m0.001s left (rounded up to ms)
	require.NoError(t, s.PutTTL([]byte("tok-old"), []byte("old"), 30*time.Minute)) // expired at t0
	require.NoError(t, s.Put([]byte("perm"), []byte("P")))
	_, err = db.CreateColumnFamily("empty")
	require.NoError(t, err)
	return path
}

// golden compares got with testdata/golden/name, or rewrites the file with
// -update.
func golden(t testing.TB, name, got string) {
	t.Helper()
	testutil.Golden(t, name, got, "the command's output changed: if that is meant, go test -update ./cmd/snkv/")
}

// lines splits output into its lines.
func lines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
