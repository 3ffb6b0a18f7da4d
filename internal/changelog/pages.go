package changelog

import (
	"bytes"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/scan"
)

// The bounds of a PageCache's window: at most this many of the latest
// changes, and at most about this many bytes of their keys and values.
const (
	PageCacheChanges = 4096
	PageCacheBytes   = 4 << 20
)

// PageCache holds the latest committed changes of one store, as the
// readers of one process read them, so that after a commit one reader
// reads the new changes through SQL and every other reader copies them.
//
// The window is contiguous: every change from base to last, decoded and
// unfiltered, values opened. It is tagged with the store's commit mark
// (engine.DB.CommitMark) read before the read transaction that filled it:
// while the file's mark is still that one, nothing has committed since,
// so the window, the epoch and the log's bounds it holds are the file's
// (a trim or a reset in another process moves the mark too). When the
// mark has moved, one reader refreshes the window (the others wait for
// it): it reads the changes after last, and the epoch and the bounds,
// in one read transaction. The log is append-only (a trim deletes the
// oldest rows, never changes one), so a change read once stays true.
//
// A reader whose position is before the window reads through SQL as
// before (a backlog); a store without a mapped WAL index has no commit
// mark and its readers always read through SQL.
type PageCache struct {
	mu      sync.Mutex
	valid   bool              // mark, noLog, epoch, oldest, last, base, win are set
	mark    engine.CommitMark // the file's mark before the read that filled the window
	noLog   bool              // the store had no change log at mark
	epoch   []byte
	oldest  int64    // the log's oldest change (0: none)
	last    int64    // the log's last change (0: none)
	base    int64    // the sequence of win[0] (last+1 when win is empty)
	win     []Change // base..last
	bytes   int      // the keys' and values' bytes in win
	fills   uint64   // refreshes begun
	filling chan struct{}
}

// CacheRead is what a read from the cache returns: OK false when the
// cache cannot serve it (the reader reads through SQL), else the changes
// that pass the filter, each with its own copy of its key and value, and
// the sequence to read from next, with the store's epoch.
type CacheRead struct {
	OK    bool
	Chs   []Change
	Next  int64
	Epoch []byte
}

// Read serves a reader at pos (pos.Epoch nil: any epoch) from the
// window: up to limit changes that pass f, refreshing the window first
// (once for all readers waiting) when something has committed since it
// was filled. A position of another epoch fails with ErrEpoch, one before
// the log's oldest change with a *CompactedError, both checked against
// the log as of now. open opens sealed values (Feeds.OpenValues).
func (pc *PageCache) Read(ctx context.Context, db *engine.DB, open func([]Change) error, pos Position, f Filter, limit int) (CacheRead, error) {
	from := max(pos.Seq, 1)
	mark, ok := db.CommitMark()
	if !ok {
		return CacheRead{}, nil
	}
	pc.mu.Lock()
	arrived := pc.fills // a refresh begun after this saw the file as of now or later
	for {
		if pc.valid && pc.mark == mark {
			return pc.serveLocked(pos.Epoch, from, f, limit)
		}
		if pc.filling != nil {
			ch := pc.filling
			pc.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return CacheRead{}, ctx.Err()
			}
			pc.mu.Lock()
			if pc.valid && pc.fills > arrived {
				// The refresh that ended began after this call did: its
				// window is as new as the file was when the call began.
				return pc.serveLocked(pos.Epoch, from, f, limit)
			}
			if mark, ok = db.CommitMark(); !ok {
				pc.mu.Unlock()
				return CacheRead{}, nil
			}
			continue
		}
		pc.fills++
		done := make(chan struct{})
		pc.filling = done
		pc.mu.Unlock()
		err := pc.refresh(ctx, db, open, from)
		pc.mu.Lock()
		pc.filling = nil
		close(done)
		if err != nil {
			// The reader reads its own page, which reports the error if
			// its page has it.
			pc.valid = false
			pc.mu.Unlock()
			return CacheRead{}, nil
		}
		return pc.serveLocked(pos.Epoch, from, f, limit)
	}
}

// serveLocked answers a read from the window, with pc.mu held; it
// unlocks it.
func (pc *PageCache) serveLocked(epoch []byte, from int64, f Filter, limit int) (CacheRead, error) {
	defer pc.mu.Unlock()
	if pc.noLog || from < pc.base {
		return CacheRead{}, nil
	}
	if epoch != nil && !bytes.Equal(epoch, pc.epoch) {
		return CacheRead{}, fmt.Errorf("changelog: position %d: %w", from, ErrEpoch)
	}
	if pc.oldest > 1 && from < pc.oldest {
		return CacheRead{}, &CompactedError{From: from, Oldest: pc.oldest}
	}
	out := CacheRead{OK: true, Next: max(from, pc.last+1), Epoch: pc.epoch}
	if from > pc.last {
		return out, nil
	}
	win := pc.win[from-pc.base:]
	var pfx, end []byte
	if len(f.Prefix) > 0 {
		pfx, end = f.Prefix, scan.PrefixEnd(f.Prefix)
	}
	n, size := 0, 0
	for i := range win {
		if f.Match(&win[i], pfx, end) {
			n++
			size += len(win[i].Key) + len(win[i].Value)
			if n == limit {
				out.Next = win[i].Seq + 1
				win = win[:i+1]
				break
			}
		}
	}
	if n == 0 {
		return out, nil
	}
	// One allocation for the keys and values of the page: a reader may
	// keep or change them without touching another's.
	arena := make([]byte, 0, size)
	out.Chs = make([]Change, 0, n)
	for i := range win {
		c := &win[i]
		if !f.Match(c, pfx, end) {
			continue
		}
		ch := *c
		if c.Key != nil {
			arena = append(arena, c.Key...)
			ch.Key = arena[len(arena)-len(c.Key) : len(arena) : len(arena)]
		}
		if c.Value != nil {
			arena = append(arena, c.Value...)
			ch.Value = arena[len(arena)-len(c.Value) : len(arena) : len(arena)]
		}
		out.Chs = append(out.Chs, ch)
	}
	return out, nil
}

