package rowcodec

// The row: how one row of a column family (or hidden table) is checked
// when it is read and encoded when it is written. Every read (a point
// read, a scan) goes through Decode (the expiry, the raw value, then the
// checksum and the seal); the integrity check and a re-seal, which count
// or skip a bad row rather than fail, through Check (check.go), which runs
// Decode;
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
		return nil, foreign(fmt.Errorf("%w: a key is stored as %s, not a BLOB (written by another tool?)", engine.ErrCorrupt, KindName(k)))
	}
	if len(key) == 0 || len(key) > layout.MaxKeySize {
		return nil, foreign(CorruptRow(key, fmt.Sprintf("key of %d bytes (1 to %d allowed)", len(key), layout.MaxKeySize)))
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
	// Fast is set for a row a scan read below SQL (engine.Rows.FastRow):
	// its checksum is read with FastCrc.
	Fast bool
}

// Sum is the checksum the row must have in the clear:
// DataSum(Key, Stored, the row has an expiry), in one pass when Stored
// follows Key in memory within Key's capacity (a row read below SQL, or a
// scan's copy).
func (r *Row) Sum() int64 {
	if kv, ok := r.joined(); ok {
		return WithTTL(JoinedSum(len(r.Key), kv), r.Exp >= 0)
	}
	return DataSum(r.Key, r.Stored, r.Exp >= 0)
}

