package btree

// ChangeRow is a row of the change log (internal/changelog, docs/format.md
// "The change log") but its sequence, which is the row's rowid.
type ChangeRow struct {
	Tx, AtMs int64
	CF       string
	Op       int64
	Key      []byte // nil: NULL
	Value    []byte // nil: NULL
	Expiry   int64  // when HasExpiry; NULL otherwise
	// HasExpiry says Expiry is set.
	HasExpiry bool
}

// changeCols is the number of columns of the change log: seq (the rowid,
// stored as NULL in the record), tx, at_ms, cf, op, key, value, expiry_ms.
const changeCols = 8

// changeTypes returns the serial types of r's record, column by column,
// and the size of its header and its body.
func changeTypes(r *ChangeRow) (t [changeCols]uint64, nHdr, nBody int) {
	// t[0]: seq, the rowid alias, is NULL in the record (serial type 0).
	var size int
	t[1], size = intSerial(r.Tx)
	nBody += size
	t[2], size = intSerial(r.AtMs)
	nBody += size
	t[3] = uint64(len(r.CF))*2 + 13
	nBody += len(r.CF)
	t[4], size = intSerial(r.Op)
	nBody += size
	if r.Key != nil {
		t[5] = uint64(len(r.Key))*2 + 12
		nBody += len(r.Key)
	}
	if r.Value != nil {
		t[6] = uint64(len(r.Value))*2 + 12
		nBody += len(r.Value)
	}
	if r.HasExpiry {
		t[7], size = intSerial(r.Expiry)
		nBody += size
	}
	for _, s := range t {
		nHdr += varintLen(s)
	}
	if nHdr <= 126 {
		return t, nHdr + 1, nBody
	}
	n := varintLen(uint64(nHdr))
	nHdr += n
	if n < varintLen(uint64(nHdr)) {
		nHdr++
	}
	return t, nHdr, nBody
}

// putChangeRecord writes into dst, which must hold nHdr+nBody bytes (see
// changeTypes, which gives t and nHdr), the record of r as SQLite's
// OP_MakeRecord writes it for the change log's INSERT (see PutRecord): the
// integers in their smallest serial type, cf as TEXT, key and value as
// BLOBs or NULL, seq as NULL (it is the rowid).
func putChangeRecord(dst []byte, r *ChangeRow, t *[changeCols]uint64, nHdr int) {
	i := putVarint(dst, uint64(nHdr))
	for _, s := range t {
		i += putVarint(dst[i:], s)
	}
	i = putInt(dst, i, r.Tx, t[1])
	i = putInt(dst, i, r.AtMs, t[2])
	i += copy(dst[i:], r.CF)
	i = putInt(dst, i, r.Op, t[4])
	i += copy(dst[i:], r.Key)
	i += copy(dst[i:], r.Value)
	if r.HasExpiry {
		putInt(dst, i, r.Expiry, t[7])
	}
}

// intBytes is the body size of each integer serial type (intSerial).
var intBytes = [10]int{0, 1, 2, 3, 4, 6, 8, 0, 0, 0}

// putInt writes v, of integer serial type serial, big-endian at dst[i:]
// and returns where the next body starts.
func putInt(dst []byte, i int, v int64, serial uint64) int {
	for j := intBytes[serial] - 1; j >= 0; j-- {
		dst[i] = byte(v >> (8 * j))
		i++
	}
	return i
}
