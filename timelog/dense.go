package timelog

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"sync/atomic"
)

// Dense pages (version 3, docs/format.md): after the 8-byte header of every
// page ("TLP", the version byte, the CRC-32C), a 16-byte directory — the
// record count and the lengths of the timestamp, sequence and handle
// columns, each a big-endian uint32 — then the three columns of LEB128
// varints, one value per record in page order (ts, seq), then a block
// index:
//   - timestamps: the difference to the previous timestamp as an unsigned
//     varint (the first one's difference to 0), modulo 2^64;
//   - sequence numbers, then handles: the difference to the previous value
//     (the first one's to 0) modulo 2^64, zigzag-encoded;
//   - the index: for each record k·256 (k ≥ 1), the timestamp, sequence
//     number and handle of the record before it (8 bytes each, big-endian)
//     and the offsets of its varints in the three columns (4 bytes each),
//     so that a point read decodes one block of 256 records, not the page.
//
// Sorted timestamps make the first column one byte a record for a dense
// series; sequence numbers and handles that mostly grow by a small step
// take one byte each, a late record two or three. The CRC covers bytes
// 0–3 and everything from byte 8.
const (
	denseVersion = 3
	denseHeader  = pageHeader + 16
	// denseBlock is the number of records between two index entries.
	denseBlock = 256
	denseEntry = 36 // bytes of an index entry
	// denseMaxRecord is the most bytes one record takes: three 10-byte
	// varints.
	denseMaxRecord = 30
	// denseMinPage is the largest one-record page: the smallest
	// PageMaxBytes that fits any record.
	denseMinPage = denseHeader + denseMaxRecord
)

func zigzag(v uint64) uint64 { return v<<1 ^ uint64(int64(v)>>63) }

func unzigzag(z uint64) uint64 { return z>>1 ^ -(z & 1) }

// pageEncoder encodes dense pages; its column buffers are reused.
type pageEncoder struct {
	ts, seq, h, idx []byte
}

// encode writes the longest prefix of recs (sorted, non-empty) that fits
// in maxBytes bytes (at least one record, whatever maxBytes) as one page,
// and returns the page, its description (id left to the caller) and the
// number of records it holds.
//
// The varints are written straight into the column buffers, which have
// room for a whole page plus one block of records. A block is written
// without a check per record, then taken back if it took the page past
// maxBytes; from there (the page's last block) records go one at a time,
// and the one that would take the page past maxBytes is taken back, with
// the index entry before it.
func (e *pageEncoder) encode(recs []rec, maxBytes int) ([]byte, pageInfo, int) {
	if room := maxBytes + denseBlock*denseMaxRecord; cap(e.ts) < room {
		e.ts, e.seq, e.h = make([]byte, room), make([]byte, room), make([]byte, room)
	}
	ts, sq, hs := e.ts[:cap(e.ts)], e.seq[:cap(e.seq)], e.h[:cap(e.h)]
	e.idx = e.idx[:0]
	size := denseHeader
	st := encState{lo: math.MaxUint64}
	n, blocks := 0, true
	for n < len(recs) {
		indexed := n > 0 && n%denseBlock == 0
		if indexed {
			e.idx = st.appendEntry(e.idx)
		}
		if blocks && n > 0 {
			before := st
			end := min(len(recs), n-n%denseBlock+denseBlock)
			st.putBlock(recs[n:end], ts, sq, hs)
			if k := st.len() - before.len() + entryBytes(indexed); size+k <= maxBytes {
				size += k
				n = end
				continue
			}
			st, blocks = before, false
		}
		before := st
		st.put(&recs[n], ts, sq, hs)
		k := st.len() - before.len() + entryBytes(indexed)
		if n > 0 && size+k > maxBytes {
			st = before
			if indexed {
				e.idx = e.idx[:len(e.idx)-denseEntry]
			}
			break
		}
		size += k
		n++
	}
	p := pageInfo{minTs: recs[0].ts, maxTs: recs[n-1].ts, n: n, minSeq: st.lo, maxSeq: st.hi, version: denseVersion}
	it, is, ih := st.it, st.is, st.ih
	b := make([]byte, size)
	copy(b, "TLP")
	b[3] = denseVersion
	be.PutUint32(b[8:], uint32(n))
	be.PutUint32(b[12:], uint32(it))
	be.PutUint32(b[16:], uint32(is))
	be.PutUint32(b[20:], uint32(ih))
	o := denseHeader
	o += copy(b[o:], ts[:it])
	o += copy(b[o:], sq[:is])
	o += copy(b[o:], hs[:ih])
	copy(b[o:], e.idx)
	be.PutUint32(b[4:], pageSum(b))
	return b, p, n
}

// encState is where an encoding stands: the columns' lengths, the last
// record written, and the smallest and largest sequence numbers.
type encState struct {
	it, is, ih int
	pt, ps, ph uint64
	lo, hi     uint64
}

func (st *encState) len() int { return st.it + st.is + st.ih }

func entryBytes(indexed bool) int {
	if indexed {
		return denseEntry
	}
	return 0
}

