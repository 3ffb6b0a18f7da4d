package timelog

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"math"
	"sort"
)

// Value blocks (docs/format.md): the values table holds many values per
// row. A block row is keyed by 8 bytes, at most the smallest handle in it
// (the first handle when written; a rewrite that removes values keeps the
// key), and holds values of increasing handles, with holes. Blocks never
// overlap: the row holding handle h is the one with the greatest key <= h.
//
// A block: "TLV", the version byte 1, the CRC-32C of the block (as a
// page's: over bytes 0-3 and 8 to the end, pageSum), the count n as a
// big-endian uint32, n entries of 8 bytes (the handle minus the key as a
// big-endian uint32, then the end offset of the value in the data as a
// big-endian uint32), then the data: the values one after the other.
//
// A value too large to share a row with a block's header (more than the
// store's MaxValueSize minus blockOverhead) is a lone row: key = handle
// (8 bytes) then the CRC-32C of the value (4 bytes), value = the value as
// it is.
const (
	blockHeader  = 12
	blockEntry   = 8
	blockVersion = 1
	// blockOverhead is the size of a block of one empty value.
	blockOverhead = blockHeader + blockEntry
	// valueBlockBytes is the default size a block is filled up to
	// (Options.ValueBlockBytes; less if the store's MaxValueSize is lower). Large enough that a row costs little
	// per value (ingest and scans), small enough that a point read stays
	// cheap: SQLite reads an overflowing row whole to compare its key, on
	// every row a B-tree descent compares against (docs/benchmarks.md has
	// 4 KiB to 32 KiB measured), and that removing a few values rewrites
	// little.
	valueBlockBytes = 16 << 10
	// minValueBlock is the smallest Options.ValueBlockBytes.
	minValueBlock = 64
	// loneKeyLen is the key length of a lone value row.
	loneKeyLen = 12
)

// metaValuesLayout is the meta row naming the layout of the values table
// (valuesLayout). A values table without it, written before blocks
// existed (one row per value), is converted by a writable Open
// (valconvert.go) and refused with ErrValuesLayout by a read-only one;
// an empty one is adopted.
const (
	metaValuesLayout = "valueslayout"
	valuesLayout     = 1
)

// vblock is a decoded, checked row of the values table: a block, or a lone
// value (n = 1, idx nil).
type vblock struct {
	key  []byte // the row's key
	base uint64 // the key's handle
	n    int
	idx  []byte // n entries (nil: a lone value)
	data []byte
	buf  []byte // a scan's copy of the row, holding key, idx and data
}

func (b *vblock) handle(i int) uint64 {
	if b.idx == nil {
		return b.base
	}
	return b.base + uint64(be.Uint32(b.idx[i*blockEntry:]))
}

func (b *vblock) end(i int) int {
	if b.idx == nil {
		return len(b.data)
	}
	return int(be.Uint32(b.idx[i*blockEntry+4:]))
}

func (b *vblock) value(i int) []byte {
	start := 0
	if i > 0 {
		start = b.end(i - 1)
	}
	return b.data[start:b.end(i):b.end(i)]
}

func (b *vblock) last() uint64 { return b.handle(b.n - 1) }

// find returns the index of handle h in the block.
func (b *vblock) find(h uint64) (int, bool) {
	if h < b.base || h > b.last() {
		return 0, false
	}
	i := sort.Search(b.n, func(i int) bool { return b.handle(i) >= h })
	return i, i < b.n && b.handle(i) == h
}

// decodeBlock checks a row of the values table (key, value) and returns it
// decoded; the result shares the row's bytes. A bad row is ErrCorrupt.
func decodeBlock(key, v []byte) (vblock, error) {
	switch len(key) {
	case 8:
	case loneKeyLen:
		if got := crc32.Checksum(v, castagnoli); got != be.Uint32(key[8:]) {
			return vblock{}, fmt.Errorf("%w: lone value checksum mismatch (stored %08x, computed %08x)", ErrCorrupt, be.Uint32(key[8:]), got)
		}
		return vblock{key: key, base: be.Uint64(key), n: 1, data: v}, nil
	default:
		return vblock{}, fmt.Errorf("%w: value row key of %d bytes", ErrCorrupt, len(key))
	}
	if len(v) < blockHeader || string(v[:3]) != "TLV" {
		return vblock{}, fmt.Errorf("%w: bad value block header", ErrCorrupt)
	}
	if v[3] != blockVersion {
		return vblock{}, fmt.Errorf("%w: value block version %d (this library reads version %d)", ErrCorrupt, v[3], blockVersion)
	}
	n := int(be.Uint32(v[8:]))
	if n == 0 || n > (len(v)-blockHeader)/blockEntry {
		return vblock{}, fmt.Errorf("%w: value block of %d bytes says %d values", ErrCorrupt, len(v), n)
	}
	if got, stored := pageSum(v), be.Uint32(v[4:]); got != stored {
		return vblock{}, fmt.Errorf("%w: value block checksum mismatch (stored %08x, computed %08x)", ErrCorrupt, stored, got)
	}
	b := vblock{key: key, base: be.Uint64(key), n: n, idx: v[blockHeader : blockHeader+n*blockEntry], data: v[blockHeader+n*blockEntry:]}
	prevEnd := 0
	for i := 0; i < n; i++ {
		if i > 0 && be.Uint32(b.idx[i*blockEntry:]) <= be.Uint32(b.idx[(i-1)*blockEntry:]) {
			return vblock{}, fmt.Errorf("%w: value block handles out of order at entry %d", ErrCorrupt, i)
		}
		e := b.end(i)
		if e < prevEnd || e > len(b.data) {
			return vblock{}, fmt.Errorf("%w: value block entry %d ends at %d", ErrCorrupt, i, e)
		}
		prevEnd = e
	}
	if prevEnd != len(b.data) {
		return vblock{}, fmt.Errorf("%w: value block of %d data bytes, entries end at %d", ErrCorrupt, len(b.data), prevEnd)
	}
	if b.last() < b.base { // the key plus a delta wrapped around
		return vblock{}, fmt.Errorf("%w: value block handles past 2^64", ErrCorrupt)
	}
	return b, nil
}

