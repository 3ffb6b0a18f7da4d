package engine

import "sync"

// Runs of commits: one pass after the last.
//
// Some calls commit many transactions back to back on their own: the
// batched purge (256 keys a transaction, so that other writers wait at
// most one batch), and later perhaps a chunked DeleteRange or a
// conversion. Under the rules of checkpoint.go such a run has its WAL
// chased all along: its first commits wake a pass that copies frames the
// next batches rewrite, a pass that leaves a tail has a commit copy it
// (catchUp), and once the WAL is 7/4 of its size at the wake-up the next
// batch copies the rest before it begins (settle, with a sync of both
// files). On issue #34's purge (100,000 expired keys of 200,000, batches
// of 256, each batch rewriting about 500 scattered leaves) a fifth of the
// purge's CPU was that settle, and with automatic checkpoints off the
// same purge ran 2.3-2.4 times as fast.
//
// HoldCheckpoints opens a run: until its release function is called, the
// writer's commits wake no pass and copy nothing themselves (no catchUp,
// no settle), and a pass already woken waits, before it starts, for the
// run to end. Commits are as visible and as durable as ever (the WAL
// holds them; readers of this process and of others see each at once):
// only the copy into the database file is put off. Two things still end
// the wait:
//
//   - the WAL's size: once a commit of the run leaves the WAL holdBound
//     thresholds past its size when the run began (or since the WAL last
//     restarted), the writer copies the WAL before its next transaction
//     (settle), which lets that transaction restart it; the run then goes
//     on holding. A run's WAL thus stays below its starting size plus
//     holdBound thresholds plus one commit.
//   - the run's end: the release wakes one pass (when the WAL is at or
//     past the threshold), which waits for the writer to pause as a pass
//     woken by a large commit does, and copies each page the run rewrote
//     once, with one sync of each file.
//
// Runs may overlap (two purges of different column families at once): the
// hold lasts until the last one ends. It is the store's, not the caller's:
// commits of other goroutines during a run are held back with the run's
// (the bound covers them too). A run opened on a store without a
// checkpointer costs nothing.
//
// holdBound is 32: a WAL of 32,000 frames (125 MiB with 4 KiB pages) past
// the default threshold of 1,000. It bounds the disk a run uses, and the
// WAL-index segments a reader looks a page up in (4,096 frames each), while
// letting each copy gain from the run rewriting the same pages: the purge
// above writes about 555 frames a batch (205,000 for its 390 batches) over
// a database of 11,600 pages, and each copy writes each page it finds once
// and syncs both files. Measured on that purge (BenchmarkTTLPurgeHarness,
// CPU per key, the three alternated with the database/sql batches, medians
// of 3): a bound of 16 thresholds ran at 1.37 times the CPU rate of the
// SQL batches, 32 at 1.65, 64 at 1.84; with automatic checkpoints off
// (a WAL of 217,000 frames, whose index every read of a page searches)
// single runs spread from 1.3 to 1.6. 32 is the smallest bound that keeps
// the purge 1.5 times ahead in CPU as well as in time.
const holdBound = 32

// runHold is the state of the runs of one checkpointer.
type runHold struct {
	mu    sync.Mutex
	runs  int           // open runs; guarded by mu
	ended chan struct{} // closed when the last open run ends; guarded by mu
}

// HoldCheckpoints opens a run of commits (see above) and returns the
// function that ends it; it must be called once. The caller need not hold
// the writer.
func (db *DB) HoldCheckpoints() (release func()) {
	k := db.ckpt
	if k == nil {
		return func() {}
	}
	h := &k.hold
	h.mu.Lock()
	if h.runs == 0 {
		h.ended = make(chan struct{})
		k.holdBase.Store(k.frames.Load())
	}
	h.runs++
	k.holding.Store(true)
	h.mu.Unlock()
	var once sync.Once
	return func() { once.Do(k.endRun) }
}

// endRun ends one run; the last one wakes a pass if the WAL needs one.
func (k *checkpointer) endRun() {
	h := &k.hold
	h.mu.Lock()
	h.runs--
	last := h.runs == 0
	if last {
		k.holding.Store(false)
		close(h.ended)
	}
	h.mu.Unlock()
	if !last || k.db.closed.Load() || !k.heldBack.Swap(false) {
		return
	}
	if k.frames.Load() < k.threshold || !k.passing.CompareAndSwap(false, true) {
		return // a pass already woken goes on now (waitRun)
	}
	k.wokeBig.Store(true) // the run was a large transaction: wait for a pause
	k.wake()
}

// held reports whether a run holds the writer's copies back at a WAL of
// frames frames: a run is open and the WAL is below its bound.
func (k *checkpointer) held(frames int64) bool {
	return k.holding.Load() && frames < k.holdBase.Load()+holdBound*k.threshold
}

// waitRun waits, before a pass, for the open runs to end (or for the WAL
// to pass its bound, when the writer copies it itself: the pass then
// waits for the run's end all the same). It reports false if the DB is
// closing.
func (k *checkpointer) waitRun() bool {
	for {
		h := &k.hold
		h.mu.Lock()
		ended := h.ended
		open := h.runs > 0
		h.mu.Unlock()
		if !open {
			return true
		}
		select {
		case <-ended:
		case <-k.db.closing:
			return false
		}
	}
}