// appendEntry appends the index entry of the next record: the last record
// written and the columns' lengths.
func (st *encState) appendEntry(idx []byte) []byte {
	idx = be.AppendUint64(idx, st.pt)
	idx = be.AppendUint64(idx, st.ps)
	idx = be.AppendUint64(idx, st.ph)
	idx = be.AppendUint32(idx, uint32(st.it))
	idx = be.AppendUint32(idx, uint32(st.is))
	return be.AppendUint32(idx, uint32(st.ih))
}

// put writes record r's varints into the columns.
func (st *encState) put(r *rec, ts, sq, hs []byte) {
	st.it = putUvarint(ts, st.it, uint64(r.ts)-st.pt)
	st.is = putUvarint(sq, st.is, zigzag(r.seq-st.ps))
	st.ih = putUvarint(hs, st.ih, zigzag(r.h-st.ph))
	st.pt, st.ps, st.ph = uint64(r.ts), r.seq, r.h
	st.lo, st.hi = min(st.lo, r.seq), max(st.hi, r.seq)
}

// putBlock is put for every record of block, one column at a time (each
// loop keeps its few values in registers).
func (st *encState) putBlock(block []rec, ts, sq, hs []byte) {
	it, pt := st.it, st.pt
	for i := range block {
		v := uint64(block[i].ts)
		it = putUvarint(ts, it, v-pt)
		pt = v
	}
	is, ps, lo, hi := st.is, st.ps, st.lo, st.hi
	for i := range block {
		v := block[i].seq
		is = putUvarint(sq, is, zigzag(v-ps))
		ps, lo, hi = v, min(lo, v), max(hi, v)
	}
	ih, ph := st.ih, st.ph
	for i := range block {
		v := block[i].h
		ih = putUvarint(hs, ih, zigzag(v-ph))
		ph = v
	}
	*st = encState{it, is, ih, pt, ps, ph, lo, hi}
}

// putUvarint writes v as a varint at b[i:] (room for 10 bytes) and returns
// the index after it.
func putUvarint(b []byte, i int, v uint64) int {
	if v < 0x80 {
		b[i] = byte(v)
		return i + 1
	}
	for v >= 0x80 {
		b[i] = byte(v) | 0x80
		v >>= 7
		i++
	}
	b[i] = byte(v)
	return i + 1
}

// page encodes the first page of recs within c's limits (see encode).
func (e *pageEncoder) page(recs []rec, c *config) ([]byte, pageInfo, int) {
	if f := testPageEncode.Load(); f != nil {
		return (*f)(recs, c.PageMaxBytes)
	}
	return e.encode(recs, c.PageMaxBytes)
}

// testPageEncode, set only by tests, replaces the page encoder (to write
// pages of an older version).
var testPageEncode atomic.Pointer[func(recs []rec, maxBytes int) ([]byte, pageInfo, int)]

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

// densePage is a dense page's parts, its directory checked.
type densePage struct {
	n          int
	ts, seq, h []byte // the columns
	idx        []byte // the block index: (n-1)/denseBlock entries
}

// parseDense splits dense page b (its header and checksum checked by
// checkPage) into its parts, checking the directory against the length and
// the summary's record count n.
func parseDense(b []byte, n int) (densePage, error) {
	if len(b) < denseHeader {
		return densePage{}, fmt.Errorf("%w: dense page of %d bytes", ErrCorrupt, len(b))
	}
	cnt := int(be.Uint32(b[8:]))
	lt, ls, lh := uint64(be.Uint32(b[12:])), uint64(be.Uint32(b[16:])), uint64(be.Uint32(b[20:]))
	body := b[denseHeader:]
	entries := uint64(0)
	if cnt > 0 {
		entries = uint64(cnt-1) / denseBlock
	}
	if cnt != n || cnt <= 0 || lt+ls+lh+entries*denseEntry != uint64(len(body)) {
		return densePage{}, fmt.Errorf("%w: dense page directory %d/%d/%d/%d (%d bytes, summary says %d records)", ErrCorrupt, cnt, lt, ls, lh, len(b), n)
	}
	return densePage{n: cnt, ts: body[:lt], seq: body[lt : lt+ls], h: body[lt+ls : lt+ls+lh], idx: body[lt+ls+lh:]}, nil
}

// entry returns index entry k (k ≥ 1): the record before record
// k·denseBlock and the column offsets of that record.
func (d *densePage) entry(k int) (prev rec, ot, os, oh int) {
	e := d.idx[(k-1)*denseEntry:]
	prev = rec{ts: int64(be.Uint64(e)), seq: be.Uint64(e[8:]), h: be.Uint64(e[16:])}
	return prev, int(be.Uint32(e[24:])), int(be.Uint32(e[28:])), int(be.Uint32(e[32:]))
}

func (d *densePage) entries() int { return len(d.idx) / denseEntry }

// denseMode says which records of a span a decode needs.
type denseMode int

const (
	denseAll   denseMode = iota // every record of the span
	denseFirst                  // the first record of the span
	denseLast                   // the last record of the span
)

