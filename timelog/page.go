package timelog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Page encodings (docs/format.md). Every page starts with an 8-byte
// header: "TLP", the version byte and the page's CRC-32C as a big-endian
// uint32, computed over the first four bytes and everything after the
// header. Version 3 (dense.go) is written; version 2, records of 24 bytes
// each (as many as the length says) sorted by (ts, seq) — ts as a
// big-endian two's-complement int64, seq and handle as big-endian uint64 —
// is still read, and compaction rewrites it as version 3. Version 1 (the
// record count where the CRC now is) was never released; a page of any
// other version is corrupt.
const (
	pageHeader   = 8
	fixedVersion = 2
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
	version        byte // the page's encoding: fixedVersion or denseVersion
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

// summary encodes maxTs, n, minSeq and maxSeq (28 bytes), then the page's
// version byte for a dense page (a 28-byte summary is a version 2 page's).
func (p pageInfo) summary() []byte {
	b := make([]byte, 28, 29)
	be.PutUint64(b, uint64(p.maxTs))
	be.PutUint32(b[8:], uint32(p.n))
	be.PutUint64(b[12:], p.minSeq)
	be.PutUint64(b[20:], p.maxSeq)
	if p.version != fixedVersion {
		b = append(b, p.version)
	}
	return b
}

func decodeSummary(key, val []byte) (pageInfo, error) {
	if len(key) != len(metaPagePrefix)+16 || len(val) < 28 || len(val) > 29 || (len(val) == 29 && val[28] != denseVersion) {
		return pageInfo{}, fmt.Errorf("%w: page summary of %d/%d bytes", ErrCorrupt, len(key), len(val))
	}
	k := key[len(metaPagePrefix):]
	p := pageInfo{
		minTs:   int64(be.Uint64(k) ^ (1 << 63)),
		id:      be.Uint64(k[8:]),
		maxTs:   int64(be.Uint64(val)),
		n:       int(be.Uint32(val[8:])),
		minSeq:  be.Uint64(val[12:]),
		maxSeq:  be.Uint64(val[20:]),
		version: fixedVersion,
	}
	if len(val) == 29 {
		p.version = denseVersion
	}
	if p.n <= 0 || p.minTs > p.maxTs || p.minSeq > p.maxSeq {
		return pageInfo{}, fmt.Errorf("%w: page summary %+v", ErrCorrupt, p)
	}
	return p, nil
}

// checkPage validates a page (header, length, checksum) against its
// description (want records; -1: any number) and returns the record count.
func checkPage(b []byte, want int) (int, error) {
	if len(b) < pageHeader || string(b[:3]) != "TLP" {
		return 0, fmt.Errorf("%w: bad page header", ErrCorrupt)
	}
	var n int
	switch b[3] {
	case fixedVersion:
		n = (len(b) - pageHeader) / recSize
		if n == 0 || len(b) != pageHeader+n*recSize || (want >= 0 && n != want) {
			return 0, fmt.Errorf("%w: page of %d bytes (summary says %d records)", ErrCorrupt, len(b), want)
		}
	case denseVersion:
		if len(b) < denseHeader {
			return 0, fmt.Errorf("%w: dense page of %d bytes", ErrCorrupt, len(b))
		}
		n = int(be.Uint32(b[8:]))
		if n == 0 || (want >= 0 && n != want) {
			return 0, fmt.Errorf("%w: dense page of %d records (summary says %d)", ErrCorrupt, n, want)
		}
	default:
		return 0, fmt.Errorf("%w: page version %d (this library reads versions %d and %d)", ErrCorrupt, b[3], fixedVersion, denseVersion)
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
	return decodePageSpan(dst, b, want, name, key, fullSpan, denseAll)
}

// decodePageSpan is decodePage for the records with ts in q only: all of
// them, or the first or last (mode; a fixed-layout page gives all).
func decodePageSpan(dst []rec, b []byte, want int, name string, key []byte, q span, mode denseMode) ([]rec, error) {
	n, err := checkPage(b, want)
	if err == nil && b[3] == denseVersion {
		dst, err = decodeDense(dst, b, n, q, mode)
	}
	if err != nil {
		return dst, fmt.Errorf("timelog %q, page %x: %w", name, key, err)
	}
	if b[3] == denseVersion {
		return dst, nil
	}
	start := len(dst)
	dst = growRecs(dst, n)
	b = b[pageHeader:]
	for i := 0; i < n; i++ {
		r := b[i*recSize : i*recSize+recSize]
		dst = append(dst, rec{ts: int64(be.Uint64(r)), seq: be.Uint64(r[8:]), h: be.Uint64(r[16:])})
	}
	if q != fullSpan {
		in := clipRecs(dst[start:], q)
		dst = dst[:start+copy(dst[start:], in)]
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
