package timelog

import "sync/atomic"

type counters struct {
	flushes, flushedRecords, flushErrors       atomic.Int64
	compactions, compactedPages, compactErrors atomic.Int64
	maintErrors                                atomic.Int64
	busy, busyWaits                            atomic.Int64
	snapshots                                  atomic.Int64
}

// Stats describes a log at one instant.
type Stats struct {
	Pages         int   // stored pages
	StoredRecords int64 // records in stored pages, hidden ones included
	Tombstones    int   // stored deletes
	Overlapping   int   // pages in groups of overlapping pages
	FixedPages    int   // pages of the fixed 24-byte layout of older logs, which compaction rewrites as dense pages

	BufferedRecords int // in the active buffer and the sealed queue
	BufferedDeletes int
	BufferBytes     int // 24 bytes a buffered record or delete, plus the bytes of buffered values
	SealedRuns      int // sealed buffers waiting for a flush

	Flushes        int64 // flush transactions committed
	FlushedRecords int64
	Compactions    int64 // compaction transactions committed
	CompactedPages int64 // pages rewritten by compaction
	MaintErrors    int64 // failed background steps (retried)
	BusyEvents     int64 // writes that found the sealed queue full
	BusyWaits      int64 // waits for room in Background mode

	Dropped        int64 // records physically removed (announced or not)
	RetiredPending int   // dropped handles not yet released
	Released       int64 // OnRelease calls made
	OpenSnapshots  int
	Seq            uint64 // the last sequence number taken
}

// Stats returns the log's statistics.
func (l *Log) Stats() Stats {
	m := l.man.Load()
	s := Stats{
		Pages:          len(m.pages),
		StoredRecords:  m.records,
		Tombstones:     len(m.tombs),
		Flushes:        l.st.flushes.Load(),
		FlushedRecords: l.st.flushedRecords.Load(),
		Compactions:    l.st.compactions.Load(),
		CompactedPages: l.st.compactedPages.Load(),
		MaintErrors:    l.st.maintErrors.Load(),
		BusyEvents:     l.st.busy.Load(),
		BusyWaits:      l.st.busyWaits.Load(),
		Dropped:        l.ret.dropped.Load(),
		RetiredPending: l.ret.pendingCount(),
		Released:       l.ret.released.Load(),
		OpenSnapshots:  l.ret.openSnapshots(),
	}
	for _, p := range m.pages {
		if p.version == fixedVersion {
			s.FixedPages++
		}
	}
	for _, g := range m.groups {
		if g.end-g.start > 1 && dirty(m.pages[g.start:g.end]) {
			s.Overlapping += g.end - g.start
		}
	}
	l.mu.Lock()
	valBytes := l.mem.valBytes
	for _, r := range l.sealed {
		s.BufferedRecords += len(r.recs)
		s.BufferedDeletes += len(r.tombs)
		valBytes += r.valBytes
	}
	s.SealedRuns = len(l.sealed)
	s.BufferedRecords += l.mem.records()
	s.BufferedDeletes += len(l.mem.tombs)
	s.Seq = l.seq
	l.mu.Unlock()
	s.BufferBytes = recSize*(s.BufferedRecords+s.BufferedDeletes) + valBytes
	return s
}
