package kvstore_test

import (
	"context"
	"testing"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// The integrity check reads every row as a get reads it: a key index row
// whose expiry is not 8 bytes (a version-1 table has no CHECK against it)
// makes a get of its key fail, and the check reports both that row and
// the data row the get fails on.
func TestIntegrityReportsTheRowsAGetFailsOn(t *testing.T) {
	ctx := context.Background()
	db, path := openV1(t, kvstore.Options{})
	require.NoError(t, db.Close())
	rawExec(t, path, `UPDATE "__snkv_ttl_k__sessions" SET expire_ms = x'0102' WHERE key = CAST('s01' AS BLOB)`)

	db = openAt(t, path, kvstore.Options{Clock: kvstore.NewManualClock(fmtStart)})
	sess, err := db.OpenColumnFamily("sessions")
	require.NoError(t, err)
	_, err = sess.Get(b("s01"))
	require.ErrorIs(t, err, kvstore.ErrCorrupt)
	v, err := sess.Get(b("s02"))
	require.NoError(t, err, "the other keys stay readable")
	require.Equal(t, "session 2", string(v))

	rep, err := db.CheckIntegrity(ctx)
	require.NoError(t, err)
	// The TTL tables' own check adds what it finds in the key index.
	require.Subset(t, rep.Problems, []string{
		`column family "sessions": 1 rows have a key or value of the wrong type or length (written by another tool)`,
		`column family "sessions": 1 TTL key index rows have a key or value of the wrong type or length (written by another tool)`,
		`column family "sessions": 1 key index rows whose expiry is not 8 bytes`,
	})
	require.EqualValues(t, 25+12+8-2, rep.Unverified, "every other row is read, without a checksum in version 1")
}
