package timelog_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
	_ "modernc.org/sqlite" // database/sql driver, to read the file as another tool would
)

// In an encrypted store a log's values (and Objects' payloads) are sealed,
// while its pages stay in the clear: the documented shell query still lists
// the records, and no value is readable in the file.
func TestEncryptedStoreSealsValuesNotRecords(t *testing.T) {
	path := t.TempDir() + "/enc.db"
	enc := &kvstore.Encryption{Key: bytes.Repeat([]byte{4}, 32)}
	db, err := kvstore.Open(path, kvstore.Options{Encryption: enc})
	require.NoError(t, err)
	l, err := timelog.Open(db, "metrics", timelog.Options{Values: true, Maintenance: timelog.Manual})
	require.NoError(t, err)
	var ts []int64
	var vals [][]byte
	for i := range 50 {
		ts = append(ts, int64(100+i))
		vals = append(vals, fmt.Appendf(nil, "confidential %d", i))
	}
	first, err := l.AppendValues(ts, vals)
	require.NoError(t, err)
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, l.Close())
	type point struct{ X, Y int }
	objs, err := timelog.OpenObjects[point](db, "points", timelog.Options{Maintenance: timelog.Manual}, timelog.ObjectOptions[point]{})
	require.NoError(t, err)
	_, err = objs.Append(1, point{X: 424242, Y: 7})
	require.NoError(t, err)
	require.NoError(t, objs.Log().Flush(ctx))
	require.NoError(t, objs.Close())
	require.NoError(t, db.Close())

	raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	rows, err := raw.Query(`SELECT value FROM "` + kvstore.HiddenTableName("timelog", "metrics/values") + `"`)
	require.NoError(t, err)
	n := 0
	for rows.Next() {
		var v []byte
		require.NoError(t, rows.Scan(&v))
		require.NotContains(t, string(v), "confidential")
		n++
	}
	require.NoError(t, rows.Err())
	require.NoError(t, raw.Close())
	require.Positive(t, n)

	db, err = kvstore.Open(path, kvstore.Options{Encryption: enc})
	require.NoError(t, err)
	l, err = timelog.Open(db, "metrics", timelog.Options{Values: true, Maintenance: timelog.Manual})
	require.NoError(t, err)
	s, err := l.Snapshot()
	require.NoError(t, err)
	v, err := s.Value(first + 7)
	require.NoError(t, err)
	require.Equal(t, "confidential 7", string(v))
	s.Close()
	require.NoError(t, l.IntegrityCheck(ctx))
	require.NoError(t, l.Close())
	objs, err = timelog.OpenObjects[point](db, "points", timelog.Options{Maintenance: timelog.Manual}, timelog.ObjectOptions[point]{})
	require.NoError(t, err)
	s, err = objs.Log().Snapshot()
	require.NoError(t, err)
	for o, err := range objs.All(s) {
		require.NoError(t, err)
		require.Equal(t, point{X: 424242, Y: 7}, o.Value)
	}
	s.Close()
	require.NoError(t, objs.Close())
	require.NoError(t, db.Close())

	// The records stay listable with the documented shell query.
	sh := sqlite3Shell(t)
	cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, sh, "-readonly", "-batch", "-bail", path)
	cmd.Stdin = strings.NewReader(documentedQuery(t, "timelog-query") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 50)
	require.True(t, strings.HasPrefix(lines[7], "107|"), lines[7])
}

// A values log made in a store in the clear, which is encrypted later: its
// values are sealed by the encryption (the table was marked sealed when
// the log opened).
func TestValuesSealedWhenStoreEncryptedLater(t *testing.T) {
	path := t.TempDir() + "/later.db"
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	l, err := timelog.Open(db, "m", timelog.Options{Values: true, Maintenance: timelog.Manual})
	require.NoError(t, err)
	h, err := l.AppendValue(5, []byte("plain then sealed"))
	require.NoError(t, err)
	require.NoError(t, l.Close())
	require.NoError(t, db.Encrypt(ctx, kvstore.Encryption{Key: bytes.Repeat([]byte{2}, 32)}))
	l, err = timelog.Open(db, "m", timelog.Options{Values: true, Maintenance: timelog.Manual})
	require.NoError(t, err)
	s, err := l.Snapshot()
	require.NoError(t, err)
	v, err := s.Value(h)
	require.NoError(t, err)
	require.Equal(t, "plain then sealed", string(v))
	s.Close()
	require.NoError(t, l.Close())
	require.NoError(t, db.Close())
	raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer raw.Close()
	var all []byte
	require.NoError(t, raw.QueryRow(`SELECT group_concat(value) FROM "`+kvstore.HiddenTableName("timelog", "m/values")+`"`).Scan(&all))
	require.NotContains(t, string(all), "plain then sealed")
}