// refresh reads, in one read transaction, the epoch, the log's bounds and
// the changes after the window's last, and makes them the window, tagged
// with the commit mark read before. from is the refreshing reader's
// position: a new window starts there (within the bounds' last
// PageCacheChanges), so that the first refresh reads no more than the
// readers need.
func (pc *PageCache) refresh(ctx context.Context, db *engine.DB, open func([]Change) error, from int64) error {
	mark, ok := db.CommitMark()
	if !ok {
		return errors.New("changelog: no commit mark")
	}
	c, err := db.AcquireSnapshot(ctx, engine.ReadPinned)
	if err != nil {
		return err
	}
	defer db.ReleaseSnapshot(c)
	dest := make([]driver.Value, 3)
	if err := c.QueryRow(ctx, headSQL, dest); err != nil {
		if !engine.NoSuchTable(err) {
			return fmt.Errorf("changelog: read: %w", err)
		}
		pc.mu.Lock()
		pc.valid, pc.mark, pc.noLog = true, mark, true
		pc.epoch, pc.win, pc.bytes = nil, nil, 0
		pc.mu.Unlock()
		return nil
	}
	ep, ok := dest[0].([]byte)
	if !ok || len(ep) != EpochLen {
		return fmt.Errorf("changelog: header row: %w", engine.ErrCorrupt)
	}
	oldest, _ := dest[1].(int64)
	last, _ := dest[2].(int64)

	// Only the refreshing goroutine writes the window (pc.filling), so
	// reading it here without the lock is safe; readers serve from it
	// under the lock, and appends never overwrite what they copy.
	keep := pc.valid && !pc.noLog && bytes.Equal(ep, pc.epoch)
	start := pc.last + 1
	if !keep || start < oldest || last-start+1 > PageCacheChanges {
		// A new window: the reader's position, within the last
		// PageCacheChanges changes and the retained log.
		keep = false
		start = min(max(from, last-PageCacheChanges+1, oldest, 1), last+1)
	}
	var chs []Change
	if start <= last {
		if chs, err = Read(ctx, c, start, int(last-start+1)); err != nil {
			return err
		}
		if len(chs) > 0 && chs[len(chs)-1].Seq > last {
			return errors.New("changelog: read outside its read transaction")
		}
		if err := open(chs); err != nil {
			return err
		}
	}
	win, size, base := pc.win, pc.bytes, pc.base
	if !keep {
		win, size, base = nil, 0, start
		if pc.valid && !pc.noLog && bytes.Equal(ep, pc.epoch) {
			ep = pc.epoch // the same epoch: keep the slice readers compare with
		}
	} else {
		ep = pc.epoch
	}
	for i := range chs {
		size += len(chs[i].Key) + len(chs[i].Value)
	}
	win = append(win, chs...) // past the len readers copy from: no overlap
	pc.mu.Lock()
	drop := 0
	for drop < len(win) && (len(win)-drop > PageCacheChanges || size > PageCacheBytes) {
		size -= len(win[drop].Key) + len(win[drop].Value)
		win[drop] = Change{} // let the bytes go
		drop++
	}
	pc.valid, pc.mark, pc.noLog = true, mark, false
	pc.epoch, pc.oldest, pc.last = ep, oldest, last
	pc.win, pc.bytes, pc.base = win[drop:], size, base+int64(drop)
	pc.mu.Unlock()
	return nil
}

// Match reports whether f selects c, as the filtered read's SQL does; pfx
// and end are f.Prefix and scan.PrefixEnd(f.Prefix) (both nil without a
// prefix).
func (f Filter) Match(c *Change, pfx, end []byte) bool {
	if f.CF != "" && c.CF != f.CF {
		return false
	}
	if pfx == nil {
		return true
	}
	if c.Key == nil {
		return false // a column family event
	}
	below := end == nil || bytes.Compare(c.Key, end) < 0
	if bytes.Compare(c.Key, pfx) >= 0 && below {
		return true
	}
	return c.Op == OpDeleteRange && below && (c.Value == nil || bytes.Compare(c.Value, pfx) > 0)
}
