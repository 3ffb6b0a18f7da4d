package btree

// intSerial returns SQLite's serial type for the integer v and the number
// of body bytes it takes: the smallest of 1, 2, 3, 4, 6 and 8 bytes that
// holds it, or none for 0 and 1 (types 8 and 9).
func intSerial(v int64) (serial uint64, size int) {
	u := uint64(v)
	if v < 0 {
		u = ^u
	}
	switch {
	case v == 0 || v == 1:
		return 8 + uint64(v), 0
	case u <= 127:
		return 1, 1
	case u <= 32767:
		return 2, 2
	case u <= 8388607:
		return 3, 3
	case u <= 2147483647:
		return 4, 4
	case u <= 140737488355327:
		return 5, 6
	}
	return 6, 8
}

// RecordSize returns the length of the record of (key, value, crc).
func RecordSize(key, value []byte, crc int64, withCrc bool) int {
	h, _ := header(len(key), len(value), crc, withCrc)
	n := h + len(key) + len(value)
	if withCrc {
		_, size := intSerial(crc)
		n += size
	}
	return n
}

// header returns the record header's size and the serial types of its
// fields.
func header(nKey, nValue int, crc int64, withCrc bool) (int, [3]uint64) {
	t := [3]uint64{uint64(nKey)*2 + 12, uint64(nValue)*2 + 12}
	nHdr := varintLen(t[0]) + varintLen(t[1])
	if withCrc {
		t[2], _ = intSerial(crc)
		nHdr += varintLen(t[2])
	}
	if nHdr <= 126 {
		return nHdr + 1, t
	}
	n := varintLen(uint64(nHdr))
	nHdr += n
	if n < varintLen(uint64(nHdr)) {
		nHdr++
	}
	return nHdr, t
}

// PutRecord writes into dst, which must hold RecordSize bytes, the SQLite
// record of a column family row: key and value as BLOBs and, when withCrc
// is set, crc as an INTEGER. The bytes are those SQLite's OP_MakeRecord
// writes for the same values in a file of schema format 4 (every file
// SQLite has created since 3.3): the header size, one serial type per
// column, then the column bodies. It returns where the key starts.
func PutRecord(dst, key, value []byte, crc int64, withCrc bool) (keyOff int) {
	nHdr, t := header(len(key), len(value), crc, withCrc)
	i := putVarint(dst, uint64(nHdr))
	i += putVarint(dst[i:], t[0])
	i += putVarint(dst[i:], t[1])
	if withCrc {
		i += putVarint(dst[i:], t[2])
	}
	keyOff = i
	i += copy(dst[i:], key)
	i += copy(dst[i:], value)
	if withCrc {
		_, size := intSerial(crc)
		for j := size - 1; j >= 0; j-- {
			dst[i] = byte(crc >> (8 * j))
			i++
		}
	}
	return keyOff
}

// putVarint writes v as an SQLite varint at the start of dst (which must
// hold varintLen(v) bytes) and returns its length: big-endian groups of 7
// bits with the high bit set on every byte but the last, and a ninth byte
// that carries 8 bits.
func putVarint(dst []byte, v uint64) int {
	switch {
	case v <= 0x7f:
		dst[0] = byte(v)
		return 1
	case v <= 0x3fff:
		dst[0], dst[1] = byte(v>>7)|0x80, byte(v&0x7f)
		return 2
	case v > 0x00ffffffffffffff:
		dst[8] = byte(v)
		v >>= 8
		for i := 7; i >= 0; i-- {
			dst[i] = byte(v&0x7f) | 0x80
			v >>= 7
		}
		return 9
	}
	n := varintLen(v)
	for i := n - 1; i >= 0; i-- {
		dst[i] = byte(v&0x7f) | 0x80
		v >>= 7
	}
	dst[n-1] &= 0x7f
	return n
}

// varintLen is the length of v as an SQLite varint.
func varintLen(v uint64) int {
	n := 1
	for v >>= 7; v != 0 && n < 9; v >>= 7 {
		n++
	}
	return n
}

// Storage classes of a record field, as SQLite numbers them
// (SQLITE_INTEGER … SQLITE_NULL).
const (
	KindInt   = 1
	KindFloat = 2
	KindText  = 3
	KindBlob  = 4
	KindNull  = 5
)

// Field is one decoded field of a record: its storage class, and its
// bytes (BLOB, TEXT) or integer value.
type Field struct {
	Kind  int
	Bytes []byte
	Int   int64
}

