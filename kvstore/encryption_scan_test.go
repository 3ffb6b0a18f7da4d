package kvstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// A scan of an encrypted store, copying and borrowing, reports each kind of
// bad row at its place, after the rows before it, with the error Get gives
// and CheckIntegrity names: damage (ErrCorrupt: the row's checksum, which
// covers the sealed bytes, catches it before the tag) apart from a value
// that does not belong where it is (ErrAuth: sealed for another table, or
// in the clear).
func TestEncryptedScanBadRows(t *testing.T) {
	const n = 20
	key := func(i int) []byte { return fmt.Appendf(nil, "k%02d", i) }
	for _, tc := range []struct {
		name   string
		update []string // on the row of k10; ?1 is its key
		is     error    // what the scan and Get report at k10
	}{
		// A flipped byte, as the disk would flip it: the checksum stays
		// (the store's trigger marks a value changed by SQL unverified, so
		// it is put back).
		{"a changed byte of the sealed value", []string{
			`CREATE TEMP TABLE old AS SELECT crc FROM main."default" WHERE key = ?1`,
			`UPDATE main."default" SET value = CAST(substr(value, 1, 30) || CASE WHEN substr(value, 31, 1) = x'00' THEN x'01' ELSE x'00' END || substr(value, 32) AS BLOB) WHERE key = ?1`,
			`UPDATE main."default" SET crc = (SELECT crc FROM old) WHERE key = ?1`,
		}, kvstore.ErrCorrupt},
		{"the value and checksum of another table", []string{`UPDATE main."default" SET value = (SELECT value FROM other WHERE key = ?1), crc = (SELECT crc FROM other WHERE key = ?1) WHERE key = ?1`}, kvstore.ErrAuth},
		{"the value and checksum of a value in the clear", []string{`UPDATE main."default" SET value = (SELECT value FROM plain."default" WHERE key = ?1), crc = (SELECT crc FROM plain."default" WHERE key = ?1) WHERE key = ?1`}, kvstore.ErrAuth},
		{"a damaged checksum", []string{`UPDATE main."default" SET crc = crc + 1 WHERE key = ?1`}, kvstore.ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A store in the clear with the same key, for a row in the
			// clear with its right checksum (in the run against encrypted
			// stores, a row sealed in another store: ErrAuth as well).
			plain := tempPath(t)
			c := openAt(t, plain, kvstore.Options{})
			require.NoError(t, c.Default().Put(key(10), []byte("value in the clear")))
			require.NoError(t, c.Close())
			path := tempPath(t)
			s := openAt(t, path, kvstore.Options{Encryption: rawKey(5)})
			cf := s.Default()
			for i := range n {
				require.NoError(t, cf.Put(key(i), fmt.Appendf(nil, "value %d", i)))
			}
			other, err := s.CreateColumnFamily("other")
			require.NoError(t, err)
			require.NoError(t, other.Put(key(10), []byte("another value")))
			require.NoError(t, s.Close())
			db, err := sql.Open("sqlite", path)
			require.NoError(t, err)
			conn, err := db.Conn(context.Background())
			require.NoError(t, err)
			_, err = conn.ExecContext(context.Background(), `ATTACH ? AS plain`, plain)
			require.NoError(t, err)
			for _, q := range tc.update {
				_, err = conn.ExecContext(context.Background(), q, key(10))
				require.NoError(t, err)
			}
			require.NoError(t, conn.Close())
			require.NoError(t, db.Close())
			s = openAt(t, path, kvstore.Options{Encryption: rawKey(5)})
			cf = s.Default()

			for _, borrow := range []bool{false, true} {
				var got []string
				var scanErr error
				for e, err := range cf.Scan(kvstore.IterOptions{Borrow: borrow}) {
					if err != nil {
						scanErr = err
						break
					}
					got = append(got, string(e.Key)+"="+string(e.Value))
				}
				require.ErrorIs(t, scanErr, tc.is, "borrow %v", borrow)
				require.ErrorContains(t, scanErr, `key "k10"`)
				require.Len(t, got, 10, "the rows before the bad one")
			}
			_, err = cf.Get(key(10))
			require.ErrorIs(t, err, tc.is)
			rep, err := s.CheckIntegrity(context.Background())
			require.NoError(t, err)
			require.Len(t, rep.Problems, 1)
			require.Contains(t, rep.Problems[0], `key "k10"`)
		})
	}
}

// A sealed row another tool marked unverified (its checksum set to 2^32)
// is read by a scan, which opens it, and counted as an unverified read.
func TestEncryptedScanCountsUnverifiedRows(t *testing.T) {
	path := tempPath(t)
	s := openAt(t, path, kvstore.Options{Encryption: rawKey(5)})
	for i := range 5 {
		require.NoError(t, s.Default().Put(fmt.Appendf(nil, "k%d", i), fmt.Appendf(nil, "value %d", i)))
	}
	require.NoError(t, s.Close())
	execRaw(t, path, `UPDATE "default" SET crc = 4294967296 WHERE key = CAST('k2' AS BLOB)`)
	s = openAt(t, path, kvstore.Options{Encryption: rawKey(5)})
	for _, borrow := range []bool{false, true} {
		before, err := s.Stats(context.Background())
		require.NoError(t, err)
		var got []string
		for e, err := range s.Default().Scan(kvstore.IterOptions{Borrow: borrow}) {
			require.NoError(t, err)
			got = append(got, string(e.Value))
		}
		require.Equal(t, []string{"value 0", "value 1", "value 2", "value 3", "value 4"}, got)
		after, err := s.Stats(context.Background())
		require.NoError(t, err)
		require.Equal(t, before.UnverifiedReads+1, after.UnverifiedReads, "borrow %v", borrow)
	}
}
