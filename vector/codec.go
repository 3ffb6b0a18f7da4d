package vector

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
)

// The hidden tables of an index named N (kind "vector"); docs/format.md
// describes each row.
const (
	kind       = "vector"
	suffixMeta = "/meta"  // configuration and counters, in the clear
	suffixKeys = "/keys"  // key → node, put sequence, expiry, value, metadata
	suffixVecs = "/vecs"  // block → the float32 vectors of blockVecs nodes
	suffixGph  = "/graph" // node → the links it was saved with
	suffixLog  = "/log"   // sequence → the change (for other processes)
	suffixFree = "/free"  // node → nothing: slots of deleted vectors, for later puts
)

// formatVersion is the layout of the rows below.
const formatVersion = 1

// Meta rows.
var (
	metaConfig = []byte("config")
	metaSeq    = []byte("seq")  // the last sequence number written
	metaNext   = []byte("next") // the next never-used node id
)

// blockBytes is the size a vector block row aims at: with 4 KiB pages a row
// this long fills its overflow pages to within a few percent.
const blockBytes = 12 << 10

// config is what an index records at creation.
type config struct {
	Dim, M, EfC int
	Metric      Metric
	Storage     Storage
	BlockVecs   int // vectors per row of the vecs table
}

func (c config) encode() []byte {
	b := make([]byte, 0, 24)
	b = append(b, formatVersion, byte(c.Metric), byte(c.Storage))
	b = binary.BigEndian.AppendUint32(b, uint32(c.Dim))
	b = binary.BigEndian.AppendUint32(b, uint32(c.M))
	b = binary.BigEndian.AppendUint32(b, uint32(c.EfC))
	return binary.BigEndian.AppendUint32(b, uint32(c.BlockVecs))
}

func decodeConfig(b []byte) (config, error) {
	if len(b) != 19 || b[0] != formatVersion {
		return config{}, fmt.Errorf("%w: config row of %d bytes, version %d", ErrCorrupt, len(b), first(b))
	}
	c := config{Metric: Metric(b[1]), Storage: Storage(b[2])}
	c.Dim = int(binary.BigEndian.Uint32(b[3:]))
	c.M = int(binary.BigEndian.Uint32(b[7:]))
	c.EfC = int(binary.BigEndian.Uint32(b[11:]))
	c.BlockVecs = int(binary.BigEndian.Uint32(b[15:]))
	if c.Metric > Dot || c.Storage > Int8 || c.Dim < 1 || c.Dim > 1<<16 || c.BlockVecs < 1 || c.M < 2 || c.EfC < c.M {
		return config{}, fmt.Errorf("%w: config row %x", ErrCorrupt, b)
	}
	return c, nil
}

func first(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	return int(b[0])
}

func blockVecsFor(dim int) int { return max(1, blockBytes/(4*dim)) }

func u32key(x uint32) []byte { return binary.BigEndian.AppendUint32(nil, x) }
func u64key(x uint64) []byte { return binary.BigEndian.AppendUint64(nil, x) }