// ParseRecord decodes the first len(out) fields of the SQLite record rec
// into out (a record with fewer fields leaves the rest NULL, as SQLite
// reads a column added after the row was written). Bytes point into rec.
// It reports false for a record that is not well formed. It is on the
// per-row path of every scan: fields are written in place, and one-byte
// varints (every header snkv writes, but for values of 58 bytes and more)
// are read inline.
func ParseRecord(rec []byte, out []Field) bool {
	if len(rec) == 0 {
		return false
	}
	hdr, h := uint64(rec[0]), 1
	if hdr >= 0x80 {
		if hdr, h = readVarint(rec); h == 0 {
			return false
		}
	}
	if hdr > uint64(len(rec)) || hdr < uint64(h) {
		return false
	}
	end := int(hdr)
	body := end
	for i := range out {
		f := &out[i]
		if h >= end {
			f.Kind, f.Bytes, f.Int = KindNull, nil, 0
			continue
		}
		t := uint64(rec[h])
		if t < 0x80 {
			h++
		} else {
			var n int
			if t, n = readVarint(rec[h:end]); n == 0 {
				return false
			}
			h += n
		}
		if t >= 12 {
			size := (t - 12) >> 1
			if size > uint64(len(rec)-body) {
				return false
			}
			f.Kind = KindBlob
			if t&1 == 1 {
				f.Kind = KindText
			}
			f.Bytes, f.Int = rec[body:body+int(size):body+int(size)], 0
			body += int(size)
			continue
		}
		f.Bytes, f.Int = nil, 0
		switch {
		case t == 0:
			f.Kind = KindNull
		case t == 8 || t == 9:
			f.Kind, f.Int = KindInt, int64(t-8)
		case t == 7:
			if len(rec)-body < 8 {
				return false
			}
			f.Kind = KindFloat
			body += 8
		case t <= 6:
			size := intSizes[t]
			if size > len(rec)-body {
				return false
			}
			b := rec[body : body+size]
			v := int64(int8(b[0]))
			for _, c := range b[1:] {
				v = v<<8 | int64(c)
			}
			f.Kind, f.Int = KindInt, v
			body += size
		default:
			return false // 10 and 11 are reserved
		}
	}
	return true
}

// intSizes are the body sizes of the integer serial types 0 to 6.
var intSizes = [7]int{0, 1, 2, 3, 4, 6, 8}

// readVarint decodes an SQLite varint at the start of b and returns it
// and its length, 0 for a truncated one.
func readVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 9; i++ {
		if i >= len(b) {
			return 0, 0
		}
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	return v, 9
}

// parseRow is ParseRecord for the rows snkv writes: exactly three fields
// (a BLOB key, a BLOB value, an integer checksum) whose serial types take
// at most two bytes each, which covers every key and every value under 8
// KiB. It also returns the key and value as one slice (they lie one after
// the other in the record). It reports false for any other record, which
// ParseRecord then reads. It is on the per-row path of every scan below
// SQL: unrolled, with no loop but the checksum's bytes.
func parseRow(rec []byte, out []Field) (kv []byte, ok bool) {
	if len(out) != 3 {
		return nil, false
	}
	hdr, k, v, crc, ok := rowSpan(rec)
	if !ok {
		return nil, false
	}
	// Field by field: a whole Field assigned is zeroed first, under a
	// bulk write barrier while the collector runs (a tenth of a scan's
	// time when rows are copied).
	out[0].Kind, out[0].Bytes, out[0].Int = KindBlob, rec[hdr:k:k], 0
	out[1].Kind, out[1].Bytes, out[1].Int = KindBlob, rec[k:v:v], 0
	out[2].Kind, out[2].Bytes, out[2].Int = KindInt, nil, crc
	return rec[hdr:v:v], true
}

// rowSpan is parseRow without the fields: where in rec the key starts
// (hdr), where it ends and the value starts (k), where the value ends (v),
// and the checksum.
func rowSpan(rec []byte) (hdr, k, v int, crc int64, ok bool) {
	if len(rec) < 4 {
		return 0, 0, 0, 0, false
	}
	hdr = int(rec[0])
	if hdr >= 0x80 || hdr > len(rec) {
		return 0, 0, 0, 0, false
	}
	tk, h := serial2(rec, 1, hdr)
	tv, h := serial2(rec, h, hdr)
	tc, h := serial2(rec, h, hdr)
	if h != hdr || tk < 12 || tk&1 == 1 || tv < 12 || tv&1 == 1 || tc < 1 || tc > 9 || tc == 7 {
		return 0, 0, 0, 0, false
	}
	k = hdr + (tk-12)>>1
	v = k + (tv-12)>>1
	if v > len(rec) {
		return 0, 0, 0, 0, false
	}
	b := rec[v:]
	switch tc {
	case 8, 9:
		if len(b) != 0 {
			return 0, 0, 0, 0, false
		}
		crc = int64(tc - 8)
	case 4: // a checksum: 32 bits
		if len(b) != 4 {
			return 0, 0, 0, 0, false
		}
		crc = int64(int32(uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])))
	default:
		if len(b) != intSizes[tc] {
			return 0, 0, 0, 0, false
		}
		crc = int64(int8(b[0]))
		for _, c := range b[1:] {
			crc = crc<<8 | int64(c)
		}
	}
	return hdr, k, v, crc, true
}

// serial2 reads the serial type at rec[h] of a header ending at end, of
// one or two bytes, and returns it and where the next one starts; a type
// that does not fit gives -1.
func serial2(rec []byte, h, end int) (int, int) {
	if h >= end {
		return -1, h
	}
	b := int(rec[h])
	if b < 0x80 {
		return b, h + 1
	}
	if h+1 >= end || rec[h+1] >= 0x80 {
		return -1, h
	}
	return (b&0x7f)<<7 | int(rec[h+1]), h + 2
}
