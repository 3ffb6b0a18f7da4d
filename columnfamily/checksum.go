package columnfamily

import (
	"context"
	"fmt"
	"hash/crc32"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
)

// castagnoli is the CRC-32C table; hash/crc32 uses the CPU's CRC
// instruction for it where there is one (SSE 4.2, ARMv8).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// rowSum is the checksum snkv stores beside a row: the CRC-32C of the key's
// length (4 bytes, big-endian), the key and the second field (the value, or
// the 8-byte expiry of a key index row), as a signed 32-bit integer so that
// SQLite stores it in at most 4 bytes.
func rowSum(key, rest []byte) int64 {
	c := crc32.Update(lenSum(len(key)), castagnoli, key)
	return int64(int32(crc32.Update(c, castagnoli, rest)))
}

// joinedSum is rowSum of a key and a second field that lie one after the
// other in memory (kv is the key, its first klen bytes, then the rest): one
// pass of the CRC instead of two, for the scan path, which copies them so.
func joinedSum(klen int, kv []byte) int64 {
	return int64(int32(crc32.Update(lenSum(klen), castagnoli, kv)))
}

// lenSums[n] is the CRC-32C of the 4-byte length n, the start of every
// row's checksum, for the key lengths most keys have.
var lenSums = func() (t [256]uint32) {
	for n := range t {
		t[n] = updateLen(0, uint32(n))
	}
	return t
}()

// lenSum is the CRC-32C of the 4-byte big-endian length n.
func lenSum(n int) uint32 {
	if n < len(lenSums) {
		return lenSums[n]
	}
	return updateLen(0, uint32(n))
}

// updateLen is crc32.Update(crc, castagnoli, n as 4 bytes big-endian),
// byte by byte from the table, so that no buffer escapes to the heap (the
// package hands the bytes on through a function variable).
func updateLen(crc, n uint32) uint32 {
	crc = ^crc
	for shift := 24; shift >= 0; shift -= 8 {
		crc = castagnoli[byte(crc)^byte(n>>shift)] ^ (crc >> 8)
	}
	return ^crc
}

// ttlFlag is mixed (XOR) into the checksum of a data row whose key has a
// TTL, so that the row itself says whether a key index row must exist: a
// key index row lost to damage then makes the read fail instead of turning
// an expiring key into a permanent one.
const ttlFlag = 0x5f3759df

// dataSum is the checksum of a data row.
func dataSum(key, value []byte, hasTTL bool) int64 {
	return withTTL(rowSum(key, value), hasTTL)
}

// withTTL mixes ttlFlag into a data row's checksum s when the key has a TTL.
func withTTL(s int64, hasTTL bool) int64 {
	if hasTTL {
		s ^= ttlFlag
	}
	return s
}

// showKey is key for an error message: hex, cut at 64 bytes.
func showKey(key []byte) string {
	if len(key) > 64 {
		return fmt.Sprintf("%x… (%d bytes)", key[:64], len(key))
	}
	return fmt.Sprintf("%x", key)
}

func corruptRow(key []byte, what string) error {
	return fmt.Errorf("%w: key %s: %s", engine.ErrCorrupt, showKey(key), what)
}

// verdict is what a check of one stored row found.
type verdict uint8

const (
	rowVerified   verdict = iota // the checksum matches
	rowUnverified                // no checksum (written by another tool, or format 1)
)

// checkSum compares the checksum column col of the current row with want.
// expiry.NoChecksum is an unverified row, never an error; so is NULL, except
// in a format-2 table (strict), where the column is NOT NULL and a NULL can
// only come from damage.
func checkSum(rows *engine.Rows, col int, key []byte, want int64, what string, strict bool) (verdict, error) {
	// The common case, a match, takes one call into SQLite: the integer
	// (a NULL reads as 0, so a want of 0 needs the type as well).
	if want != 0 && rows.Int(col) == want {
		return rowVerified, nil
	}
	v, k := rows.IntKind(col)
	return checkSumOf(v, k, key, want, what, strict)
}