func u64val(b []byte) (uint64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("%w: counter of %d bytes", ErrCorrupt, len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

// keyRow is the row of a key in the keys table.
type keyRow struct {
	node   uint32
	seq    uint64 // the put that wrote it
	expire int64  // ms since the epoch; 0: none
	value  []byte
	meta   map[string]string
}

func (r keyRow) encode() []byte {
	b := make([]byte, 0, 24+len(r.value))
	b = binary.BigEndian.AppendUint32(b, r.node)
	b = binary.BigEndian.AppendUint64(b, r.seq)
	b = binary.BigEndian.AppendUint64(b, uint64(r.expire))
	b = binary.AppendUvarint(b, uint64(len(r.value)))
	b = append(b, r.value...)
	ks := make([]string, 0, len(r.meta))
	for k := range r.meta {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	b = binary.AppendUvarint(b, uint64(len(ks)))
	for _, k := range ks {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendUvarint(b, uint64(len(r.meta[k])))
		b = append(b, r.meta[k]...)
	}
	return b
}

// keyRowSize is the length of the key row encode makes for value and meta.
func keyRowSize(value []byte, meta map[string]string) int {
	n := 20 + uvarintLen(len(value)) + len(value) + uvarintLen(len(meta))
	for k, v := range meta {
		n += uvarintLen(len(k)) + len(k) + uvarintLen(len(v)) + len(v)
	}
	return n
}

func uvarintLen(n int) int {
	l := 1
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}

// decodeKeyRow decodes a key row; the value is a copy.
func decodeKeyRow(b []byte) (keyRow, error) { return decodeKey(b, true) }

// decodeKeyRowMeta decodes a key row without its value.
func decodeKeyRowMeta(b []byte) (keyRow, error) { return decodeKey(b, false) }

func decodeKey(b []byte, withValue bool) (keyRow, error) {
	bad := func(what string) (keyRow, error) {
		return keyRow{}, fmt.Errorf("%w: key row: %s", ErrCorrupt, what)
	}
	if len(b) < 21 {
		return bad("short")
	}
	r := keyRow{node: binary.BigEndian.Uint32(b), seq: binary.BigEndian.Uint64(b[4:]), expire: int64(binary.BigEndian.Uint64(b[12:]))}
	b = b[20:]
	str := func() ([]byte, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, false
		}
		s := b[k : k+int(n)]
		b = b[k+int(n):]
		return s, true
	}
	v, ok := str()
	if !ok {
		return bad("value length")
	}
	if withValue {
		r.value = append([]byte{}, v...)
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return bad("metadata count")
	}
	b = b[k:]
	if n > 0 {
		r.meta = make(map[string]string, n)
	}
	for range n {
		key, ok1 := str()
		val, ok2 := str()
		if !ok1 || !ok2 {
			return bad("metadata")
		}
		r.meta[string(key)] = string(val)
	}
	if len(b) != 0 {
		return bad("trailing bytes")
	}
	return r, nil
}

// graphRow is a node's saved links: the put sequence of the vector they
// were made for, then per level a count and the links.
func encodeGraphRow(seq uint64, links [][]uint32) []byte {
	n := 9
	for _, l := range links {
		n += 1 + 4*len(l)
	}
	b := make([]byte, 0, n)
	b = binary.BigEndian.AppendUint64(b, seq)
	b = append(b, byte(len(links)-1))
	for _, l := range links {
		b = append(b, byte(len(l)))
		for _, x := range l {
			b = binary.LittleEndian.AppendUint32(b, x)
		}
	}
	return b
}

func decodeGraphRow(b []byte, m int) (uint64, [][]uint32, error) {
	if len(b) < 10 {
		return 0, nil, fmt.Errorf("%w: graph row of %d bytes", ErrCorrupt, len(b))
	}
	seq := binary.BigEndian.Uint64(b)
	levels := int(b[8]) + 1
	if levels > 17 {
		return 0, nil, fmt.Errorf("%w: graph row with %d levels", ErrCorrupt, levels)
	}
	b = b[9:]
	links := make([][]uint32, levels)
	for l := range links {
		if len(b) < 1 {
			return 0, nil, fmt.Errorf("%w: graph row cut at level %d", ErrCorrupt, l)
		}
		n := int(b[0])
		lim := m
		if l == 0 {
			lim = 2 * m
		}
		if n > lim || len(b) < 1+4*n {
			return 0, nil, fmt.Errorf("%w: graph row: %d links at level %d", ErrCorrupt, n, l)
		}
		ls := make([]uint32, n)
		for i := range ls {
			ls[i] = binary.LittleEndian.Uint32(b[1+4*i:])
		}
		links[l] = ls
		b = b[1+4*n:]
	}
	if len(b) != 0 {
		return 0, nil, fmt.Errorf("%w: graph row: trailing bytes", ErrCorrupt)
	}
	return seq, links, nil
}

// Log ops.
const (
	opPut    = 1
	opDelete = 2
)

// logRow is one change: op, node, key.
func encodeLogRow(op byte, node uint32, key []byte) []byte {
	b := make([]byte, 0, 5+len(key))
	b = append(b, op)
	b = binary.BigEndian.AppendUint32(b, node)
	return append(b, key...)
}

func decodeLogRow(b []byte) (op byte, node uint32, key []byte, err error) {
	if len(b) < 6 || (b[0] != opPut && b[0] != opDelete) {
		return 0, 0, nil, fmt.Errorf("%w: log row %x", ErrCorrupt, b)
	}
	return b[0], binary.BigEndian.Uint32(b[1:]), b[5:], nil
}

// vecAt returns vector i of a block row, or false if the row is too short.
func vecAt(block []byte, i, dim int, out []float32) ([]float32, bool) {
	o := i * dim * 4
	if o+dim*4 > len(block) {
		return nil, false
	}
	out = out[:0]
	for j := range dim {
		out = append(out, math.Float32frombits(binary.LittleEndian.Uint32(block[o+4*j:])))
	}
	return out, true
}

// setVec writes v as vector i of block, growing it as needed.
func setVec(block []byte, i int, v []float32) []byte {
	o := i * len(v) * 4
	if need := o + len(v)*4; len(block) < need {
		block = append(block, make([]byte, need-len(block))...)
	}
	for j, x := range v {
		binary.LittleEndian.PutUint32(block[o+4*j:], math.Float32bits(x))
	}
	return block
}
