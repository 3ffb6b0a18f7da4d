package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/internal/testutil/tempstore"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

// The values query of docs/format.md, run by the stock sqlite3 shell, lists
// the stored values by handle: from blocks with holes (a record deleted
// while buffered, a record removed by compaction), from several blocks (a
// small MaxValueSize bounds them) and from a lone value row; a removed
// record's value is gone.
func TestTimelogDocumentedValuesShellQuery(t *testing.T) {
	if tempstore.Sealed() {
		t.Skip("values are sealed in an encrypted store: the shell cannot read them")
	}
	testutil.SQLite3(t)
	ctx := context.Background()
	path := tempstore.Path(t, "shell.db")
	db, err := kvstore.Open(path, tempstore.Options(kvstore.Options{MaxValueSize: 64}))
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
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, tlCompact(ctx, l))
	require.NoError(t, l.IntegrityCheck(ctx))
	require.NoError(t, l.Close())
	require.NoError(t, db.Close())

	want := []string{fmt.Sprintf("%d|3|ten", first), fmt.Sprintf("%d|6|thirty", first+2), fmt.Sprintf("%d|64|%s", first+3, lone)}
	for i := range 6 {
		if i != 2 {
			want = append(want, fmt.Sprintf("%d|8|value %d", next+uint64(i), 50+i))
		}
	}
	require.Equal(t, want, shellQuery(t, "timelog-values-query", path, "metrics"))
}
