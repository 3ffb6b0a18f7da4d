package changefeed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/snkv-go/snkv/internal/changelog"
	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
)

// ReaderOptions configure a Reader. The zero value reads every change in
// pages of 1,024 and looks for other processes' commits every 2 ms.
type ReaderOptions struct {
	Filter Filter
	// Batch is the most changes read in one read transaction (0: 1,024).
	Batch int
	// Poll is how often a waiting reader looks for another process's
	// commit (0: 2 ms), doubling while nothing commits up to 4×Poll; a
	// commit in this process wakes it at once. After such a series
	// without a commit, a reader on a local file on Linux watches the WAL
	// instead (a write of it starts a new series) and looks only every
	// 100×Poll; elsewhere it keeps looking every 4×Poll. Of the readers
	// of one store handle that wait, one looks (with its own Poll) and
	// wakes the others when it finds a commit.
	Poll time.Duration
}

// Reader reads a store's feed from a position, in order, and tails it. It
// is for one goroutine.
type Reader struct {
	db   *engine.DB
	fs   *changelog.Feeds
	opts ReaderOptions
	pos  changelog.Position
	m    *changelog.Matcher // opts.Filter's
	// buf is the next changes: a part of the shared window's slice
	// (shared: decoded once for every reader and never written; changes
	// the filter skips may be among them, and Next copies the keys and
	// values it hands out into arena), or a page read through SQL (the
	// reader's own). It is not copied: 100 readers copying each page
	// wrote 13.6 KB a commit between them. A shared page is a run within
	// one of the window's chunks, so a reader that leaves it unread keeps
	// that chunk (256 changes, 28 KB) and their keys and values in memory
	// until it reads on or is dropped.
	buf    []changelog.Change
	shared bool
	arena  []byte
	// at is the time of the last change handed out, atMs its
	// milliseconds.
	atMs int64
	at   time.Time
	// bufNext is where the read that filled buf ends: the position once
	// buf is consumed.
	bufNext int64
	// What the last read saw, for the wait after it: pub, taken before
	// the read, closes when a window is published after it; seen counts
	// the commits of this process whose changes the read covers
	// (changelog.Notifier.Commits); mark is the file's commit mark as the
	// read saw it. atEnd: the read went to the end of what it saw, so
	// once buf is used the reader waits without reading again.
	pub    <-chan struct{}
	seen   uint64
	mark   engine.CommitMark
	markOK bool
	atEnd  bool
	waiter changelog.Waiter
	closed atomic.Bool
	// leave counts the reader out of the shared window's readers
	// (PageCache.Join), at Close or, for a Reader dropped without Close,
	// when it is collected (cleanup).
	leave   func()
	cleanup runtime.Cleanup
	// ends wakes the waiting readers when the context of a wait ends
	// (see readerEnds).
	ends *readerEnds
}

// readerEnds has the readers of a store woken (PageCache.Wake) when the
// context a Reader waits with ends, so that a reader waits on the shared
// channel alone: a select on it and the context's channel, which 100
// readers share, cost each wake-up about 70 ns more, on a channel lock
// every reader took twice a round. The watch (context.AfterFunc) is set
// up once per context's channel, and stopped at Close, or when the
// Reader is dropped (its cleanup).
type readerEnds struct {
	done <-chan struct{} // the channel watched; only the reader's goroutine uses it
	mu   sync.Mutex
	stop func() bool
	over bool // stopped for good
}

// watch watches ctx, whose Done is done (not nil), unless it is watched:
// its end wakes pc's waiting readers.
func (e *readerEnds) watch(ctx context.Context, done <-chan struct{}, pc *changelog.PageCache) {
	if done == e.done {
		return
	}
	e.done = done
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stop != nil {
		e.stop()
		e.stop = nil
	}
	if !e.over {
		e.stop = context.AfterFunc(ctx, pc.Wake)
	}
}

// end stops the watch for good.
func (e *readerEnds) end() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stop != nil {
		e.stop()
		e.stop = nil
	}
	e.over = true
}

// NewReader returns a Reader of store's feed from position from (Now for
// "what commits from now on", the zero Position for the oldest change
// held).
func NewReader(ctx context.Context, store *kvstore.Store, from Position, opts ReaderOptions) (*Reader, error) {
	if err := checkCtx(ctx); err != nil {
		return nil, wrap("reader", err)
	}
	if opts.Batch < 0 || opts.Poll < 0 || from.Seq < 0 {
		return nil, wrap("reader", fmt.Errorf("%w: negative option or sequence", ErrInvalidArgument))
	}
	if opts.Batch == 0 {
		opts.Batch = 1024
	}
	db, fs, err := layer.Engine(ctx, store)
	if err != nil {
		return nil, wrap("reader", err)
	}
	// A commit while no reader leads wakes those waiting for a refresh.
	fs.Notify.SetOrphan(fs.Pages.WakeLeaderless)
	r := &Reader{db: db, fs: fs, opts: opts, pos: changelog.Position(from), m: changelog.Filter(opts.Filter).Matcher()}
	r.leave, r.ends = fs.Pages.Join(), new(readerEnds)
	type drop struct {
		leave func()
		ends  *readerEnds
	}
	r.cleanup = runtime.AddCleanup(r, func(d drop) { d.leave(); d.ends.end() }, drop{r.leave, r.ends})
	return r, nil
}