// blockRow is a row to write to the values table.
type blockRow struct{ key, value []byte }

// packer cuts values of increasing handles into rows: blocks filled up to
// limit bytes and lone rows for values above maxValue - blockOverhead.
type packer struct {
	limit, maxValue int
	rows            []blockRow
	hs              []uint64
	vs              [][]byte
	size            int
}

// newPacker packs values into blocks of up to block bytes, for a store
// whose MaxValueSize is maxValue.
func newPacker(maxValue, block int) *packer {
	return &packer{limit: min(maxValue, block), maxValue: maxValue}
}

// add appends value v of handle h (above every handle added before); cut
// ends the current block first.
func (p *packer) add(h uint64, v []byte, cut bool) {
	if len(v) > p.maxValue-blockOverhead {
		p.flush()
		key := be.AppendUint32(u64(h), crc32.Checksum(v, castagnoli))
		p.rows = append(p.rows, blockRow{key, v})
		return
	}
	if len(p.hs) > 0 && (cut || p.size+blockEntry+len(v) > p.limit || h-p.hs[0] > math.MaxUint32) {
		p.flush()
	}
	if len(p.hs) == 0 {
		p.size = blockHeader
	}
	p.hs = append(p.hs, h)
	p.vs = append(p.vs, v)
	p.size += blockEntry + len(v)
}

// flush ends the current block.
func (p *packer) flush() {
	if len(p.hs) == 0 {
		return
	}
	p.rows = append(p.rows, blockRow{u64(p.hs[0]), encodeBlock(p.hs[0], p.hs, p.vs)})
	p.hs, p.vs = p.hs[:0], p.vs[:0]
}

// take returns the rows ended so far and forgets them; the current block
// stays open.
func (p *packer) take() []blockRow {
	rows := p.rows
	p.rows = nil
	return rows
}

// done returns the rows.
func (p *packer) done() []blockRow {
	p.flush()
	return p.rows
}

// encodeBlock encodes the values vs of handles hs (increasing, all in
// [base, base+2^32)) as a block keyed base.
func encodeBlock(base uint64, hs []uint64, vs [][]byte) []byte {
	size := blockHeader + blockEntry*len(hs)
	for _, v := range vs {
		size += len(v)
	}
	b := make([]byte, blockHeader+blockEntry*len(hs), size)
	copy(b, "TLV")
	b[3] = blockVersion
	be.PutUint32(b[8:], uint32(len(hs)))
	end := 0
	for i, h := range hs {
		end += len(vs[i])
		o := blockHeader + i*blockEntry
		be.PutUint32(b[o:], uint32(h-base))
		be.PutUint32(b[o+4:], uint32(end))
	}
	for _, v := range vs {
		b = append(b, v...)
	}
	be.PutUint32(b[4:], pageSum(b))
	return b
}

// without returns the block rewritten without the handles drop reports,
// keeping its key, and whether any value is left.
func (b *vblock) without(drop func(h uint64) bool) ([]byte, bool) {
	var hs []uint64
	var vs [][]byte
	for i := 0; i < b.n; i++ {
		if h := b.handle(i); !drop(h) {
			hs = append(hs, h)
			vs = append(vs, b.value(i))
		}
	}
	if len(hs) == 0 {
		return nil, false
	}
	if b.idx == nil { // a lone value is kept whole or deleted
		return b.data, true
	}
	return encodeBlock(b.base, hs, vs), true
}

// seekKey is the key a descending seek for handle h starts from: above
// every row whose key starts with h (a block keyed h or a lone value of
// h), below every row of a larger handle.
func seekKey(h uint64) []byte { return append(u64(h), 0xff, 0xff, 0xff, 0xff, 0xff) }

// afterKey is the smallest key above key.
func afterKey(key []byte) []byte { return append(bytes.Clone(key), 0) }
