package changelog

import (
	"bytes"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

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
// reads the new changes through SQL and every other reader takes its page
// from them.
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
// A commit of this process extends the window without a read (Publish):
// the writer hands over the changes it recorded once its commit has
// returned, and they are appended when the file's mark then is the one
// commit after the window's.
//
// A reader whose position is before the window reads through SQL as
// before (a backlog); a store without a mapped WAL index has no commit
// mark and its readers always read through SQL.
type PageCache struct {
	// cur is the window, published whole: a reader that finds its mark
	// still the file's serves from it without a lock. Its changes are
	// never written once published (the next window appends past its
	// end), so readers read it while a refresh builds the next.
	cur       atomic.Pointer[window]
	mu        sync.Mutex
	fills     atomic.Uint64 // refreshes begun (written under mu)
	filling   chan struct{} // closed when the refresh under way ends
	published atomic.Uint64 // windows a commit extended (Publish)
	refreshes atomic.Uint64 // windows read through SQL
	// queue is the commits of this process whose Publish came while a
	// refresh was under way (under mu), queued the changes of each, in
	// commit order: the refresh's window is extended with them once it
	// ends (catchUp). Without it, a commit during a refresh left the
	// window behind, the readers refreshed again, and commits during that
	// refresh did the same: one refresh led to the next while commits
	// streamed. queuedN counts their changes and bytes; qover: too many,
	// dropped (the readers refresh after this one).
	queue   []published
	queuedN int
	queuedB int
	qover   bool
	// readers counts the readers of the store that exist (Join): with
	// none, the writer keeps no copy of its changes for the window.
	readers atomic.Int64
	// The write transaction of this process whose changes will extend
	// the window (Land), under landMu: landGen its landing (0: none),
	// landMark the file's commit mark at its first change, landWait the
	// channel the readers that wait for it wait on (made by the first,
	// closed when the landing ends or another replaces it). No landing
	// allocates: a transaction's two allocations were a sixth of what a
	// reader cost a lone Put.
	landMu   sync.Mutex
	landGen  uint64
	landSeq  uint64
	landMark engine.CommitMark
	landWait chan struct{}

	// What the readers write, on cache lines of their own (pad): the
	// writer's commit writes the fields above, and a line both wrote
	// went back and forth between the cores at every commit.
	_ pad
	// pub is closed when a new window is published (or Wake is called):
	// the waiting readers but one (the leader, woken by the commit)
	// wait on it, so that a commit wakes one reader, which refreshes the
	// window, and then the others, which take their pages from it.
	// They are atomics, not under mu: the writer's commit hook wakes
	// them (WakeLeaderless) without waiting for a reader's lock.
	pub    atomic.Pointer[chan struct{}]
	leader atomic.Bool
	leads  atomic.Uint64 // leads ended (Unlead): the readers' rounds of wake-ups
	_      pad
}

// pad keeps what the readers write and what the writer writes on
// different cache lines (two: a core may fetch lines in pairs).
type pad [128]byte

// Land notes that the write transaction on db (it holds the write lock)
// recorded changes that will extend the window once it commits, and
// returns the landing, to end with EndLand once its Publish is done or it
// rolled back (0: none, when db has no commit mark). The transaction has
// held the write lock since its first write, so only its own commit moves
// the file's mark from the one Land reads. A reader that finds the file's
// mark one commit past the window's, and the window's mark the one the
// transaction began at, waits for that instead of reading the file: the
// commit is this transaction's, its changes are on their way (the commit
// hooks run as soon as the connection is released), and a refresh begun
// meanwhile would read them through SQL.
func (pc *PageCache) Land(db *engine.DB) uint64 {
	mark, ok := db.CommitMark()
	if !ok {
		return 0
	}
	pc.landMu.Lock()
	pc.landSeq++
	gen := pc.landSeq
	// A landing not ended yet (its hooks run after the next writer
	// began) is replaced: its readers look again.
	wait := pc.landWait
	pc.landGen, pc.landMark, pc.landWait = gen, mark, nil
	pc.landMu.Unlock()
	if wait != nil {
		close(wait)
	}
	return gen
}

// EndLand ends the landing gen (Land's), waking the readers that wait for
// it; a landing another has replaced is over already.
func (pc *PageCache) EndLand(gen uint64) {
	if gen == 0 {
		return
	}
	pc.landMu.Lock()
	if pc.landGen != gen {
		pc.landMu.Unlock()
		return
	}
	wait := pc.landWait
	pc.landGen, pc.landWait = 0, nil
	pc.landMu.Unlock()
	if wait != nil {
		close(wait)
	}
}

// landed waits, when the file's mark is the one commit after w's and
// this process's write transaction began at w's mark (see Land), for
// that transaction's landing to end (or to be replaced). It reports
// whether it waited.
func (pc *PageCache) landed(ctx context.Context, w *window, mark engine.CommitMark) (bool, error) {
	if w == nil || !mark.Follows(w.mark) {
		return false, nil
	}
	pc.landMu.Lock()
	if pc.landGen == 0 || pc.landMark != w.mark {
		pc.landMu.Unlock()
		return false, nil
	}
	if pc.landWait == nil {
		pc.landWait = make(chan struct{})
	}
	wait := pc.landWait
	pc.landMu.Unlock()
	select {
	case <-wait:
		return true, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// Join counts a reader of the window in and returns the function that
// counts it out (the first call; later ones do nothing). While no reader
// is counted, commits do not extend the window (Keeping is false: the
// writer copies nothing for it), and the last one out lets the window go.
func (pc *PageCache) Join() (leave func()) {
	pc.readers.Add(1)
	var left atomic.Bool
	return func() {
		if left.CompareAndSwap(false, true) && pc.readers.Add(-1) == 0 {
			pc.cur.Store(nil)
		}
	}
}

// Keeping reports whether a commit's changes extend the window: a
// reader exists and has made a window.
func (pc *PageCache) Keeping() bool {
	return pc.readers.Load() > 0 && pc.cur.Load() != nil
}

// Published returns a channel closed when the next window is published,
// or at Wake.
func (pc *PageCache) Published() <-chan struct{} {
	for {
		if p := pc.pub.Load(); p != nil {
			return *p
		}
		ch := make(chan struct{})
		if pc.pub.CompareAndSwap(nil, &ch) {
			return ch
		}
	}
}

// Wake closes the channel Published returned.
func (pc *PageCache) Wake() {
	if p := pc.pub.Swap(nil); p != nil {
		close(*p)
	}
}

// Fills returns the number of refreshes begun so far: a reader about to
// wait passes it plus one to Read as minFill once woken.
func (pc *PageCache) Fills() uint64 { return pc.fills.Load() }

// Lead makes the caller the waiting reader that commits wake, unless
// another is: it reports whether it is. The leader, woken, reads (which
// refreshes the window after a commit), then calls Unlead, which wakes
// the others; when its wait fails it calls Unlead at once, and one of
// the others leads.
func (pc *PageCache) Lead() bool {
	return pc.leader.CompareAndSwap(false, true)
}

// WakeLeaderless wakes the readers waiting on Published when no reader
// leads: a commit none of them will be woken for otherwise (the last
// leader may never read again). For Notifier.SetOrphan: the writer's
// commit hook, so it takes no lock the readers take.
func (pc *PageCache) WakeLeaderless() {
	if !pc.leader.Load() {
		pc.Wake()
	}
}

// Unlead ends the caller's lead (see Lead) and wakes the readers waiting
// on Published: they wait without looking at the file themselves, for
// the leader, so the end of every lead wakes them (one of them leads
// next), whether or not its read found something new; a leader whose
// caller stops calling Next leaves no reader waiting without a leader.
func (pc *PageCache) Unlead() {
	pc.leads.Add(1)
	pc.leader.Store(false)
	pc.Wake()
}

// Leads returns how many leads have ended (Unlead): each woke the
// waiting readers once.
func (pc *PageCache) Leads() uint64 { return pc.leads.Load() }

// window is one state of a PageCache.
type window struct {
	mark   engine.CommitMark // the file's mark before the read that filled it
	fill   uint64            // the refresh that filled it (PageCache.fills once begun)
	seen   uint64            // Notifier.Commits before the read that filled it
	noLog  bool              // the store had no change log at mark
	epoch  []byte
	oldest int64 // the log's oldest change (0: none)
	last   int64 // the log's last change (0: none)
	base   int64 // the window's first change (last+1 when it is empty)
	// chunks hold the changes base..last: change s is chunks[i][j] with
	// s-seq0 = i*chunkLen+j. A change is written once, into a slot past
	// the end of the window it extends (no reader of that one reads
	// there), and chunks' spare capacity takes the new chunks the same
	// way; so windows share their chunks, and a commit that extends the
	// window allocates nothing but the window. The window used to be one
	// slice whose growth copied it whole every thousand commits or so:
	// 428 bytes a commit, more than the commit's own changes.
	seq0   int64
	chunks []*chunk
	bytes  int // the keys' and values' bytes in base..last
}

// chunkLen is the number of changes in a chunk of a window: a reader
// that leaves a page of the window unread keeps one chunk (28 KB) in
// memory.
const chunkLen = 256

type chunk [chunkLen]Change

// at returns change s of the window (base <= s <= last, or the slot of
// last+1 when extending).
func (w *window) at(s int64) *Change {
	i := s - w.seq0
	return &w.chunks[i/chunkLen][i%chunkLen]
}

// run returns the window's changes from s on, up to the end of s's chunk
// or the window's last: contiguous, shared (never written).
func (w *window) run(s int64) []Change {
	i := s - w.seq0
	c, j := i/chunkLen, i%chunkLen
	end := min(int64(chunkLen), j+w.last-s+1)
	return w.chunks[c][j:end:end]
}

// CacheRead is what a read from the cache returns: OK false when the
// cache cannot serve it (the reader reads through SQL), else the window's
// changes from the reader's position up to the limit-th that passes the
// filter, and the sequence to read from next, with the store's epoch.
// Chs is the window's own slice, decoded once for every reader and never
// written (Share): it starts and ends with a change that passes the
// filter, may hold changes between that do not (the reader skips them),
// and its keys and values must be copied before they are handed out. End
// reports that the read went to the window's last change: a reader that
// took its wake-up channels before the read can wait on them once it has
// used Chs, without reading again.
type CacheRead struct {
	OK    bool
	End   bool
	Stale bool
	Seen  uint64
	Mark  engine.CommitMark
	Chs   []Change
	Next  int64
	Epoch []byte
}

// Read serves a reader at pos (pos.Epoch nil: any epoch) from the
// window: up to limit changes that pass f, refreshing the window first
// (once for all readers waiting) when something has committed since it
// was filled. A position of another epoch fails with ErrEpoch, one before
// the log's oldest change with a *CompactedError, both checked against
// the log as of now. open opens sealed values (Feeds.OpenValues); n is
// the store's Notifier, whose count of commits a window keeps.
//
// minFill (0: none) is Fills()+1 as a reader read it before it began to
// wait: a window whose refresh began then or later saw the file as of the
// wait's beginning or later, so it serves the reader without a look at
// the commit mark. While commits stream, the mark has moved again by the
// time the readers a refresh woke read, and they take their pages from the window
// that woke them instead of refreshing it again.
//
// cont is set for a reader that goes on with what it has not read yet,
// without having waited since its last read: a window that holds changes
// from its position serves them as it is, without a look at the mark,
// and what committed after the window reaches the reader with the next
// wake-up (Stale is set: its wait looks for what came after the window).
// Such readers used to find the mark moved by this process's commit on
// its way to the window and wait for it (landed): the writer's hook then
// readied them, one by one, for one commit in nine with 100 readers.
func (pc *PageCache) Read(ctx context.Context, db *engine.DB, n *Notifier, open func(context.Context, *engine.Conn, []Change) error, pos Position, m *Matcher, limit int, minFill uint64, cont bool) (CacheRead, error) {
	from := max(pos.Seq, 1)
	if w := pc.cur.Load(); w != nil && (minFill > 0 && w.fill >= minFill || cont && from >= w.base && from <= w.last) {
		cr, err := w.serve(pos.Epoch, from, m, limit)
		cr.Stale = true
		return cr, err
	}
	mark, ok := db.CommitMark()
	if !ok {
		// No window without a mark: the readers waiting for one are
		// woken (one of them leads), as a refresh would have.
		pc.Wake()
		return CacheRead{}, nil
	}
	for {
		w := pc.cur.Load()
		if w != nil && w.mark == mark {
			return w.serve(pos.Epoch, from, m, limit)
		}
		// This process's commit moved the mark: its changes come
		// without a read.
		if waited, err := pc.landed(ctx, w, mark); err != nil || !waited {
			if err != nil {
				return CacheRead{}, err
			}
			break
		}
		if mark, ok = db.CommitMark(); !ok {
			pc.Wake()
			return CacheRead{}, nil
		}
	}
	pc.mu.Lock()
	arrived := pc.fills.Load() // a refresh begun after this saw the file as of now or later
	for {
		if w := pc.cur.Load(); w != nil && w.mark == mark {
			pc.mu.Unlock()
			return w.serve(pos.Epoch, from, m, limit)
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
			if w := pc.cur.Load(); w != nil && w.fill > arrived {
				// The window's refresh began after this call did: it is
				// as new as the file was when the call began. (Not the
				// count of refreshes begun: another may have begun since
				// the one that ended, and the window is still the older.)
				pc.mu.Unlock()
				return w.serve(pos.Epoch, from, m, limit)
			}
			if mark, ok = db.CommitMark(); !ok {
				pc.Wake()
				pc.mu.Unlock()
				return CacheRead{}, nil
			}
			continue
		}
		fill := pc.fills.Add(1)
		done := make(chan struct{})
		pc.filling = done
		prev := pc.cur.Load()
		pc.mu.Unlock()
		w, err := refresh(ctx, db, n, open, prev, from)
		pc.mu.Lock()
		w = pc.refreshed(w, fill)
		close(done)
		pc.mu.Unlock()
		if err != nil {
			// The reader reads its own page, which reports the error if
			// its page has it.
			return CacheRead{}, nil
		}
		return w.serve(pos.Epoch, from, m, limit)
	}
}

// serve answers a read from the window: the part of it from from up to
// the limit-th change m passes, shared (see CacheRead).
func (w *window) serve(epoch []byte, from int64, m *Matcher, limit int) (CacheRead, error) {
	if w.noLog || from < w.base {
		return CacheRead{}, nil
	}
	if epoch != nil && !bytes.Equal(epoch, w.epoch) {
		return CacheRead{}, fmt.Errorf("changelog: position %d: %w", from, ErrEpoch)
	}
	if w.oldest > 1 && from < w.oldest {
		return CacheRead{}, &CompactedError{From: from, Oldest: w.oldest}
	}
	out := CacheRead{OK: true, End: true, Seen: w.seen, Mark: w.mark, Next: max(from, w.last+1), Epoch: w.epoch}
	if from > w.last {
		return out, nil
	}
	// One chunk's run at a time: the reader reads again for the rest
	// (End is false then), without a lock.
	win := w.run(from)
	runLast := win[len(win)-1].Seq
	out.Next, out.End = runLast+1, runLast == w.last
	if m.all {
		if len(win) > limit {
			win = win[:limit]
			out.Next = win[limit-1].Seq + 1
			out.End = false
		}
		out.Chs = win
		return out, nil
	}
	first, last, n := -1, -1, 0
	for i := range win {
		if !m.Match(&win[i]) {
			continue
		}
		if first < 0 {
			first = i
		}
		last = i
		if n++; n == limit {
			out.Next = win[i].Seq + 1
			out.End = out.Next > w.last
			break
		}
	}
	if first >= 0 {
		out.Chs = win[first : last+1]
	}
	return out, nil
}

// refresh reads, in one read transaction, the epoch, the log's bounds and
// the changes after prev's last, and returns the window they make, tagged
// with the commit mark read before. from is the refreshing reader's
// position: a new window starts there when it is within the last
// PageCacheChanges changes (else at the head, empty), so that a refresh
// reads no more than the readers need.
func refresh(ctx context.Context, db *engine.DB, n *Notifier, open func(context.Context, *engine.Conn, []Change) error, prev *window, from int64) (*window, error) {
	seen := n.Commits()
	mark, ok := db.CommitMark()
	if !ok {
		return nil, errors.New("changelog: no commit mark")
	}
	c, err := db.AcquireSnapshot(ctx, engine.ReadPinned)
	if err != nil {
		return nil, err
	}
	defer db.ReleaseSnapshot(c)
	dest := make([]driver.Value, 3)
	if err := c.QueryRow(ctx, headSQL, dest); err != nil {
		if !engine.NoSuchTable(err) {
			return nil, fmt.Errorf("changelog: read: %w", err)
		}
		return &window{mark: mark, seen: seen, noLog: true}, nil
	}
	ep, ok := dest[0].([]byte)
	if !ok || len(ep) != EpochLen {
		return nil, fmt.Errorf("changelog: header row: %w", engine.ErrCorrupt)
	}
	oldest, _ := dest[1].(int64)
	last, _ := dest[2].(int64)

	same := prev != nil && !prev.noLog && bytes.Equal(ep, prev.epoch)
	if same {
		ep = prev.epoch
	}
	keep := same
	start := int64(0)
	if keep {
		start = prev.last + 1
	}
	if !keep || start < oldest || last-start+1 > PageCacheChanges {
		// A new window, from the reader's position if it is within the
		// last PageCacheChanges changes; else empty, at the head: a
		// reader of a backlog reads its pages through SQL, with its
		// filter in the query, and reads nothing more for the window.
		keep = false
		start = last + 1
		if from >= max(last-PageCacheChanges+1, oldest, 1) {
			start = min(from, last+1)
		}
	}
	var chs []Change
	if start <= last {
		if chs, err = Read(ctx, c, start, int(last-start+1)); err != nil {
			return nil, err
		}
		if len(chs) > 0 && chs[len(chs)-1].Seq > last {
			return nil, errors.New("changelog: read outside its read transaction")
		}
		if err := open(ctx, c, chs); err != nil {
			return nil, err
		}
	}
	w := &window{mark: mark, seen: seen, epoch: ep, oldest: oldest, last: start - 1, base: start, seq0: start}
	if keep {
		w.chunks, w.seq0, w.bytes, w.base = prev.chunks, prev.seq0, prev.bytes, prev.base
	}
	for i := range chs {
		w.bytes += len(chs[i].Key) + len(chs[i].Value)
	}
	if !w.extend(chs) || w.last != last {
		return nil, errors.New("changelog: the window's read is not the log's changes one after another")
	}
	return w, nil
}

// extend writes chs, the changes after w.last, into the slots after it
// (past the end of the window w was made from: no reader of that one reads
// there), adding chunks as they fill, then drops the oldest changes beyond
// the window's bounds, and the chunks they leave empty. It reports false,
// having written nothing, when chs do not follow w.last one after another.
func (w *window) extend(chs []Change) bool {
	for i := range chs {
		if chs[i].Seq != w.last+1+int64(i) {
			return false
		}
	}
	for i := range chs {
		s := w.last + 1
		if int((s-w.seq0)/chunkLen) == len(w.chunks) {
			w.chunks = append(w.chunks, new(chunk))
		}
		*w.at(s) = chs[i]
		w.last = s
	}
	for w.base <= w.last && (w.last-w.base+1 > PageCacheChanges || w.bytes > PageCacheBytes) {
		c := w.at(w.base)
		w.bytes -= len(c.Key) + len(c.Value)
		w.base++
	}
	if w.base > w.last {
		// Empty: the next change starts a chunk of its own.
		w.chunks, w.seq0 = nil, w.base
		return true
	}
	if drop := (w.base - w.seq0) / chunkLen; drop > 0 {
		w.chunks, w.seq0 = w.chunks[drop:], w.seq0+drop*chunkLen
	}
	return true
}

// Publish extends the window with chs, the changes (values opened) of a
// transaction of this process that has just committed, size the bytes of
// their keys and values, without a read of the file: when nothing else
// has committed between the window's state and this commit. The proof is
// the file's commit mark, read now: it is the one commit after the
// window's (engine.CommitMark.Follows), so no other transaction, of this
// process or another, committed since the window's mark; and chs starts
// right after the window's last change, so the window held every change
// up to this transaction's. Otherwise it does nothing and reports false:
// the readers refresh the window through SQL as before. While a refresh
// is under way, the changes are queued (a copy of chs) and extend the
// window the refresh makes, with the same proof, once it ends (it reports
// false then too). The readers are woken by the leader once it has
// read (Unlead), not here: the readers of a stream of commits still wake
// once per refresh interval (Notifier.Hold).
func (pc *PageCache) Publish(db *engine.DB, n *Notifier, chs []Change, size int) bool {
	if len(chs) == 0 {
		return false
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	w := pc.cur.Load()
	if w == nil || w.noLog {
		return false
	}
	// Counted before the mark is read: those commits are in the file
	// as of the mark (this one's Notify comes after).
	seen := n.Commits()
	mark, ok := db.CommitMark()
	if !ok {
		return false
	}
	p := published{mark: mark, seen: seen, chs: chs, size: size}
	if pc.filling != nil {
		// The window the refresh makes is extended with it (refreshed),
		// if it follows: keep a copy of the changes (chs is the
		// writer's, reused; their keys and values are the window's).
		if pc.qover || pc.queuedN+len(chs) > PageCacheChanges || pc.queuedB+size > PageCacheBytes {
			pc.dropQueue(true)
			return false
		}
		p.chs = append([]Change(nil), chs...)
		pc.queue = append(pc.queue, p)
		pc.queuedN += len(chs)
		pc.queuedB += size
		return false
	}
	nw := w.next(p, pc.fills.Add(1))
	if nw == nil {
		return false
	}
	pc.cur.Store(nw)
	pc.published.Add(1)
	return true
}

// published is one commit's changes handed to Publish: the file's commit
// mark and the Notifier's count (before its own Notify) read once it had
// committed.
type published struct {
	mark engine.CommitMark
	seen uint64
	chs  []Change
	size int
}

// next returns w extended with p's changes, filled by refresh fill, or
// nil when p is not the one commit after w's state: p's mark the one
// after w's (engine.CommitMark.Follows), so no other transaction, of this
// process or another, committed between them, and p's changes right after
// w's last (had p committed before w's mark was read, w would hold them).
func (w *window) next(p published, fill uint64) *window {
	if !p.mark.Follows(w.mark) || p.chs[0].Seq != w.last+1 {
		return nil
	}
	nw := &window{mark: p.mark, fill: fill, seen: max(w.seen, p.seen), epoch: w.epoch,
		oldest: w.oldest, last: w.last, base: w.base, seq0: w.seq0, chunks: w.chunks, bytes: w.bytes + p.size}
	if nw.oldest == 0 {
		nw.oldest = p.chs[0].Seq
	}
	if !nw.extend(p.chs) {
		return nil
	}
	return nw
}

// refreshed ends the refresh fill, which made w (nil on an error), under
// mu: w extended with the commits queued meanwhile (those that follow it,
// in order), published, and the readers waiting for it woken. It returns
// the window published.
func (pc *PageCache) refreshed(w *window, fill uint64) *window {
	pc.filling = nil
	pc.refreshes.Add(1)
	if w != nil {
		w.fill = fill
		// The queued commits' marks were read after the refresh began:
		// the windows they make are as new as one it would have made.
		for _, p := range pc.queue {
			if w.noLog {
				break
			}
			if p.chs[len(p.chs)-1].Seq <= w.last {
				// Committed before the refresh's read began (its hook
				// came once the refresh had begun): the window holds it
				// already. Its mark tells nothing of the window's.
				continue
			}
			nw := w.next(p, fill)
			if nw == nil {
				break
			}
			w = nw
			pc.published.Add(1)
		}
	}
	pc.dropQueue(false)
	pc.cur.Store(w) // nil on an error
	pc.Wake()
	return w
}

// dropQueue empties the queue (under mu); over: no more is queued until
// the refresh under way ends.
func (pc *PageCache) dropQueue(over bool) {
	clear(pc.queue)
	pc.queue, pc.queuedN, pc.queuedB, pc.qover = pc.queue[:0], 0, 0, over
}

// Latest returns the window's changes (shared: never to be written) and
// the log's last sequence as the window holds it; ok is false when there
// is no window or no log.
func (pc *PageCache) Latest() (chs []Change, last int64, ok bool) {
	w := pc.cur.Load()
	if w == nil || w.noLog {
		return nil, 0, false
	}
	chs = make([]Change, 0, w.last-w.base+1)
	for s := w.base; s <= w.last; s = chs[len(chs)-1].Seq + 1 {
		chs = append(chs, w.run(s)...)
	}
	return chs, w.last, true
}

// Publications returns how many times a commit extended the window
// without a read (Publish, at once or after the refresh it came during).
func (pc *PageCache) Publications() uint64 { return pc.published.Load() }

// Refreshes returns how many times the window was read through SQL.
func (pc *PageCache) Refreshes() uint64 { return pc.refreshes.Load() }

// Matcher is a Filter made ready to match changes in memory (Match), as
// the filtered read's SQL does: the end of its prefix worked out once.
type Matcher struct {
	f        Filter
	pfx, end []byte
	all      bool // the zero Filter: every change passes
}

// Matcher returns f ready to match (f's prefix is not copied: it must
// not change while the Matcher is used).
func (f Filter) Matcher() *Matcher {
	m := &Matcher{f: f, all: f.CF == "" && len(f.Prefix) == 0}
	if len(f.Prefix) > 0 {
		m.pfx, m.end = f.Prefix, scan.PrefixEnd(f.Prefix)
	}
	return m
}

// Match reports whether the filter selects c.
func (m *Matcher) Match(c *Change) bool {
	return m.all || m.f.Match(c, m.pfx, m.end)
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
