package timelog_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

// The values query of docs/format.md, run by the stock sqlite3 shell, lists
// the stored values by handle: from blocks with holes (a record deleted
// while buffered, a record removed by compaction), from several blocks (a
// small MaxValueSize bounds them) and from a lone value row; a removed
// record's value is gone.
func TestDocumentedValuesShellQuery(t *testing.T) {
	if sealedSuite {
		t.Skip("values are sealed in an encrypted store: the shell cannot read them")
	}
	sh := sqlite3Shell(t)
	q := documentedQuery(t, "timelog-values-query")

	path := t.TempDir() + "/shell.db"
	db, err := kvstore.Open(path, sealedOpts(kvstore.Options{MaxValueSize: 64}))
	require.NoError(t, err)
	l, err := timelog.Open(db, "metrics", timelog.Options{Values: true, Maintenance: timelog.Manual, PageMaxBytes: 8 + 24*2})
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
	compactAll(t, l)
	require.NoError(t, l.IntegrityCheck(ctx))
	require.NoError(t, l.Close())
	require.NoError(t, db.Close())

	cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, sh, "-readonly", "-batch", "-bail", path)
	cmd.Stdin = strings.NewReader(strings.TrimSpace(q) + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	want := []string{fmt.Sprintf("%d|3|ten", first), fmt.Sprintf("%d|6|thirty", first+2), fmt.Sprintf("%d|64|%s", first+3, lone)}
	for i := range 6 {
		if i != 2 {
			want = append(want, fmt.Sprintf("%d|8|value %d", next+uint64(i), 50+i))
		}
	}
	require.Equal(t, want, strings.Split(strings.TrimSpace(string(out)), "\n"))
}
