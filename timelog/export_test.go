package timelog

import "math"

// SetFailCommit makes the log's own flush and compaction commits fail with
// the error f returns (nil: commit normally).
func SetFailCommit(f func() error) {
	if f == nil {
		testFailCommit.Store(nil)
		return
	}
	testFailCommit.Store(&f)
}

// SetConvertChunk makes the conversion of an old values table read rows
// old rows a chunk (0: the default) and call after, if not nil, once each
// chunk is written; an error from after aborts the conversion. The reset
// function restores the defaults.
func SetConvertChunk(rows int, after func() error) (reset func()) {
	testConvertChunk.rows, testConvertChunk.after = rows, after
	return func() { testConvertChunk.rows, testConvertChunk.after = 0, nil }
}

// WriteFixedPages makes the log write pages in the fixed 24-byte layout
// (version 2) that logs written before dense pages hold, as that code
// wrote them; the reset function restores dense pages.
func WriteFixedPages() (reset func()) {
	f := func(recs []rec, maxBytes int) ([]byte, pageInfo, int) {
		n := min(len(recs), max(1, (maxBytes-pageHeader)/recSize))
		recs = recs[:n]
		b := make([]byte, pageHeader+recSize*n)
		copy(b, "TLP")
		b[3] = fixedVersion
		p := pageInfo{minTs: recs[0].ts, maxTs: recs[n-1].ts, n: n, minSeq: math.MaxUint64, version: fixedVersion}
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
		return b, p, n
	}
	testPageEncode.Store(&f)
	return func() { testPageEncode.Store(nil) }
}
