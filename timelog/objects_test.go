package timelog_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/timelog"
)

type payload struct {
	H    uint64 `json:"h"`
	Name string `json:"name"`
	Pad  []byte `json:"pad"`
}

func TestObjectsCodecs(t *testing.T) {
	db, _ := openStore(t)
	s, err := timelog.OpenObjects(context.Background(), db, "s", manual(timelog.Options{}), timelog.ObjectOptions[string]{})
	require.NoError(t, err)
	defer s.Close()
	b, err := timelog.OpenObjects(context.Background(), db, "b", manual(timelog.Options{}), timelog.ObjectOptions[[]byte]{CacheEntries: -1})
	require.NoError(t, err)
	defer b.Close()
	j, err := timelog.OpenObjects(context.Background(), db, "j", manual(timelog.Options{}), timelog.ObjectOptions[payload]{CacheEntries: 1})
	require.NoError(t, err)
	defer j.Close()
	for i := range 5 {
		_, err := s.Append(int64(i), string(rune('a'+i)))
		require.NoError(t, err)
		_, err = b.Append(int64(i), []byte{byte(i)})
		require.NoError(t, err)
		_, err = j.Append(int64(i), payload{H: uint64(i), Name: "n"})
		require.NoError(t, err)
	}
	require.NoError(t, j.Log().Flush(ctx))
	for _, o := range []interface{ Log() *timelog.Log }{s, b, j} {
		require.NoError(t, o.Log().IntegrityCheck(ctx))
	}
	snap, err := j.Log().Snapshot()
	require.NoError(t, err)
	defer snap.Close()
	var got []payload
	for ob, err := range j.Range(snap, 1, 4) {
		require.NoError(t, err)
		require.Equal(t, uint64(ob.Ts), ob.Value.H)
		got = append(got, ob.Value)
	}
	require.Len(t, got, 3)
	require.LessOrEqual(t, j.CacheStats().Live, 1)
	ss, err := s.Log().Snapshot()
	require.NoError(t, err)
	defer ss.Close()
	var str string
	for ob, err := range s.RangeReverse(ss, 0, 5) {
		require.NoError(t, err)
		str += ob.Value
	}
	require.Equal(t, "edcba", str)
	bs, err := b.Log().Snapshot()
	require.NoError(t, err)
	defer bs.Close()
	n := 0
	for ob, err := range b.All(bs) {
		require.NoError(t, err)
		require.Equal(t, []byte{byte(ob.Ts)}, ob.Value)
		n++
	}
	require.Equal(t, 5, n)
	require.Zero(t, b.CacheStats().Live)
}

// cleanups counts, per handle, the values the garbage collector reclaimed,
// and remembers where each appended value lived (an address keeps nothing
// alive).
type cleanups struct{ done, addr sync.Map }

func (c *cleanups) watch(h uint64, p *payload) {
	c.addr.Store(h, uintptr(unsafe.Pointer(p)))
	runtime.AddCleanup(p, func(h uint64) { c.done.Store(h, true) }, h)
}

// original reports whether p is the value appended as h (true when the
// appender has not recorded it yet).
func (c *cleanups) original(h uint64, p *payload) bool {
	a, ok := c.addr.Load(h)
	return !ok || a.(uintptr) == uintptr(unsafe.Pointer(p))
}

func (c *cleanups) collected(h uint64) bool { _, ok := c.done.Load(h); return ok }

// settle runs the collector until cond holds or the deadline passes; cleanups
// run on their own goroutine after a cycle.
func settle(cond func() bool) bool { return settleFor(5*time.Second, cond) }

func settleFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		runtime.GC()
		if cond() {
			return true
		}
		runtime.Gosched()
	}
	return cond()
}

// appendWatched appends n payloads whose only strong reference is then the
// cache's, and returns their handles.
func appendWatched(t *testing.T, o *timelog.Objects[*payload], c *cleanups, ts0 int64, n int) []uint64 {
	t.Helper()
	var hs []uint64
	for i := range n {
		p := &payload{Name: fmt.Sprint(ts0 + int64(i)), Pad: make([]byte, 64)}
		h, err := o.Append(ts0+int64(i), p)
		require.NoError(t, err)
		c.watch(h, p) // the cached value is p itself
		hs = append(hs, h)
	}
	return hs
}

