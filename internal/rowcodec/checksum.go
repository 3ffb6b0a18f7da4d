package rowcodec

import (
	"fmt"
	"hash/crc32"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/layout"
)

// castagnoli is the CRC-32C table; hash/crc32 uses the CPU's CRC
// instruction for it where there is one (SSE 4.2, ARMv8).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// RowSum is the checksum snkv stores beside a row: the CRC-32C of the key's
// length (4 bytes, big-endian), the key and the second field (the value, or
// the 8-byte expiry of a key index row), as a signed 32-bit integer so that
// SQLite stores it in at most 4 bytes.
func RowSum(key, rest []byte) int64 {
	c := crc32.Update(lenSum(len(key)), castagnoli, key)
	return int64(int32(crc32.Update(c, castagnoli, rest)))
}

// JoinedSum is RowSum of a key and a second field that lie one after the
// other in memory (kv is the key, its first klen bytes, then the rest): one
// pass of the CRC instead of two, for the scan path, which copies them so.
func JoinedSum(klen int, kv []byte) int64 {
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

// TTLFlag is mixed (XOR) into the checksum of a data row whose key has a
// TTL, so that the row itself says whether a key index row must exist: a
// key index row lost to damage then makes the read fail instead of turning
// an expiring key into a permanent one.
const TTLFlag = 0x5f3759df

// DataSum is the checksum of a data row.
func DataSum(key, value []byte, hasTTL bool) int64 {
	return WithTTL(RowSum(key, value), hasTTL)
}

// WithTTL mixes TTLFlag into a data row's checksum s when the key has a TTL.
func WithTTL(s int64, hasTTL bool) int64 {
	if hasTTL {
		s ^= TTLFlag
	}
	return s
}

// ShowKey is key for an error message: quoted text when it is printable
// UTF-8 ("user:1"), else a blob literal as the sqlite3 shell takes it
// (x'00ff'); cut at 64 bytes.
func ShowKey(key []byte) string {
	const most = 64
	more := ""
	if len(key) > most {
		more = fmt.Sprintf("… (%d bytes)", len(key))
	}
	if printableText(key) {
		n := min(len(key), most)
		for n < len(key) && n > 0 && !utf8.RuneStart(key[n]) {
			n-- // cut between characters
		}
		return strconv.Quote(string(key[:n])) + more
	}
	return fmt.Sprintf("x'%x'", key[:min(len(key), most)]) + more
}

// printableText reports whether b is valid UTF-8 of printable characters
// only.
func printableText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// CorruptRow is the ErrCorrupt of a row of key: what is wrong with it.
func CorruptRow(key []byte, what string) error {
	return fmt.Errorf("%w: key %s: %s", engine.ErrCorrupt, ShowKey(key), what)
}

// Verdict is what a check of one stored row found.
type Verdict uint8

const (
	Verified   Verdict = iota // the checksum matches
	Unverified                // no checksum (written by another tool, or format 1)
)

// CheckSum compares the checksum column col of the current row with want.
// layout.NoChecksum is an unverified row, never an error; so is NULL, except
// in a format-2 table (strict), where the column is NOT NULL and a NULL can
// only come from damage.
func CheckSum(rows *engine.Rows, col int, key []byte, want int64, what string, strict bool) (Verdict, error) {
	// The common case, a match, takes one call into SQLite: the integer
	// (a NULL reads as 0, so a want of 0 needs the type as well).
	if want != 0 && rows.Int(col) == want {
		return Verified, nil
	}
	v, k := rows.IntKind(col)
	return CheckSumOf(v, k, key, want, what, strict)
}

// CheckSumOf is CheckSum of a stored checksum v of SQLite storage class k.
func CheckSumOf(v int64, k int, key []byte, want int64, what string, strict bool) (Verdict, error) {
	if v == want && k == engine.KindInt {
		return Verified, nil
	}
	switch k {
	case engine.KindNull:
		if strict {
			return 0, CorruptRow(key, what+" checksum is missing")
		}
		return Unverified, nil
	case engine.KindInt:
		if v == layout.NoChecksum {
			return Unverified, nil
		}
		return 0, CorruptRow(key, what+" checksum mismatch")
	}
	return 0, CorruptRow(key, what+" checksum is not an integer")
}

// RawValue returns the value column col of the current row (in SQLite's
// memory), checked to be a BLOB.
func RawValue(rows *engine.Rows, key []byte, col int) ([]byte, error) {
	v, k := rows.RawBlob(col)
	if k != engine.KindBlob {
		return nil, BadValueKind(key, k)
	}
	return v, nil
}

// BadValueKind is the error of a value stored as another class than BLOB.
func BadValueKind(key []byte, k int) error {
	return CorruptRow(key, fmt.Sprintf("value is stored as %s, not a BLOB (written by another tool?)", KindName(k)))
}

// ReadExpiry returns the expiry of the current row (column col; -1 for
// none), checked against the key index row's checksum in column crcCol
// (when >= 0).
func ReadExpiry(rows *engine.Rows, st *engine.Counters, key []byte, col, crcCol int, strict bool) (int64, error) {
	raw, k := rows.RawBlob(col)
	switch k {
	case engine.KindNull:
		return -1, nil
	case engine.KindBlob:
	default:
		return 0, CorruptRow(key, "expiry is not a BLOB")
	}
	exp, err := expiry.Decode(raw)
	if err != nil {
		return 0, CorruptRow(key, err.Error())
	}
	if crcCol >= 0 {
		var sum int64
		if kx := rows.KeyExpiry(); len(kx) == len(key)+len(raw) {
			sum = JoinedSum(len(key), kx) // one pass over both
		} else {
			sum = RowSum(key, raw)
		}
		verd, err := CheckSum(rows, crcCol, key, sum, "key index", strict)
		if err != nil {
			return 0, err
		}
		if verd == Unverified {
			st.Unverified.Add(1)
		}
	}
	return exp, nil
}

// CheckScanKey checks the key column of a scanned row: a BLOB of 1 byte to
// layout.MaxKeySize.
func CheckScanKey(rows *engine.Rows, col int) ([]byte, error) {
	return ScanKey(rows.RawBlob(col))
}

// ScanKey checks a scanned key of storage class k: a BLOB of 1 byte to
// layout.MaxKeySize.
func ScanKey(key []byte, k int) ([]byte, error) {
	if k != engine.KindBlob {
		return nil, fmt.Errorf("%w: a key is stored as %s, not a BLOB (written by another tool?)", engine.ErrCorrupt, KindName(k))
	}
	if len(key) == 0 || len(key) > layout.MaxKeySize {
		return nil, CorruptRow(key, fmt.Sprintf("key of %d bytes (1 to %d allowed)", len(key), layout.MaxKeySize))
	}
	return key, nil
}

func KindName(k int) string {
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