// Position returns where the Reader goes on from: after the last change
// Next returned and every change its filter skipped since, so that a
// reader of a quiet prefix moves past trimmed history too. Save it (a
// named consumer's Commit) once the change before it is processed.
func (r *Reader) Position() Position {
	return Position{Epoch: r.pos.Epoch, Seq: r.pos.Seq}
}

// Close ends the Reader; a later Next fails with ErrClosed.
func (r *Reader) Close() error {
	if r.closed.CompareAndSwap(false, true) {
		r.cleanup.Stop()
		r.leave()
		r.ends.end()
	}
	return nil
}

// Next returns the next change that passes the filter, waiting for a
// commit when there is none, until ctx ends (ctx's error). A change
// committed in this process wakes it at once (while commits stream, the
// readers of the process are woken once per 200 µs for all of them); one
// of another process within the poll interval.
func (r *Reader) Next(ctx context.Context) (Change, error) {
	var ch Change
	err := r.next(ctx, &ch)
	return ch, err
}

// next is Next, filling *ch in place: a Change is 136 bytes, and a copy
// through a returned value costs more than the rest of a delivery.
func (r *Reader) next(ctx context.Context, ch *Change) error {
	if err := checkCtx(ctx); err != nil {
		return wrap("next", err)
	}
	var minFill uint64
	// leading: this reader was woken as the leader and keeps the lead
	// through its read, so that the readers that come to wait meanwhile
	// wait for the refresh it makes.
	leading := false
	for {
		for len(r.buf) == 0 {
			if r.closed.Load() {
				if leading {
					r.fs.Pages.Unlead()
				}
				return wrap("next", ErrClosed)
			}
			if !r.atEnd {
				// A reader that has not waited since its last read (and
				// is not the leader, which must read as of now) goes on
				// with the window as it is.
				n, err := r.fill(ctx, minFill, minFill == 0 && !leading)
				if leading {
					r.fs.Pages.Unlead()
					leading = false
				}
				if err != nil {
					return wrap("next", err)
				}
				if len(r.buf) > 0 || (n > 0 && !r.atEnd) {
					continue
				}
			}
			// Nothing more as of the last read, whose wake-ups were taken
			// before it: a commit or a window since has closed them.
			r.atEnd = false
			// A window whose refresh begins from now on saw the file as of
			// now or later: it serves this reader after the wait.
			minFill = r.fs.Pages.Fills() + 1
			// One waiting reader (the leader) is woken by the commit, or
			// polls the commit mark for other processes' commits; its next
			// read refreshes the shared window (or finds it extended by
			// the commit), and the end of its lead wakes the others. They
			// wait for that alone, without a timer: a lead always ends
			// with a wake-up (Unlead), and a reader that is not woken as
			// a leader waits only while another leads.
			var err error
			if r.fs.Pages.Lead() {
				// The leader reads as of now once woken: when something
				// has committed since the window, it refreshes it, which
				// wakes the others (a window another reader published
				// meanwhile may not hold the commit that woke it).
				minFill = 0
				wake := r.fs.Notify.ChangedSince(r.seen)
				err = r.waiter.Wait(ctx, r.db, wake, r.mark, r.markOK, r.opts.Poll)
				if err == nil {
					// Commits that stream are gathered into one refresh
					// per interval (changelog.WakeInterval).
					r.fs.Notify.Hold(r.seen)
					leading = true
				} else {
					r.fs.Pages.Unlead()
				}
			} else if done := ctx.Done(); done == nil {
				<-r.pub
			} else {
				// A context that ended before its watch was set up is
				// seen here; one that ends later has the watch close
				// pub (or a later channel, once pub is closed).
				r.ends.watch(ctx, done, &r.fs.Pages)
				if err = ctx.Err(); err == nil {
					<-r.pub
					err = ctx.Err()
				}
			}
			if err != nil {
				return wrap("next", err)
			}
		}
		c := &r.buf[0]
		r.buf = r.buf[1:]
		r.pos.Seq = c.Seq + 1
		if len(r.buf) == 0 {
			r.pos.Seq = r.bufNext
		}
		if r.shared && !r.m.Match(c) {
			continue
		}
		r.give(c, ch)
		return nil
	}
}

// arenaSize is the size of the blocks a Reader copies the keys and values
// it hands out into from the shared window.
const arenaSize = 4096