func TestObjectsReleasedOnlyAfterSnapshotsClose(t *testing.T) {
	db, _ := openStore(t)
	var released atomic.Int64
	o, err := timelog.OpenObjects(context.Background(), db, "o", manual(timelog.Options{OnRelease: func(uint64) { released.Add(1) }}),
		timelog.ObjectOptions[*payload]{CacheEntries: 1000})
	require.NoError(t, err)
	defer o.Close()
	l := o.Log()
	var c cleanups
	hs := appendWatched(t, o, &c, 0, 50)
	require.NoError(t, l.Flush(ctx))
	old, err := l.Snapshot()
	require.NoError(t, err)
	require.NoError(t, l.DeleteBefore(25))
	compactAll(t, l)
	require.NoError(t, l.IntegrityCheck(ctx))
	require.Equal(t, timelog.CacheStats{Live: 25, Retired: 25}, o.CacheStats())
	// The old snapshot can still return the deleted records: none of their
	// values may be collected, and Get returns the cached ones.
	require.False(t, settleFor(300*time.Millisecond, func() bool { return c.collected(hs[0]) }), "collected while a snapshot can return it")
	for _, h := range hs[:25] {
		require.False(t, c.collected(h))
		v, err := o.Get(old, h)
		require.NoError(t, err)
		require.True(t, c.original(h, v))
	}
	require.Zero(t, released.Load())
	require.NoError(t, old.Close())
	require.EqualValues(t, 25, released.Load())
	require.True(t, settle(func() bool {
		for _, h := range hs[:25] {
			if !c.collected(h) {
				return false
			}
		}
		return true
	}), "released values stay reachable")
	for _, h := range hs[25:] {
		require.False(t, c.collected(h), "live value %d collected", h)
	}
	require.Equal(t, timelog.CacheStats{Live: 25}, o.CacheStats())
}

func TestObjectsNothingReachableAfterClose(t *testing.T) {
	db, _ := openStore(t)
	o, err := timelog.OpenObjects(context.Background(), db, "o", manual(timelog.Options{}), timelog.ObjectOptions[*payload]{})
	require.NoError(t, err)
	var c cleanups
	hs := appendWatched(t, o, &c, 0, 40) // buffered
	require.NoError(t, o.Log().Flush(ctx))
	hs = append(hs, appendWatched(t, o, &c, 40, 10)...) // still buffered at Close
	require.NoError(t, o.Log().DeleteBefore(5))
	require.NoError(t, o.Close())
	require.True(t, settle(func() bool {
		for _, h := range hs {
			if !c.collected(h) {
				return false
			}
		}
		return true
	}), "a value stays reachable after Close")
	runtime.KeepAlive(o)
}

// A reader holding snapshots while background maintenance compacts away
// what it reads always gets every value; values are collected only once
// released.
func TestObjectsBackgroundCompactionRace(t *testing.T) {
	db, _ := openStore(t)
	var mu sync.Mutex
	releasedSet := map[uint64]bool{}
	o, err := timelog.OpenObjects(context.Background(), db, "o", timelog.Options{
		MemtableMaxBytes:    24 * 16,
		PageMaxBytes:        8 + 24*8,
		CompactOverlapPages: 2,
		CompactDeletedShare: 0.01,
		MaintInterval:       time.Millisecond,
		Busy:                timelog.BusySilent,
		OnRelease: func(h uint64) {
			mu.Lock()
			releasedSet[h] = true
			mu.Unlock()
		},
	}, timelog.ObjectOptions[*payload]{CacheEntries: 1 << 20})
	require.NoError(t, err)
	l := o.Log()
	var c cleanups
	rounds := 30
	if testing.Short() {
		rounds = 10
	}
	stop := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		defer close(readErr)
		for {
			select {
			case <-stop:
				return
			default:
			}
			s, err := l.Snapshot()
			if err != nil {
				readErr <- err
				return
			}
			for ob, err := range o.All(s) {
				if err == nil && ob.Value.Name != fmt.Sprint(ob.Ts) {
					err = errors.New("value of another record")
				}
				if err == nil && !c.original(ob.Handle, ob.Value) {
					// The cache let the appended value go while this
					// snapshot could still return its record.
					err = errors.New("a decoded copy instead of the appended value")
				}
				if err != nil {
					readErr <- err
					_ = s.Close()
					return
				}
			}
			runtime.GC()
			if err := s.Close(); err != nil {
				readErr <- err
				return
			}
		}
	}()
	var all []uint64
	for r := range rounds {
		all = append(all, appendWatched(t, o, &c, int64(r*100), 100)...)
		require.NoError(t, l.DeleteBefore(int64(r*100+50)))
	}
	close(stop)
	require.NoError(t, <-readErr)
	require.NoError(t, l.Flush(ctx))
	l.Compact()
	require.NoError(t, l.IntegrityCheck(ctx))
	require.NoError(t, o.Close())
	mu.Lock()
	for h := range releasedSet {
		require.Contains(t, all, h)
	}
	mu.Unlock()
	require.True(t, settle(func() bool {
		for _, h := range all {
			if !c.collected(h) {
				return false
			}
		}
		return true
	}))
}

