package rowcodec

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/stretchr/testify/require"
)

// readOne runs Decode on the one row of a statement that selects
// key, value, expiry and checksum as given (Cols of a scan, no key index
// checksum), in a format-2 table's codec.
func readOne(t *testing.T, c *engine.Conn, liveAt int64, key, value, exp, crc any) (Row, []byte, error) {
	t.Helper()
	o := layout.For("t", true, true)
	cd := &Codec{Objects: &o, Stats: new(engine.Counters)}
	rows, err := c.Query(context.Background(), `SELECT ?1, ?2, ?3, ?4`, key, value, exp, crc)
	require.NoError(t, err)
	defer rows.Close()
	require.True(t, rows.Next())
	cols := Cols{Key: 0, Value: 1, Expiry: 2, Crc: 3, Ecrc: -1}
	var b Buffers
	k, v, e, err := cd.Decode(rows, &cols, true, liveAt, nil, CopyRow, &b)
	return Row{Key: k, Stored: v, Exp: e}, v, err
}

// Decode checks a row in one order, the key, the expiry, the value, then
// its checksum, with the TTL flag when it has an expiry.
func TestDecodeOrder(t *testing.T) {
	db, err := engine.Open(engine.Config{Path: filepath.Join(t.TempDir(), "f.db"), Journal: "WAL", Sync: "NORMAL", BusyTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	c, err := db.AcquireWriter(context.Background())
	require.NoError(t, err)
	defer db.ReleaseWriter(c)
	k, v := []byte("k"), []byte("v")

	r, got, err := readOne(t, c, AnyTime, k, v, nil, DataSum(k, v, false))
	require.NoError(t, err)
	require.Equal(t, v, got)
	require.EqualValues(t, -1, r.Exp)

	exp := expiry.Encode(1000)
	r, got, err = readOne(t, c, AnyTime, k, v, exp, DataSum(k, v, true))
	require.NoError(t, err, "the TTL flag in the checksum of a key with an expiry")
	require.Equal(t, v, got)
	require.EqualValues(t, 1000, r.Exp)
	_, _, err = readOne(t, c, AnyTime, k, v, exp, DataSum(k, v, false))
	require.ErrorIs(t, err, engine.ErrCorrupt, "an expiry the row's checksum does not know")
	_, _, err = readOne(t, c, AnyTime, k, v, nil, DataSum(k, []byte("w"), false))
	require.ErrorIs(t, err, engine.ErrCorrupt)
	require.Contains(t, err.Error(), "row checksum mismatch")

	// The expiry comes before the value: an expired row's value is not
	// read when the read skips expired rows, and is when it reads all.
	_, got, err = readOne(t, c, 2000, k, int64(7), exp, nil)
	require.NoError(t, err, "an expired row's value is not read")
	require.Nil(t, got)
	_, _, err = readOne(t, c, AnyTime, k, int64(7), exp, nil)
	require.ErrorIs(t, err, engine.ErrCorrupt)
	require.Contains(t, err.Error(), "not a BLOB")

	_, _, err = readOne(t, c, AnyTime, k, v, int64(5), nil)
	require.ErrorIs(t, err, engine.ErrCorrupt)
	require.Contains(t, err.Error(), "expiry is not a BLOB")
	_, _, err = readOne(t, c, AnyTime, []byte{}, v, nil, nil)
	require.ErrorIs(t, err, engine.ErrCorrupt, "an empty key")
	_, _, err = readOne(t, c, AnyTime, "k", v, nil, nil)
	require.ErrorIs(t, err, engine.ErrCorrupt, "a key stored as TEXT")

	// A row without a checksum (written by another tool) is unverified in
	// a table of format 1 and damage in format 2.
	_, _, err = readOne(t, c, AnyTime, k, v, nil, nil)
	require.ErrorIs(t, err, engine.ErrCorrupt)
	require.Contains(t, err.Error(), "checksum is missing")
}
