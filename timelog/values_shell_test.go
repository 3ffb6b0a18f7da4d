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
// the stored values by handle; a removed record's value is gone.
func TestDocumentedValuesShellQuery(t *testing.T) {
	sh := sqlite3Shell(t)
	q := documentedQuery(t, "timelog-values-query")

	path := t.TempDir() + "/shell.db"
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	l, err := timelog.Open(db, "metrics", timelog.Options{Values: true, Maintenance: timelog.Manual})
	require.NoError(t, err)
	first, err := l.AppendValues([]int64{10, 20, 30}, [][]byte{[]byte("ten"), []byte("twenty"), []byte("thirty")})
	require.NoError(t, err)
	require.NoError(t, l.DeleteRange(20, 21))
	require.NoError(t, l.Flush(ctx))
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
	want := []string{fmt.Sprintf("%016X|3|ten", first), fmt.Sprintf("%016X|6|thirty", first+2)}
	require.Equal(t, want, strings.Split(strings.TrimSpace(string(out)), "\n"))
}
