package rowcodec

// The row: how one row of a column family (or hidden table) is checked
// when it is read and encoded when it is written. Every read (a point
// read, a scan, the integrity check, a re-seal) goes through Read (the
// expiry, then the raw value) and Check (the checksum, then the seal);
// every write stores what Encode returns, with Put below SQL or through
// the table's upsert statement.

import (
	"context"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/internal/seal"
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

// Limits of a key and a value.

// CheckKey checks a key: 1 to layout.MaxKeySize bytes (ErrInvalidKey,
// ErrKeyTooLarge).
func CheckKey(key []byte) error {
	switch {
	case len(key) == 0:
		return fmt.Errorf("%w: key is empty", engine.ErrInvalidKey)
	case len(key) > layout.MaxKeySize:
		return fmt.Errorf("%w: key of %d bytes (at most %d)", engine.ErrKeyTooLarge, len(key), layout.MaxKeySize)
	}
	return nil
}

// CheckKV checks a key and the value to store under it, whose limit is
// maxValue bytes (ErrValueTooLarge).
func CheckKV(key, value []byte, maxValue int) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if len(value) > maxValue {
		return fmt.Errorf("%w: value of %d bytes (at most %d)", engine.ErrValueTooLarge, len(value), maxValue)
	}
	return nil
}

// NonNil makes a nil value an empty one: SQLite would store nil as NULL.
func NonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Row is one data row as stored: its key, its value as stored (in the
// clear or sealed) and its expiry.
type Row struct {
	Key    []byte
	Stored []byte
	Exp    int64 // the expiry in Unix milliseconds; -1: none
	// Joined, when not nil, is Key then Stored side by side in memory (a
	// row read below SQL, or a scan's copy): the checksum is one pass.
	Joined []byte
	// Fast is set for a row a scan read below SQL (engine.Rows.FastRow):
	// its checksum is read with FastCrc.
	Fast bool
}

// Sum is the checksum the row must have in the clear:
// DataSum(Key, Stored, the row has an expiry).
func (r *Row) Sum() int64 {
	if r.Joined != nil {
		return WithTTL(JoinedSum(len(r.Key), r.Joined), r.Exp >= 0)
	}
	return DataSum(r.Key, r.Stored, r.Exp >= 0)
}

// Codec is how the rows of one table are read and written: its objects,
// the encryption state, and for reads the counters and the snapshot. The
// column family's state makes one (family.Family.Codec); the catalog's
// checks and conversions make their own.
type Codec struct {
	// Objects names the table and says its layout: with or without the
	// checksum column (Crc), format 2 (V2: a missing checksum is damage).
	Objects *layout.Objects
	// Upsert is the statement Put runs when the row cannot be written
	// below SQL (layout.Queries.Upsert).
	Upsert string
	// Seal is the encryption state (nil: values in the clear); Sealed
	// whether the table's values are sealed when the store is encrypted.
	Seal   *seal.State
	Sealed bool
	// Stats counts the rows read without a checksum (Unverified).
	Stats *engine.Counters

	// A read that fails authentication under Seal is tried again with
	// the state of its snapshot (see seal.go): the read's transaction
	// runs on Conn with Ctx, Snap records the state once looked up (nil:
	// nothing to record it in), Past holds the states the store followed.
	Ctx  context.Context
	Conn *engine.Conn
	Snap *Snapshot
	Past *History
}

// Encode returns what a write on c stores for value under key: the value,
// or its sealed form (in c's scratch buffer: the write copies it), and the
// row's checksum (nil for a version-1 table, which has no column for it
// and is never encrypted).
func (cd *Codec) Encode(c *engine.Conn, key, value []byte, hasTTL bool) (stored []byte, sum any) {
	if !cd.Objects.Crc {
		return NonNil(value), nil
	}
	if st := cd.Seal; st != nil && st.Write != nil {
		stored = st.Write.Seal(c.Scratch(len(value)+seal.Overhead), cd.Objects.Data, key, value)
		return stored, WithTTL(RowSum(key, stored), hasTTL) ^ st.Write.Flag()
	}
	return NonNil(value), DataSum(key, value, hasTTL)
}

// Put writes key's row, with no TTL, inside a write transaction on c: the
// value encoded, below SQL when the engine can (it writes the same bytes),
// else with the upsert statement.
func (cd *Codec) Put(ctx context.Context, c *engine.Conn, key, value []byte) error {
	stored, sum := cd.Encode(c, key, value, false)
	return cd.Write(ctx, c, key, stored, sum)
}

// Write writes a data row, with no TTL, of stored value and checksum sum
// (Encode's).
func (cd *Codec) Write(ctx context.Context, c *engine.Conn, key, stored []byte, sum any) error {
	crc, _ := sum.(int64)
	if ok, err := c.Upsert(cd.Objects, key, stored, crc); ok || err != nil {
		return err
	}
	_, err := c.Exec(ctx, cd.Upsert, key, stored, nil, nil, sum)
	return err
}

// Cols says where a read's statement has the columns of a row (-1: not
// read). Key is read only by a scan (a point read knows its key); Crc
// and Ecrc are -1 in a version-1 table.
type Cols struct {
	Key, Value, Expiry, Crc, Ecrc int
}

// AnyTime is Read's liveAt for a read of every row's value, expired or
// not.
const AnyTime = math.MinInt64

// Read reads the current row of rows into r, in the order every read
// checks a row: the key (a scan's, checked to be a BLOB of legal length;
// a point read sets r.Key), the expiry (checked against the key index
// row's checksum), then the value as stored, checked to be a BLOB. Unless
// liveAt is AnyTime, the value of a row expired at liveAt is not read (a scan
// skips it; AnyTime: every row's value is read). keyIndex false says that a row read below SQL has no key
// index row (no expiry to read). The value is checked by Check.
func (cd *Codec) Read(rows *engine.Rows, cols *Cols, keyIndex bool, liveAt int64, r *Row) error {
	v, vk := []byte(nil), engine.KindBlob
	r.Exp, r.Joined, r.Fast = -1, nil, false
	if cols.Key >= 0 {
		k, kk, fv, fvk, joined, fast := rows.FastRow()
		if !fast {
			k, kk = rows.RawBlob(cols.Key)
		}
		key, err := ScanKey(k, kk)
		if err != nil {
			return err
		}
		r.Key = key
		if fast {
			// Read from the B-trees: key and value come in one call; the
			// expiry only with a key index (without one it is NULL).
			v, vk, r.Joined, r.Fast = NonNil(fv), fvk, joined, true
		}
	}
	if !r.Fast || keyIndex {
		exp, err := cd.readExpiry(rows, r.Key, cols.Expiry, cols.Ecrc)
		if err != nil {
			return err
		}
		r.Exp = exp
		if liveAt != AnyTime && exp >= 0 && expiry.Expired(exp, liveAt) {
			r.Stored = nil
			return nil
		}
	}
	if cols.Value < 0 {
		return nil
	}
	if !r.Fast {
		v, vk = rows.RawBlob(cols.Value)
	}
	if vk != engine.KindBlob {
		return BadValueKind(r.Key, vk)
	}
	r.Stored = v
	return nil
}

// readExpiry returns the expiry of the current row (column col; -1 for
// none), checked against the key index row's checksum in column crcCol
// (when >= 0).
func (cd *Codec) readExpiry(rows *engine.Rows, key []byte, col, crcCol int) (int64, error) {
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
		verd, err := CheckSum(rows, crcCol, key, sum, "key index", cd.Objects.V2)
		if err != nil {
			return 0, err
		}
		if verd == Unverified {
			cd.Stats.Unverified.Add(1)
		}
	}
	return exp, nil
}

