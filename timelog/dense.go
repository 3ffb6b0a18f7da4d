package timelog

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"
)

// Dense pages (version 3, docs/format.md): after the 8-byte header of every
// page ("TLP", the version byte, the CRC-32C), a 12-byte directory — the
// record count, the length of the timestamp column and the length of the
// sequence column, each a big-endian uint32 — then three columns of
// LEB128 varints, one value per record, in page order (ts, seq):
//   - timestamps: the difference to the previous timestamp as an unsigned
//     varint (the first one's difference to 0), modulo 2^64;
//   - sequence numbers, then handles: the difference to the previous value
//     (the first one's to 0) modulo 2^64, zigzag-encoded.
//
// Sorted timestamps make the first column one byte a record for a dense
// series; sequence numbers and handles that mostly grow by a small step
// take one byte each, a late record two or three. The CRC covers bytes
// 0–3 and everything from byte 8.
const (
	denseVersion = 3
	denseHeader  = pageHeader + 12
	// denseMaxRecord is the most bytes one record takes: three 10-byte
	// varints.
	denseMaxRecord = 30
	// denseMinPage is the largest one-record page: the smallest
	// PageMaxBytes that fits any record.
	denseMinPage = denseHeader + denseMaxRecord
)

func zigzag(v uint64) uint64 { return v<<1 ^ uint64(int64(v)>>63) }

func unzigzag(z uint64) uint64 { return z>>1 ^ -(z & 1) }

func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// pageEncoder encodes dense pages; its column buffers are reused.
type pageEncoder struct {
	ts, seq, h []byte
}

// encode writes the longest prefix of recs (sorted, non-empty) that fits
// in maxRecs records and maxBytes bytes (at least one record, whatever
// maxBytes) as one page, and returns the page, its description (id left to
// the caller) and the number of records it holds.
func (e *pageEncoder) encode(recs []rec, maxRecs, maxBytes int) ([]byte, pageInfo, int) {
	e.ts, e.seq, e.h = e.ts[:0], e.seq[:0], e.h[:0]
	p := pageInfo{minTs: recs[0].ts, n: 0, minSeq: math.MaxUint64}
	size := denseHeader
	var pt, ps, ph uint64
	for _, r := range recs[:min(len(recs), maxRecs)] {
		dt := uint64(r.ts) - pt
		ds := zigzag(r.seq - ps)
		dh := zigzag(r.h - ph)
		k := uvarintLen(dt) + uvarintLen(ds) + uvarintLen(dh)
		if p.n > 0 && size+k > maxBytes {
			break
		}
		size += k
		e.ts = appendUvarint(e.ts, dt)
		e.seq = appendUvarint(e.seq, ds)
		e.h = appendUvarint(e.h, dh)
		pt, ps, ph = uint64(r.ts), r.seq, r.h
		p.minSeq = min(p.minSeq, r.seq)
		p.maxSeq = max(p.maxSeq, r.seq)
		p.n++
	}
	p.maxTs = recs[p.n-1].ts
	p.version = denseVersion
	b := make([]byte, denseHeader, size)
	copy(b, "TLP")
	b[3] = denseVersion
	be.PutUint32(b[8:], uint32(p.n))
	be.PutUint32(b[12:], uint32(len(e.ts)))
	be.PutUint32(b[16:], uint32(len(e.seq)))
	b = append(append(append(b, e.ts...), e.seq...), e.h...)
	be.PutUint32(b[4:], pageSum(b))
	return b, p, p.n
}

// page encodes the first page of recs within c's limits (see encode).
func (e *pageEncoder) page(recs []rec, c *config) ([]byte, pageInfo, int) {
	if f := testPageEncode.Load(); f != nil {
		return (*f)(recs, c.pageRecs)
	}
	return e.encode(recs, math.MaxInt, c.PageMaxBytes)
}

// testPageEncode, set only by tests, replaces the page encoder (to write
// pages of an older version).
var testPageEncode atomic.Pointer[func(recs []rec, maxRecs int) ([]byte, pageInfo, int)]

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

var errVarint = errors.New("bad varint")

// uvarintAt decodes the varint at b[i:] and returns it and the index after
// it.
func uvarintAt(b []byte, i int) (uint64, int, error) {
	if i < len(b) && b[i] < 0x80 {
		return uint64(b[i]), i + 1, nil
	}
	var v uint64
	for s := uint(0); s < 70; s += 7 {
		if i >= len(b) {
			return 0, i, errVarint
		}
		c := b[i]
		i++
		if s == 63 && c > 1 {
			return 0, i, errVarint
		}
		v |= uint64(c&0x7f) << s
		if c < 0x80 {
			return v, i, nil
		}
	}
	return 0, i, errVarint
}