// checkSumOf is checkSum of a stored checksum v of SQLite storage class k.
func checkSumOf(v int64, k int, key []byte, want int64, what string, strict bool) (verdict, error) {
	if v == want && k == engine.KindInt {
		return rowVerified, nil
	}
	switch k {
	case engine.KindNull:
		if strict {
			return 0, corruptRow(key, what+" checksum is missing")
		}
		return rowUnverified, nil
	case engine.KindInt:
		if v == expiry.NoChecksum {
			return rowUnverified, nil
		}
		return 0, corruptRow(key, what+" checksum mismatch")
	}
	return 0, corruptRow(key, what+" checksum is not an integer")
}

// readValue returns a copy of the value of the current row of a get (in
// the clear) read on c, checked to be a BLOB and, in a table with a
// checksum column, to match its checksum, which also says whether the key
// has a TTL (hasTTL: the read found a key index row) and how the value is
// stored.
func (m *meta) readValue(ctx context.Context, c *engine.Conn, rows *engine.Rows, st *engine.Counters, key []byte, sh *shape, hasTTL bool) ([]byte, error) {
	raw, err := rawValue(rows, key, getValue)
	if err != nil {
		return nil, err
	}
	if sum := dataSum(key, raw, hasTTL); sh.t.Crc && (sum == 0 || m.sealing() != nil || rows.Int(getCrc) != sum) {
		// Not the common case of a verified row in the clear, which takes
		// one call into SQLite.
		crc, k := rows.IntKind(getCrc)
		v, opened, err := m.decodeOn(ctx, c, nil, st, key, raw, sum, crc, k, sh.t.V2, nil, nil)
		if err != nil || opened {
			return v, err
		}
	}
	return append(make([]byte, 0, len(raw)), raw...), nil
}

// rawValue returns the value column col of the current row (in SQLite's
// memory), checked to be a BLOB.
func rawValue(rows *engine.Rows, key []byte, col int) ([]byte, error) {
	v, k := rows.RawBlob(col)
	if k != engine.KindBlob {
		return nil, badValueKind(key, k)
	}
	return v, nil
}

// badValueKind is the error of a value stored as another class than BLOB.
func badValueKind(key []byte, k int) error {
	return corruptRow(key, fmt.Sprintf("value is stored as %s, not a BLOB (written by another tool?)", kindName(k)))
}

// readExpiry returns the expiry of the current row (column col; -1 for
// none), checked against the key index row's checksum in column crcCol
// (when >= 0).
func readExpiry(rows *engine.Rows, st *engine.Counters, key []byte, col, crcCol int, strict bool) (int64, error) {
	raw, k := rows.RawBlob(col)
	switch k {
	case engine.KindNull:
		return -1, nil
	case engine.KindBlob:
	default:
		return 0, corruptRow(key, "expiry is not a BLOB")
	}
	exp, err := expiry.Decode(raw)
	if err != nil {
		return 0, corruptRow(key, err.Error())
	}
	if crcCol >= 0 {
		verd, err := checkSum(rows, crcCol, key, rowSum(key, raw), "key index", strict)
		if err != nil {
			return 0, err
		}
		if verd == rowUnverified {
			st.Unverified.Add(1)
		}
	}
	return exp, nil
}

// checkScanKey checks the key column of a scanned row: a BLOB of 1 byte to
// MaxKeySize.
func checkScanKey(rows *engine.Rows, col int) ([]byte, error) {
	return scanKey(rows.RawBlob(col))
}

// scanKey checks a scanned key of storage class k: a BLOB of 1 byte to
// MaxKeySize.
func scanKey(key []byte, k int) ([]byte, error) {
	if k != engine.KindBlob {
		return nil, fmt.Errorf("%w: a key is stored as %s, not a BLOB (written by another tool?)", engine.ErrCorrupt, kindName(k))
	}
	if len(key) == 0 || len(key) > MaxKeySize {
		return nil, corruptRow(key, fmt.Sprintf("key of %d bytes (1 to %d allowed)", len(key), MaxKeySize))
	}
	return key, nil
}

func kindName(k int) string {
	switch k {
	case engine.KindInt:
		return "INTEGER"
	case engine.KindFloat:
		return "REAL"
	case engine.KindText:
		return "TEXT"
	case engine.KindBlob:
		return "BLOB"
	case engine.KindNull:
		return "NULL"
	}
	return fmt.Sprintf("type %d", k)
}