// decodeDense appends the records of dense page b (n records) with ts in
// q to dst: all of them, or only the first or the last (mode). It starts
// at the block where q begins (for denseLast: where it ends) and stops
// past q, so a point read decodes a block, not the page. A whole-page
// decode also checks every index entry against the records.
func decodeDense(dst []rec, b []byte, n int, q span, mode denseMode) ([]rec, error) {
	d, err := parseDense(b, n)
	if err != nil {
		return dst, err
	}
	from := q.lo
	if mode == denseLast {
		from = q.hi
	}
	// Start at the last block whose previous record is below from: every
	// record before it is below from too.
	k := sort.Search(d.entries(), func(i int) bool {
		prev, _, _, _ := d.entry(i + 1)
		return prev.ts >= from
	})
	x, i, j, l := 0, 0, 0, 0
	var prev rec
	if k > 0 {
		prev, i, j, l = d.entry(k)
		x = k * denseBlock
		if i > len(d.ts) || j > len(d.seq) || l > len(d.h) {
			return dst, fmt.Errorf("%w: dense page index entry %d out of its columns", ErrCorrupt, k)
		}
	}
	check := k == 0 && q.lo == math.MinInt64 && q.hi == math.MaxInt64 && mode == denseAll
	if mode == denseAll && check {
		dst = growRecs(dst, n)
	}
	var last rec
	found := false
	if mode == denseLast && k > 0 && prev.ts >= q.lo && prev.ts <= q.hi {
		last, found = prev, true
	}
	pt, ps, ph := uint64(prev.ts), prev.seq, prev.h
	for ; x < n; x++ {
		if check && x > 0 && x%denseBlock == 0 {
			e, ot, os, oh := d.entry(x / denseBlock)
			if e != (rec{ts: int64(pt), seq: ps, h: ph}) || ot != i || os != j || oh != l {
				return dst, fmt.Errorf("%w: dense page index entry %d does not match record %d", ErrCorrupt, x/denseBlock, x)
			}
		}
		var dt, zs, zh uint64
		if i < len(d.ts) && d.ts[i] < 0x80 {
			dt = uint64(d.ts[i])
			i++
		} else if dt, i, err = uvarintAt(d.ts, i); err != nil {
			return dst, fmt.Errorf("%w: dense page timestamps: %w", ErrCorrupt, err)
		}
		if j < len(d.seq) && d.seq[j] < 0x80 {
			zs = uint64(d.seq[j])
			j++
		} else if zs, j, err = uvarintAt(d.seq, j); err != nil {
			return dst, fmt.Errorf("%w: dense page sequence numbers: %w", ErrCorrupt, err)
		}
		if l < len(d.h) && d.h[l] < 0x80 {
			zh = uint64(d.h[l])
			l++
		} else if zh, l, err = uvarintAt(d.h, l); err != nil {
			return dst, fmt.Errorf("%w: dense page handles: %w", ErrCorrupt, err)
		}
		t := pt + dt
		if x > 0 && int64(t) < int64(pt) {
			return dst, fmt.Errorf("%w: dense page timestamps out of order", ErrCorrupt)
		}
		pt, ps, ph = t, ps+unzigzag(zs), ph+unzigzag(zh)
		r := rec{ts: int64(pt), seq: ps, h: ph}
		if r.ts < q.lo {
			continue
		}
		if r.ts > q.hi {
			break
		}
		switch mode {
		case denseFirst:
			return append(dst, r), nil
		case denseLast:
			last, found = r, true
		default:
			dst = append(dst, r)
		}
	}
	if check && (i != len(d.ts) || j != len(d.seq) || l != len(d.h)) {
		return dst, fmt.Errorf("%w: dense page columns longer than %d records", ErrCorrupt, n)
	}
	if found {
		dst = append(dst, last)
	}
	return dst, nil
}

// decodeDenseTs decodes column c of len(dst) timestamp deltas into dst,
// checking that the timestamps never decrease.
func decodeDenseTs(dst []int64, c []byte) error {
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
				return fmt.Errorf("%w: dense page timestamps: %w", ErrCorrupt, err)
			}
		}
		v := prev + d
		if k > 0 && int64(v) < int64(prev) {
			return fmt.Errorf("%w: dense page timestamps out of order", ErrCorrupt)
		}
		dst[k] = int64(v)
		prev = v
	}
	if i != len(c) {
		return fmt.Errorf("%w: dense page timestamp column longer than %d records", ErrCorrupt, len(dst))
	}
	return nil
}

// decodeDenseHandles decodes column c of len(dst) zigzag handle deltas
// into dst.
func decodeDenseHandles(dst []uint64, c []byte) error {
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
				return fmt.Errorf("%w: dense page handles: %w", ErrCorrupt, err)
			}
		}
		prev += unzigzag(z)
		dst[k] = prev
	}
	if i != len(c) {
		return fmt.Errorf("%w: dense page handle column longer than %d records", ErrCorrupt, len(dst))
	}
	return nil
}