// denseColumns returns the three columns of dense page b (checked by
// checkPage: header and checksum) after checking the directory.
func denseColumns(b []byte, n int) (ts, seq, h []byte, err error) {
	if len(b) < denseHeader {
		return nil, nil, nil, fmt.Errorf("%w: dense page of %d bytes", ErrCorrupt, len(b))
	}
	cnt, lt, ls := int(be.Uint32(b[8:])), int(be.Uint32(b[12:])), int(be.Uint32(b[16:]))
	body := b[denseHeader:]
	if cnt != n || cnt <= 0 || lt > len(body) || ls > len(body)-lt {
		return nil, nil, nil, fmt.Errorf("%w: dense page directory %d/%d/%d (%d bytes, summary says %d records)", ErrCorrupt, cnt, lt, ls, len(b), n)
	}
	return body[:lt], body[lt : lt+ls], body[lt+ls:], nil
}

// decodeTs decodes column c of n timestamps into dst (len n), checking
// that they never decrease.
func decodeTs(dst []int64, c []byte) error {
	var prev uint64
	i := 0
	for k := range dst {
		var d uint64
		if i < len(c) && c[i] < 0x80 {
			d = uint64(c[i])
			i++
		} else {
			var err error
			if d, i, err = uvarintAt(c, i); err != nil {
				return err
			}
		}
		v := prev + d
		if k > 0 && int64(v) < int64(prev) {
			return errors.New("timestamps out of order")
		}
		dst[k] = int64(v)
		prev = v
	}
	if i != len(c) {
		return errors.New("timestamp column too long")
	}
	return nil
}

// decodeDelta decodes column c of len(dst) zigzag deltas into dst.
func decodeDelta(dst []uint64, c []byte) error {
	var prev uint64
	i := 0
	for k := range dst {
		var z uint64
		if i < len(c) && c[i] < 0x80 {
			z = uint64(c[i])
			i++
		} else {
			var err error
			if z, i, err = uvarintAt(c, i); err != nil {
				return err
			}
		}
		prev += unzigzag(z)
		dst[k] = prev
	}
	if i != len(c) {
		return errors.New("column too long")
	}
	return nil
}

// decodeDense appends the n records of dense page b to dst, decoding the
// three columns side by side.
func decodeDense(dst []rec, b []byte, n int) ([]rec, error) {
	ct, cs, ch, err := denseColumns(b, n)
	if err != nil {
		return dst, err
	}
	dst = growRecs(dst, n)
	var pt, ps, ph uint64
	i, j, k := 0, 0, 0
	for x := range n {
		var dt, zs, zh uint64
		if i < len(ct) && ct[i] < 0x80 {
			dt = uint64(ct[i])
			i++
		} else if dt, i, err = uvarintAt(ct, i); err != nil {
			return dst, fmt.Errorf("%w: dense page timestamps: %w", ErrCorrupt, err)
		}
		if j < len(cs) && cs[j] < 0x80 {
			zs = uint64(cs[j])
			j++
		} else if zs, j, err = uvarintAt(cs, j); err != nil {
			return dst, fmt.Errorf("%w: dense page sequence numbers: %w", ErrCorrupt, err)
		}
		if k < len(ch) && ch[k] < 0x80 {
			zh = uint64(ch[k])
			k++
		} else if zh, k, err = uvarintAt(ch, k); err != nil {
			return dst, fmt.Errorf("%w: dense page handles: %w", ErrCorrupt, err)
		}
		t := pt + dt
		if x > 0 && int64(t) < int64(pt) {
			return dst, fmt.Errorf("%w: dense page timestamps out of order", ErrCorrupt)
		}
		pt, ps, ph = t, ps+unzigzag(zs), ph+unzigzag(zh)
		dst = append(dst, rec{ts: int64(pt), seq: ps, h: ph})
	}
	if i != len(ct) || j != len(cs) || k != len(ch) {
		return dst, fmt.Errorf("%w: dense page columns longer than %d records", ErrCorrupt, n)
	}
	return dst, nil
}

// decodeDenseColumns decodes the timestamps and handles of the n records
// of dense page b into ts and hs (len n each), skipping the sequence
// numbers.
func decodeDenseColumns(ts []int64, hs []uint64, b []byte, n int) error {
	ct, _, ch, err := denseColumns(b, n)
	if err != nil {
		return err
	}
	if err := decodeTs(ts[:n], ct); err != nil {
		return fmt.Errorf("%w: dense page: %w", ErrCorrupt, err)
	}
	if err := decodeDelta(hs[:n], ch); err != nil {
		return fmt.Errorf("%w: dense page handles: %w", ErrCorrupt, err)
	}
	return nil
}
