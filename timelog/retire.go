package timelog

import (
	"math"
	"sync"
	"sync/atomic"
)

// Retirement: pin -> retire -> release, by epochs.
//
// Every commit that physically removes records bumps the log's epoch (a
// durable counter) and, from its commit hook, queues the removed records
// with that epoch. The hook only queues; delivery happens later, from
// deliver, which runs with no lock of the log held. A snapshot records the
// epoch its transaction saw: it can still return a record dropped at epoch
// E only if its own epoch is below E. So a dropped handle is released once
// every open snapshot has an epoch >= E: one old snapshot holds back only
// what it can see.

type retired struct {
	h     uint64
	epoch uint64
}

type retirer struct {
	onDrop    func(Record)
	onRelease func(uint64)
	limit     int

	mu         sync.Mutex
	drops      []Record       // waiting for OnDrop
	pending    []retired      // waiting for OnRelease, sorted by epoch
	open       map[uint64]int // epoch -> open snapshots
	nopen      int
	delivering bool

	dropped, released atomic.Int64
}

func newRetirer(c config) *retirer {
	return &retirer{onDrop: c.OnDrop, onRelease: c.OnRelease, limit: c.ReleaseDrainLimit, open: map[uint64]int{}}
}

// queue records that a commit with the given epoch dropped recs. It is
// called from the commit hook and only queues.
func (r *retirer) queue(recs []rec, epoch uint64) {
	if len(recs) == 0 {
		return
	}
	r.dropped.Add(int64(len(recs)))
	if r.onDrop == nil && r.onRelease == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range recs {
		if r.onDrop != nil {
			r.drops = append(r.drops, Record{Ts: x.ts, Handle: x.h})
		}
		if r.onRelease != nil {
			r.pending = append(r.pending, retired{h: x.h, epoch: epoch})
		}
	}
	// Commits that drop are serialized, so epochs arrive in order; keep the
	// queue sorted should a hook ever run late.
	if i := len(r.pending) - len(recs); r.onRelease != nil && i > 0 && r.pending[i-1].epoch > r.pending[i].epoch {
		insertionSort(r.pending)
	}
}

func insertionSort(p []retired) {
	for i := 1; i < len(p); i++ {
		for j := i; j > 0 && p[j-1].epoch > p[j].epoch; j-- {
			p[j-1], p[j] = p[j], p[j-1]
		}
	}
}

// pin registers an open snapshot that saw epoch.
func (r *retirer) pin(epoch uint64) {
	r.mu.Lock()
	r.open[epoch]++
	r.nopen++
	r.mu.Unlock()
}

// unpin forgets a closed snapshot.
func (r *retirer) unpin(epoch uint64) {
	r.mu.Lock()
	if r.open[epoch]--; r.open[epoch] == 0 {
		delete(r.open, epoch)
	}
	r.nopen--
	r.mu.Unlock()
}

func (r *retirer) openSnapshots() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.nopen
}

func (r *retirer) minOpen() uint64 {
	m := uint64(math.MaxUint64)
	for e := range r.open {
		m = min(m, e)
	}
	return m
}

// deliver runs the queued OnDrop calls, then the OnRelease calls that are
// due (at most limit of them, 0 meaning all). Only one goroutine delivers
// at a time; a call made meanwhile (a callback calling back into the log
// included) returns at once and leaves the work to it.
func (r *retirer) deliver(limit int) {
	r.mu.Lock()
	if r.delivering {
		r.mu.Unlock()
		return
	}
	r.delivering = true
	releasedNow := 0
	for {
		if len(r.drops) > 0 {
			batch := r.drops
			r.drops = nil
			r.mu.Unlock()
			for _, d := range batch {
				r.onDrop(d)
			}
			r.mu.Lock()
			continue
		}
		if len(r.pending) == 0 || (limit > 0 && releasedNow >= limit) {
			break
		}
		floor := r.minOpen()
		n := 0
		for n < len(r.pending) && r.pending[n].epoch <= floor && (limit == 0 || releasedNow+n < limit) {
			n++
		}
		if n == 0 {
			break
		}
		batch := make([]retired, n)
		copy(batch, r.pending)
		r.pending = r.pending[:copy(r.pending, r.pending[n:])]
		releasedNow += n
		r.mu.Unlock()
		for _, x := range batch {
			r.onRelease(x.h)
			r.released.Add(1)
		}
		r.mu.Lock()
	}
	r.delivering = false
	r.mu.Unlock()
}

func (r *retirer) pendingCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}