// A long-lived snapshot does not make the cache grow with the records
// removed meanwhile: only values cached when their record was removed stay
// pinned; the others are read through the snapshot and not cached.
func TestObjectsCacheBoundedWhileOldSnapshotOpen(t *testing.T) {
	db, _ := openStore(t)
	o, err := timelog.OpenObjects(context.Background(), db, "o", manual(timelog.Options{}), timelog.ObjectOptions[string]{CacheEntries: 8})
	require.NoError(t, err)
	defer o.Close()
	l := o.Log()
	const n = 1000
	hs := make([]uint64, n)
	for i := range hs {
		hs[i], err = o.Append(int64(i), fmt.Sprint("object ", i))
		require.NoError(t, err)
	}
	require.NoError(t, l.Flush(ctx))
	require.Equal(t, timelog.CacheStats{Live: 8}, o.CacheStats())
	old, err := l.Snapshot()
	require.NoError(t, err)
	require.NoError(t, l.DeleteBefore(n))
	compactAll(t, l)
	require.EqualValues(t, n, l.Stats().RetiredPending)
	// The 8 cached at the removal are pinned; nothing else is kept.
	require.Equal(t, timelog.CacheStats{Retired: 8}, o.CacheStats())
	for i, h := range hs {
		v, err := o.Get(old, h)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprint("object ", i), v)
		require.Equal(t, timelog.CacheStats{Retired: 8}, o.CacheStats())
	}
	cur, err := l.Snapshot()
	require.NoError(t, err)
	for _, h := range []uint64{hs[0], hs[n-1]} { // not cached, pinned
		_, err = o.Get(cur, h)
		require.ErrorIs(t, err, timelog.ErrValueNotFound)
	}
	require.NoError(t, cur.Close())
	require.NoError(t, old.Close())
	require.Zero(t, l.Stats().RetiredPending)
	require.Equal(t, timelog.CacheStats{}, o.CacheStats())
}

// A cached value is returned only to snapshots that can see its record: a
// snapshot taken before the record was appended gets ErrValueNotFound,
// before and after the record is flushed.
func TestObjectsGetRespectsSnapshot(t *testing.T) {
	db, _ := openStore(t)
	o, err := timelog.OpenObjects(context.Background(), db, "iso", manual(timelog.Options{}), timelog.ObjectOptions[string]{})
	require.NoError(t, err)
	defer o.Close()
	h1, err := o.Append(1, "one")
	require.NoError(t, err)
	old, err := o.Log().Snapshot()
	require.NoError(t, err)
	defer old.Close()
	h2, err := o.Append(2, "two")
	require.NoError(t, err)
	check := func(when string) {
		v, err := o.Get(old, h1)
		require.NoError(t, err, when)
		require.Equal(t, "one", v, when)
		_, err = o.Get(old, h2)
		require.ErrorIs(t, err, timelog.ErrValueNotFound, "%s: the old snapshot cannot see h2", when)
		cur, err := o.Log().Snapshot()
		require.NoError(t, err)
		v, err = o.Get(cur, h2)
		require.NoError(t, err, when)
		require.Equal(t, "two", v, when)
		require.NoError(t, cur.Close())
	}
	check("buffered")
	require.NoError(t, o.Log().Flush(ctx))
	check("flushed")
	old2, err := o.Log().Snapshot()
	require.NoError(t, err)
	defer old2.Close()
	h3, err := o.Append(3, "three")
	require.NoError(t, err)
	require.NoError(t, o.Log().Flush(ctx))
	_, err = o.Get(old2, h3)
	require.ErrorIs(t, err, timelog.ErrValueNotFound, "appended and flushed after the snapshot")
}

// TestObjectsRefuseAnotherLogsSnapshot: Get, Range and All read through
// the snapshot they are given; one of another log answered with that log's
// values under this log's handles (or this cache's value for a record of
// the other log), and cached them. A snapshot of another log, or nil, is
// refused with ErrInvalidArgument; nothing is cached.
func TestObjectsRefuseAnotherLogsSnapshot(t *testing.T) {
	db, _ := openStore(t)
	for _, entries := range []int{0, -1} { // cached, and never cached
		oo := timelog.ObjectOptions[string]{CacheEntries: entries}
		a, err := timelog.OpenObjects(context.Background(), db, fmt.Sprint("a", entries), manual(timelog.Options{}), oo)
		require.NoError(t, err)
		b, err := timelog.OpenObjects(context.Background(), db, fmt.Sprint("b", entries), manual(timelog.Options{}), oo)
		require.NoError(t, err)
		ha, err := a.Append(1, "from a")
		require.NoError(t, err)
		hb, err := b.Append(1, "from b")
		require.NoError(t, err)
		require.Equal(t, ha, hb)
		require.NoError(t, b.Log().Flush(ctx))

		sb, err := b.Log().Snapshot()
		require.NoError(t, err)
		_, err = a.Get(sb, ha)
		require.ErrorIs(t, err, timelog.ErrInvalidArgument)
		for _, seq := range []func(yield func(timelog.Object[string], error) bool){
			a.All(sb), a.Range(sb, 0, 9), a.RangeReverse(sb, 0, 9),
		} {
			n := 0
			for _, err := range seq {
				require.ErrorIs(t, err, timelog.ErrInvalidArgument)
				n++
			}
			require.Equal(t, 1, n)
		}
		_, err = a.Get(nil, ha)
		require.ErrorIs(t, err, timelog.ErrInvalidArgument)
		for _, err := range a.All(nil) {
			require.ErrorIs(t, err, timelog.ErrInvalidArgument)
		}
		require.NoError(t, sb.Close())

		sa, err := a.Log().Snapshot()
		require.NoError(t, err)
		v, err := a.Get(sa, ha)
		require.NoError(t, err)
		require.Equal(t, "from a", v)
		require.NoError(t, sa.Close())
		require.NoError(t, a.Close())
		require.NoError(t, b.Close())
	}
}
