package btree

// Exported for the tests of package btree_test.
var (
	VarintLen  = varintLen
	PutVarint  = putVarint
	ReadVarint = readVarint
)

// ParseRow is parseRow, for the tests of package btree_test.
var ParseRow = parseRow

// AppendRecord appends PutRecord's record to dst and returns where the key
// starts in the result: the tests' way to build records.
func AppendRecord(dst, key, value []byte, crc int64, withCrc bool) (rec []byte, keyOff int) {
	n := len(dst)
	dst = append(dst, make([]byte, RecordSize(key, value, crc, withCrc))...)
	return dst, n + PutRecord(dst[n:], key, value, crc, withCrc)
}

// AppendCopyRecord is AppendRecord of a data row with its expiry copy tail
// as a fourth field.
func AppendCopyRecord(dst, key, value []byte, crc int64, tail []byte) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, recordSize(key, value, crc, true, tail))...)
	putRecord(dst[n:], key, value, crc, true, tail)
	return dst
}