// Check is the end of a read of r from the current row of rows, whose
// checksum is in column col: the checksum, which also says whether the key
// has a TTL and how the value is stored, then the value opened when it is
// sealed. It returns the value in the clear: r.Stored itself, or the
// opened value appended to dst (opened). adBuf, if not nil, is the
// caller's buffer for the associated data (a scan keeps one: no
// allocation per row).
func (cd *Codec) Check(rows *engine.Rows, col int, r *Row, dst []byte, adBuf *[]byte) (value []byte, opened bool, err error) {
	if !cd.Objects.Crc {
		return r.Stored, false, nil
	}
	sum := r.Sum()
	if cd.Seal == nil && sum != 0 {
		// The common case, a verified row in the clear: one call into
		// SQLite (a NULL reads as 0, so a sum of 0 needs the type too).
		if r.Fast {
			if v, k := rows.FastCrc(); v == sum && k == engine.KindInt {
				return r.Stored, false, nil
			}
		} else if rows.Int(col) == sum {
			return r.Stored, false, nil
		}
	}
	var crc int64
	var kind int
	if r.Fast {
		crc, kind = rows.FastCrc()
	} else {
		crc, kind = rows.IntKind(col)
	}
	return cd.Open(r, sum, crc, kind, dst, adBuf)
}