// joined returns Key and Stored as one slice when they lie side by side
// in memory, Key's capacity reaching over Stored.
func (r *Row) joined() ([]byte, bool) {
	n, m := len(r.Key), len(r.Stored)
	if m == 0 || cap(r.Key) < n+m {
		return nil, false
	}
	kv := r.Key[:n+m]
	return kv, &kv[n] == &r.Stored[0]
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

// AnyTime is Decode's liveAt for a read of every row's value, expired or
// not.
const AnyTime = math.MinInt64

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
		return 0, foreign(CorruptRow(key, "expiry is not a BLOB"))
	}
	exp, err := expiry.Decode(raw)
	if err != nil {
		return 0, foreign(CorruptRow(key, err.Error()))
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

// Mode says what Decode does with a row's bytes.
type Mode uint8

const (
	// Borrow leaves the key and value in SQLite's memory, valid until the
	// next step; an opened value goes to Buffers.Scratch.
	Borrow Mode = iota
	// CopyRow copies the key and the value side by side into a block of
	// Buffers (a scan's copied rows).
	CopyRow
	// CopyValue copies the value into a slice of its own; the key is the
	// caller's (a point read).
	CopyValue
)

// Buffers are where Decode puts what it copies or opens, kept by the
// caller from row to row: no allocation per row.
type Buffers struct {
	block   []byte // the rest of the block copied rows are carved from
	scratch []byte // a borrowed row's opened value
	ad      []byte // the associated data of the row being opened
}

// The blocks copied rows of at most maxShared bytes are carved from: one
// allocation per block rather than per row. The first block of a Buffers
// is minBlock bytes, the next ones maxBlock: a short scan allocates
// little, a long one few, large allocations (one of 64 KiB costs about
// what one of 4 KiB does; the collector is paced by the bytes, which the
// block size does not change). A caller that keeps one row keeps its
// block alive: at most maxBlock.
const (
	minBlock  = 4 << 10
	maxBlock  = 64 << 10
	maxShared = 1 << 10
)

// alloc returns n bytes, capped at n, for a copied row.
func (b *Buffers) alloc(n int) []byte {
	if n > maxShared {
		return make([]byte, n)
	}
	if cap(b.block)-len(b.block) < n {
		size := maxBlock
		if b.block == nil {
			size = minBlock
		}
		b.block = make([]byte, 0, size)
	}
	i := len(b.block)
	b.block = b.block[:i+n]
	return b.block[i : i+n : i+n]
}

// Decode reads and checks the current row of rows, in the order every
// read checks a row:
//
//  1. the key: a scan's (cols.Key >= 0), checked to be a BLOB of legal
//     length; a point read passes its own;
//  2. the expiry, checked against the key index row's checksum (keyIndex
//     false: a row read below SQL has no key index row, so no expiry);
//     unless liveAt is AnyTime, a row expired at liveAt ends here, its
//     value neither read nor checked (Row.Stored nil);
//  3. the value as stored, checked to be a BLOB (none when cols.Value <
//     0: Exists);
//  4. the checksum, which says whether the key has a TTL and how the
//     value is stored, then the seal opened when the value is sealed
//     (Open).
//
// It returns the key (the copy under CopyRow, capped), the value in the
// clear, copied, lent or opened as mode says, and the expiry (-1: none).
// The common case, a verified row in the clear, is one call, its results
// in registers.
func (cd *Codec) Decode(rows *engine.Rows, cols *Cols, keyIndex bool, liveAt int64, key []byte, mode Mode, b *Buffers) (k, value []byte, exp int64, err error) {
	// Locals rather than a Row on the hot path: they stay in registers.
	v, vk := []byte(nil), engine.KindBlob
	fast, adj := false, false // read below SQL; key and value side by side
	if cols.Key >= 0 {
		kb, kk, fv, fvk, joined, ok := rows.FastRow()
		if !ok {
			kb, kk = rows.RawBlob(cols.Key)
		}
		if key, err = ScanKey(kb, kk); err != nil {
			return nil, nil, 0, err
		}
		if ok {
			// Read from the B-trees: key and value come in one call (side
			// by side in memory when joined is not nil: the checksum is
			// then one pass); the expiry only with a key index (without
			// one it is NULL).
			v, vk, fast = NonNil(fv), fvk, true
			if n := len(key); joined != nil && len(joined) == n+len(fv) {
				key, v, adj = joined[:n], joined[n:], true
			}
		}
	}
	exp = -1
	if !fast || keyIndex {
		if exp, err = cd.readExpiry(rows, key, cols.Expiry, cols.Ecrc); err != nil {
			return nil, nil, 0, err
		}
		if liveAt != AnyTime && exp >= 0 && expiry.Expired(exp, liveAt) {
			return key, nil, exp, nil
		}
	}
	if cols.Value < 0 {
		return key, nil, exp, nil
	}
	if !fast {
		v, vk = rows.RawBlob(cols.Value)
	}
	if vk != engine.KindBlob {
		return nil, nil, 0, BadValueKind(key, vk)
	}
	crc := cd.Objects.Crc
	if crc && cd.Seal != nil {
		return cd.openRow(rows, cols.Crc, &Row{Key: key, Stored: v, Exp: exp, Fast: fast}, mode, b)
	}
	n := len(key)
	var sum int64
	if crc {
		// Over the row where it lies, which the scan has just read.
		if adj {
			sum = WithTTL(JoinedSum(n, key[:n+len(v)]), exp >= 0)
		} else {
			sum = DataSum(key, v, exp >= 0)
		}
	}
	switch mode {
	case CopyRow:
		buf := b.alloc(n + len(v))
		if adj {
			copy(buf, key[:n+len(v)]) // key and value in one copy
		} else {
			copy(buf, key)
			copy(buf[n:], v)
		}
		key, v = buf[:n], buf[n:]
	case CopyValue:
		v = append(make([]byte, 0, len(v)), v...)
	}
	if !crc {
		return key[:n:n], v, exp, nil
	}
	if sum != 0 {
		// The common case, a verified row in the clear: one look at the
		// checksum (a NULL reads as 0, so a sum of 0 needs the type too).
		if fast {
			if c, k := rows.FastCrc(); c == sum && k == engine.KindInt {
				return key[:n:n], v, exp, nil
			}
		} else if rows.Int(cols.Crc) == sum {
			return key[:n:n], v, exp, nil
		}
	}
	// Unverified, damaged, or sealed: a snapshot of the store from before
	// its encryption was removed (see seal.go).
	return cd.slowCheck(rows, cols.Crc, &Row{Key: key, Stored: v, Exp: exp, Fast: fast}, sum, mode, b)
}

// slowCheck is the end of Decode for a row in the clear whose checksum is
// not the plain one: Open says whether it is unverified, damaged or
// sealed (and opens it).
func (cd *Codec) slowCheck(rows *engine.Rows, col int, r *Row, sum int64, mode Mode, b *Buffers) ([]byte, []byte, int64, error) {
	var dst []byte
	if mode == Borrow {
		dst = b.scratch[:0]
	}
	crc, kind := storedSum(rows, col, r.Fast)
	val, opened, err := cd.Open(r, sum, crc, kind, dst, &b.ad)
	if err != nil {
		return nil, nil, 0, err
	}
	if opened && mode == Borrow {
		b.scratch = val
	}
	return capKey(r.Key), val, r.Exp, nil
}

// capKey returns key capped, so that appending to it never writes over
// the value beside it.
func capKey(key []byte) []byte { return key[:len(key):len(key)] }

// storedSum returns the stored checksum of the current row (column col)
// and its storage class.
func storedSum(rows *engine.Rows, col int, fast bool) (int64, int) {
	if fast {
		return rows.FastCrc()
	}
	return rows.IntKind(col)
}

// openRow is the end of Decode in an encrypted store: Open checks the
// row's checksum, which says how its value is stored, and opens a sealed
// value into the caller's block (CopyRow, the key copied before it), its
// scratch buffer (Borrow, valid until the next step) or a slice of its
// own (CopyValue).
func (cd *Codec) openRow(rows *engine.Rows, col int, r *Row, mode Mode, b *Buffers) ([]byte, []byte, int64, error) {
	sum := r.Sum()
	crc, kind := storedSum(rows, col, r.Fast)
	key, stored := r.Key, r.Stored
	switch mode {
	case Borrow:
		v, opened, err := cd.Open(r, sum, crc, kind, b.scratch[:0], &b.ad)
		if opened {
			b.scratch = v
		}
		return capKey(key), v, r.Exp, err
	case CopyValue:
		v, opened, err := cd.Open(r, sum, crc, kind, nil, &b.ad)
		if err == nil && !opened {
			v = append(make([]byte, 0, len(v)), v...)
		}
		return key, v, r.Exp, err
	}
	n := len(key)
	// Room for the opened value, which is seal.Overhead bytes shorter than
	// its sealed form; a value kept as it is stored (in the clear) gets a
	// copy of its own.
	room := len(stored)
	if room >= seal.Overhead {
		room -= seal.Overhead
	}
	buf := b.alloc(n + room)
	copy(buf, key)
	v, opened, err := cd.Open(r, sum, crc, kind, buf[n:n], &b.ad)
	switch {
	case err != nil:
		return nil, nil, 0, err
	case opened:
		v = v[:len(v):len(v)]
	default:
		if room < len(stored) {
			buf = b.alloc(n + len(stored))
			copy(buf, key)
		}
		v = buf[n : n+copy(buf[n:], stored)]
	}
	return buf[:n:n], v, r.Exp, nil
}