// give sets ch to c as the caller's Change: its key and value copied, when
// c is the shared window's, into the reader's current block (a caller may
// keep or change them; they share a block with other changes' bytes, never
// with another reader's).
func (r *Reader) give(c *changelog.Change, ch *Change) {
	if c.AtMs != r.atMs || r.at.IsZero() {
		// A transaction's changes share their time.
		r.atMs, r.at = c.AtMs, time.UnixMilli(c.AtMs)
	}
	toChange(c, r.at, ch)
	if r.shared {
		ch.Key, ch.Value = r.clone(c.Key), r.clone(c.Value)
	}
}

func (r *Reader) clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	if r.arena == nil || cap(r.arena)-len(r.arena) < len(b) {
		r.arena = make([]byte, 0, max(arenaSize, len(b)))
	}
	n := len(r.arena)
	r.arena = append(r.arena, b...)
	return r.arena[n:len(r.arena):len(r.arena)]
}

// Read returns up to the next Batch changes that pass the filter without
// waiting (none when the reader is at the end), and moves past them. Near
// the head of the feed it may return fewer than are there (a page of the
// latest changes, which the process's readers share, holds at most 256).
func (r *Reader) Read(ctx context.Context) ([]Change, error) {
	if err := checkCtx(ctx); err != nil {
		return nil, wrap("read", err)
	}
	if r.closed.Load() {
		return nil, wrap("read", ErrClosed)
	}
	// A page of the shared window ends with its chunk: one the filter
	// skips whole is passed over, so that an empty result still means
	// the end.
	for len(r.buf) == 0 {
		n, err := r.fill(ctx, 0, false)
		if err != nil {
			return nil, wrap("read", err)
		}
		if len(r.buf) > 0 || n == 0 || r.atEnd {
			break
		}
	}
	out := make([]Change, 0, len(r.buf))
	for i := range r.buf {
		if c := &r.buf[i]; !r.shared || r.m.Match(c) {
			out = append(out, Change{})
			r.give(c, &out[len(out)-1])
		}
	}
	r.buf = nil
	r.pos.Seq = r.bufNext
	return out, nil
}

// fill reads the next page in one read transaction: the epoch checked
// (adopted when the position has none), then the changes. It reports how
// far the position moved. minFill and cont are PageCache.Read's.
func (r *Reader) fill(ctx context.Context, minFill uint64, cont bool) (int64, error) {
	var chs []changelog.Change
	from := r.pos.Seq
	if from < 1 {
		from = 1
	}
	// Before the read: a window published after it closes pub, and
	// what the read sees includes every commit counted now.
	r.pub = r.fs.Pages.Published()
	r.seen = r.fs.Notify.Commits()
	r.atEnd = false
	// The readers of this process share the latest changes: after a
	// commit one of them reads them through SQL, the others copy them.
	cr, err := r.fs.Pages.Read(ctx, r.db, &r.fs.Notify, r.fs.OpenValues, changelog.Position{Epoch: r.pos.Epoch, Seq: from}, r.m, r.opts.Batch, minFill, cont)
	if err != nil {
		return 0, err
	}
	if cr.OK {
		r.atEnd = cr.End
		// The wait looks for what came after the window (its mark was
		// read before the read that filled it; no look at the file's
		// here, a line the writer writes at every commit).
		r.mark, r.markOK = cr.Mark, true
		if cr.Stale {
			// A window older than the read's beginning.
			r.seen = cr.Seen
		} else {
			r.seen = max(r.seen, cr.Seen)
		}
		if r.pos.Epoch == nil {
			r.pos.Epoch = bytes.Clone(cr.Epoch)
		}
		r.buf, r.bufNext, r.shared = cr.Chs, cr.Next, true
		if len(cr.Chs) == 0 {
			r.pos.Seq = cr.Next
		}
		return cr.Next - from, nil
	}
	next := from
	// The wait looks for what came after the file's state as of now.
	r.mark, r.markOK = r.db.CommitMark()
	// A snapshot, not a bare reader: it maps the WAL index whose header
	// Next's wait reads (engine.DB.CommitMark), and a held read transaction
	// nothing has committed after is reused.
	c, err := r.db.AcquireSnapshot(ctx, engine.ReadPinned)
	if err != nil {
		return 0, err
	}
	err = func() error {
		pos := changelog.Position{Epoch: r.pos.Epoch, Seq: from}
		chs, next, err = changelog.ReadPage(ctx, c, &pos, changelog.Filter(r.opts.Filter), r.opts.Batch)
		switch {
		case errors.Is(err, engine.ErrNotFound):
			if r.pos.Epoch != nil {
				return ErrEpoch // the feed was there when the position was taken
			}
			return nil // no feed yet: nothing to read
		case err != nil:
			return err
		}
		r.pos.Epoch = pos.Epoch
		return r.fs.OpenValues(ctx, c, chs)
	}()
	r.db.ReleaseSnapshot(c)
	if err != nil {
		return 0, err
	}
	r.buf, r.bufNext, r.shared = chs, next, false
	moved := next - from
	if len(chs) == 0 {
		r.pos.Seq = next
	}
	return moved, nil
}
