package timelog_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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

// sqlite3Shell returns the path of the stock sqlite3 shell; the test is
// skipped without one, except under CI=true, where it fails.
func sqlite3Shell(t *testing.T) string {
	sh, err := exec.LookPath("sqlite3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("sqlite3 is not on the PATH (required under CI=true): %v", err)
		}
		t.Skipf("sqlite3 is not on the PATH: %v", err)
	}
	return sh
}

// The query docs/format.md gives, run by the stock sqlite3 shell, lists what
// the log returns: from dense pages (small ones, several a flush, and one
// of a thousand records with multi-byte varints), and from pages of the
// fixed layout older logs hold beside dense ones.
func TestDocumentedShellQuery(t *testing.T) {
	for _, fixed := range []bool{false, true} {
		t.Run(fmt.Sprintf("fixed=%v", fixed), func(t *testing.T) { testShellQuery(t, fixed) })
	}
}

func testShellQuery(t *testing.T, fixed bool) {
	sh := sqlite3Shell(t)
	path := t.TempDir() + "/shell.db"
	db, err := kvstore.Open(path, sealedOpts(kvstore.Options{}))
	require.NoError(t, err)
	l, err := timelog.Open(db, "metrics", timelog.Options{Maintenance: timelog.Manual, PageMaxBytes: 64})
	require.NoError(t, err)
	in := recs(5, 1, math.MaxInt64, 2, math.MinInt64, 3, 5, 4, -7, 5, 0, 6, 123456789012, 7)
	require.NoError(t, l.AppendBatch(in[:4]))
	if fixed {
		defer timelog.WriteFixedPages()()
	}
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, l.AppendBatch(in[4:]))
	require.NoError(t, l.Append(5, math.MaxUint64))
	require.NoError(t, l.Close())
	big, err := timelog.Open(db, "big", timelog.Options{Maintenance: timelog.Manual})
	require.NoError(t, err)
	var wantBig []string
	for i := range 1000 {
		ts, h := int64(1_000_000+i*i*977), uint64(i)*0x9E3779B97F4A7C15
		require.NoError(t, big.Append(ts, h))
		wantBig = append(wantBig, fmt.Sprintf("%d|%d", ts, int64(h)))
	}
	require.NoError(t, big.Close())
	require.NoError(t, db.Close())

	cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := func(log string) []string {
		cmd := exec.CommandContext(cctx, sh, "-readonly", "-batch", "-bail", path)
		q := strings.ReplaceAll(documentedQuery(t, "timelog-query"), "timelog:metrics/", "timelog:"+log+"/")
		cmd.Stdin = strings.NewReader(q + "\n")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, stderr.String())
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	want := []string{
		fmt.Sprintf("%d|3", int64(math.MinInt64)), "-7|5", "0|6", "5|1", "5|4", "5|-1", "123456789012|7",
		fmt.Sprintf("%d|2", int64(math.MaxInt64)),
	}
	require.Equal(t, want, run("metrics"))
	require.Equal(t, wantBig, run("big"))
}
