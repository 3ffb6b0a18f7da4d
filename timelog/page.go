package timelog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
)

// Page encoding (docs/format.md): an 8-byte header, "TLP", the version
// byte 2 and the page's CRC-32C as a big-endian uint32, then records of 24
// bytes each (as many as the length says), sorted by (ts, seq): ts as a
// big-endian two's-complement int64, seq and handle as big-endian uint64.
// The CRC covers the first four bytes and the records. Version 1 (the
// record count where the CRC now is) was never released; a page of any
// version but 2 is corrupt.
const (
	pageHeader  = 8
	pageVersion = 2
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// pageSum is the CRC-32C of page b: its bytes 0–3 and its records.
func pageSum(b []byte) uint32 {
	return crc32.Update(crc32.Update(0, castagnoli, b[:4]), castagnoli, b[pageHeader:])
}

var be = binary.BigEndian

// pageInfo describes one stored page; the manifest keeps one per page.
type pageInfo struct {
	minTs, maxTs   int64
	id             uint64
	n              int
	minSeq, maxSeq uint64
}

func (p pageInfo) span() span { return span{p.minTs, p.maxTs} }

// key is the page's key in the pages table: minTs made order-preserving
// (sign bit flipped), then the page id, both big-endian.
func (p pageInfo) key() []byte {
	var k [16]byte
	be.PutUint64(k[:], uint64(p.minTs)^(1<<63))
	be.PutUint64(k[8:], p.id)
	return k[:]
}

// summaryKey is the page's row in the meta table.
func (p pageInfo) summaryKey() []byte { return append([]byte(metaPagePrefix), p.key()...) }

// summary encodes maxTs, n, minSeq and maxSeq (28 bytes).
func (p pageInfo) summary() []byte {
	b := make([]byte, 28)
	be.PutUint64(b, uint64(p.maxTs))
	be.PutUint32(b[8:], uint32(p.n))
	be.PutUint64(b[12:], p.minSeq)
	be.PutUint64(b[20:], p.maxSeq)
	return b
}

func decodeSummary(key, val []byte) (pageInfo, error) {
	if len(key) != len(metaPagePrefix)+16 || len(val) != 28 {
		return pageInfo{}, fmt.Errorf("%w: page summary of %d/%d bytes", ErrCorrupt, len(key), len(val))
	}
	k := key[len(metaPagePrefix):]
	p := pageInfo{
		minTs:  int64(be.Uint64(k) ^ (1 << 63)),
		id:     be.Uint64(k[8:]),
		maxTs:  int64(be.Uint64(val)),
		n:      int(be.Uint32(val[8:])),
		minSeq: be.Uint64(val[12:]),
		maxSeq: be.Uint64(val[20:]),
	}
	if p.n <= 0 || p.minTs > p.maxTs || p.minSeq > p.maxSeq {
		return pageInfo{}, fmt.Errorf("%w: page summary %+v", ErrCorrupt, p)
	}
	return p, nil
}

// encodePage writes recs (sorted, non-empty) as a page, and returns it with
// its description (id left to the caller).
func encodePage(recs []rec) ([]byte, pageInfo) {
	b := make([]byte, pageHeader+recSize*len(recs))
	copy(b, "TLP")
	b[3] = pageVersion
	p := pageInfo{minTs: recs[0].ts, maxTs: recs[len(recs)-1].ts, n: len(recs), minSeq: math.MaxUint64}
	o := pageHeader
	for _, r := range recs {
		be.PutUint64(b[o:], uint64(r.ts))
		be.PutUint64(b[o+8:], r.seq)
		be.PutUint64(b[o+16:], r.h)
		o += recSize
		p.minSeq = min(p.minSeq, r.seq)
		p.maxSeq = max(p.maxSeq, r.seq)
	}
	be.PutUint32(b[4:], pageSum(b))
	return b, p
}

// checkPage validates a page (header, length, checksum) against its
// description (want records; -1: any number) and returns the record count.
func checkPage(b []byte, want int) (int, error) {
	if len(b) < pageHeader || string(b[:3]) != "TLP" {
		return 0, fmt.Errorf("%w: bad page header", ErrCorrupt)
	}
	if b[3] != pageVersion {
		return 0, fmt.Errorf("%w: page version %d (this library reads version %d)", ErrCorrupt, b[3], pageVersion)
	}
	n := (len(b) - pageHeader) / recSize
	if n == 0 || len(b) != pageHeader+n*recSize || (want >= 0 && n != want) {
		return 0, fmt.Errorf("%w: page of %d bytes (summary says %d records)", ErrCorrupt, len(b), want)
	}
	if got, stored := pageSum(b), be.Uint32(b[4:]); got != stored {
		return 0, fmt.Errorf("%w: page checksum mismatch (stored %08x, computed %08x)", ErrCorrupt, stored, got)
	}
	return n, nil
}

// decodePage appends the records of page b of log name to dst, after
// checking the page (checkPage); a bad page is ErrCorrupt naming the log
// and the page.
func decodePage(dst []rec, b []byte, want int, name string, key []byte) ([]rec, error) {
	n, err := checkPage(b, want)
	if err != nil {
		return dst, fmt.Errorf("timelog %q, page %x: %w", name, key, err)
	}
	dst = growRecs(dst, n)
	b = b[pageHeader:]
	for i := 0; i < n; i++ {
		r := b[i*recSize : i*recSize+recSize]
		dst = append(dst, rec{ts: int64(be.Uint64(r)), seq: be.Uint64(r[8:]), h: be.Uint64(r[16:])})
	}
	return dst, nil
}

func growRecs(dst []rec, n int) []rec {
	if cap(dst)-len(dst) < n {
		nd := make([]rec, len(dst), len(dst)+n)
		copy(nd, dst)
		dst = nd
	}
	return dst
}

// Meta table rows.
const (
	metaSeq        = "seq"        // the highest sequence number written
	metaGen        = "gen"        // bumped by every commit that changes the log
	metaEpoch      = "epoch"      // bumped by every commit that drops records
	metaNextPage   = "nextpage"   // the next page id
	metaNextHandle = "nexthandle" // values log: above every stored handle
	metaPagePrefix = "p"          // "p" + page key -> summary
)

func u64(v uint64) []byte {
	var b [8]byte
	be.PutUint64(b[:], v)
	return b[:]
}

func tombKey(seq uint64) []byte { return u64(seq) }

func tombValue(t tomb) []byte {
	b := make([]byte, 16)
	be.PutUint64(b, uint64(t.lo))
	be.PutUint64(b[8:], uint64(t.hi))
	return b
}

func decodeTomb(key, val []byte) (tomb, error) {
	if len(key) != 8 || len(val) != 16 {
		return tomb{}, fmt.Errorf("%w: tombstone of %d/%d bytes", ErrCorrupt, len(key), len(val))
	}
	return tomb{seq: be.Uint64(key), lo: int64(be.Uint64(val)), hi: int64(be.Uint64(val[8:]))}, nil
}
