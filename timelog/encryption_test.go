package timelog_test

import (
	"bytes"
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
	_ "modernc.org/sqlite" // database/sql driver, to read the file as another tool would
)

// A values log made in a store in the clear, which is encrypted later: its
// values are sealed by the encryption (the table was marked sealed when
// the log opened).
func TestValuesSealedWhenStoreEncryptedLater(t *testing.T) {
	path := t.TempDir() + "/later.db"
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	l, err := timelog.Open(context.Background(), db, "m", timelog.Options{Values: true, Maintenance: timelog.Manual})
	require.NoError(t, err)
	h, err := l.AppendValue(5, []byte("plain then sealed"))
	require.NoError(t, err)
	require.NoError(t, l.Close())
	require.NoError(t, db.Encrypt(ctx, kvstore.Encryption{Key: bytes.Repeat([]byte{2}, 32)}))
	l, err = timelog.Open(context.Background(), db, "m", timelog.Options{Values: true, Maintenance: timelog.Manual})
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
	require.NoError(t, raw.QueryRow(`SELECT group_concat(value) FROM "`+layer.HiddenTableName("timelog", "m/values")+`"`).Scan(&all))
	require.NotContains(t, string(all), "plain then sealed")
}
