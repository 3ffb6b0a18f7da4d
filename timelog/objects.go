package timelog

import (
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"sync"

	"github.com/snkv-go/snkv/kvstore"
)

// Objects: Go values on a values log. Each value is stored through a codec
// as the value of its record, and the decoded value is cached in memory.
// A cached value follows its record's life (pin -> retire -> release):
// while the record is live the entry may be evicted (bounded LRU; Get
// decodes again); from the commit that removes the record it is pinned,
// out of the LRU, until OnRelease says no open snapshot can return the
// record, and then let go.

// Codec converts values of T to bytes and back.
type Codec[T any] interface {
	Marshal(v T) ([]byte, error)
	Unmarshal(b []byte) (T, error)
}

// BytesCodec stores a []byte as it is (Unmarshal returns a copy).
type BytesCodec struct{}

// Marshal returns v.
func (BytesCodec) Marshal(v []byte) ([]byte, error) { return v, nil }

// Unmarshal returns a copy of b.
func (BytesCodec) Unmarshal(b []byte) ([]byte, error) { return append([]byte{}, b...), nil }

// StringCodec stores a string as its bytes.
type StringCodec struct{}

// Marshal returns the bytes of v.
func (StringCodec) Marshal(v string) ([]byte, error) { return []byte(v), nil }

// Unmarshal returns b as a string.
func (StringCodec) Unmarshal(b []byte) (string, error) { return string(b), nil }

// JSONCodec stores a value as encoding/json does.
type JSONCodec[T any] struct{}

// Marshal is json.Marshal.
func (JSONCodec[T]) Marshal(v T) ([]byte, error) { return json.Marshal(v) }

// Unmarshal is json.Unmarshal into a new T.
func (JSONCodec[T]) Unmarshal(b []byte) (T, error) {
	var v T
	err := json.Unmarshal(b, &v)
	return v, err
}

// DefaultCodec returns BytesCodec for []byte, StringCodec for string and
// JSONCodec[T] for any other type.
func DefaultCodec[T any]() Codec[T] {
	var zero T
	switch any(zero).(type) {
	case []byte:
		return any(BytesCodec{}).(Codec[T])
	case string:
		return any(StringCodec{}).(Codec[T])
	}
	return JSONCodec[T]{}
}

// ObjectOptions configures OpenObjects. The zero value is the default.
type ObjectOptions[T any] struct {
	// Codec converts values; nil means DefaultCodec[T]().
	Codec Codec[T]
	// CacheEntries bounds the decoded values cached for live records
	// (least recently used go first; Get decodes them again). 0 means
	// 4,096; negative caches none. Values of removed records that an open
	// snapshot can still return stay pinned on top of this bound until
	// released. Each entry costs the value plus about 100 bytes.
	CacheEntries int
}

// Object is a record with its decoded value.
type Object[T any] struct {
	Record
	Value T
}

// Objects stores Go values of type T in a values log. Safe for concurrent
// use.
type Objects[T any] struct {
	log   *Log
	codec Codec[T]
	cache *objCache[T]
}

// OpenObjects opens (creating unless read-only) the log name as a values
// log of T. opts is as for Open, Values forced on; its OnDrop and
// OnRelease are still called, after the cache's own bookkeeping.
func OpenObjects[T any](ctx context.Context, store *kvstore.Store, name string, opts Options, oo ObjectOptions[T]) (*Objects[T], error) {
	if oo.CacheEntries < 0 {
		oo.CacheEntries = 0
	} else if oo.CacheEntries == 0 {
		oo.CacheEntries = 4096
	}
	o := &Objects[T]{codec: oo.Codec, cache: newObjCache[T](oo.CacheEntries)}
	if o.codec == nil {
		o.codec = DefaultCodec[T]()
	}
	userDrop, userRelease := opts.OnDrop, opts.OnRelease
	c := o.cache
	opts.Values = true
	opts.OnDrop = func(r Record) {
		c.retire(r.Handle)
		if userDrop != nil {
			userDrop(r)
		}
	}
	opts.OnRelease = func(h uint64) {
		c.release(h)
		if userRelease != nil {
			userRelease(h)
		}
	}
	l, err := Open(ctx, store, name, opts)
	if err != nil {
		return nil, err
	}
	o.log = l
	return o, nil
}

// Log returns the underlying log (for snapshots, deletes, Flush, ...).
func (o *Objects[T]) Log() *Log { return o.log }

// Append stores v at ts and returns its handle; results as
// Log.AppendValue. A codec failure writes nothing.
func (o *Objects[T]) Append(ts int64, v T) (uint64, error) {
	b, err := o.codec.Marshal(v)
	if err != nil {
		return 0, fmt.Errorf("timelog: %q: encode: %w", o.log.name, err)
	}
	// The value is cached before the record becomes visible, so that
	// every reader gets v itself, not a decoded copy.
	return o.log.appendValues([]int64{ts}, [][]byte{b}, func(first uint64) { o.cache.put(first, v) })
}

// Get returns the value of handle h as snapshot s sees it: the cached
// value, else the stored one decoded (and cached). ErrValueNotFound if s
// has no value for h; ErrInvalidArgument if s is nil or a snapshot of
// another Log than o.Log().
func (o *Objects[T]) Get(s *Snapshot, h uint64) (T, error) {
	var zero T
	if err := o.own(s); err != nil {
		return zero, err
	}
	if v, pinned, ok := o.cache.get(h); ok {
		if err := s.check(); err != nil {
			return zero, err
		}
		if !pinned {
			// A live record: s returns it unless s is older than it.
			seen, err := s.sees(h)
			if err != nil {
				return zero, fromStore(err)
			}
			if seen {
				return v, nil
			}
		}
		// A removed record, or one s may not see: s returns it only if it
		// holds it.
		if _, err := s.Value(h); err != nil {
			return zero, err
		}
		return v, nil
	}
	b, err := s.Value(h)
	if err != nil {
		return zero, err
	}
	v, err := o.codec.Unmarshal(b)
	if err != nil {
		return zero, fmt.Errorf("timelog: %q: decode value %d: %w", o.log.name, h, err)
	}
	// A snapshot older than the last removal may be reading a removed
	// record, which the cache must not hold as live: its value is not
	// cached (it is read through the snapshot each time).
	return o.cache.putIf(h, v, func() bool { return o.log.man.Load().epoch == s.epoch }), nil
}

// Range yields the records of s in [t1, t2) with their values, in order.
// A failure is yielded once, as the last step: ErrInvalidArgument if s is
// nil or a snapshot of another Log than o.Log() (as for Get and All).
func (o *Objects[T]) Range(s *Snapshot, t1, t2 int64) iter.Seq2[Object[T], error] {
	if err := o.own(s); err != nil {
		return failed[Object[T]](err)
	}
	return o.objects(s, s.Range(t1, t2))
}

// RangeReverse is Range in descending order.
func (o *Objects[T]) RangeReverse(s *Snapshot, t1, t2 int64) iter.Seq2[Object[T], error] {
	if err := o.own(s); err != nil {
		return failed[Object[T]](err)
	}
	return o.objects(s, s.RangeReverse(t1, t2))
}

// All yields every record of s with its value.
func (o *Objects[T]) All(s *Snapshot) iter.Seq2[Object[T], error] {
	if err := o.own(s); err != nil {
		return failed[Object[T]](err)
	}
	return o.objects(s, s.All())
}

// own checks that s is a snapshot of o's log: the cache is keyed by the
// handles of that log alone.
func (o *Objects[T]) own(s *Snapshot) error {
	switch {
	case s == nil:
		return fmt.Errorf("timelog: %q: %w: nil snapshot", o.log.name, ErrInvalidArgument)
	case s.l != o.log:
		return fmt.Errorf("timelog: %q: %w: a snapshot of another log (%q)", o.log.name, ErrInvalidArgument, s.l.name)
	}
	return nil
}

// failed is an iteration that yields err once.
func failed[T any](err error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		yield(zero, err)
	}
}

// objects pairs the records of s with their values: the cached ones, else
// the stored ones, read in order with the records (as RangeValues does: a
// look-up per record would cost a B-tree descent over value blocks).
func (o *Objects[T]) objects(s *Snapshot, recs iter.Seq2[Record, error]) iter.Seq2[Object[T], error] {
	return func(yield func(Object[T], error) bool) {
		fresh := func() bool { return o.log.man.Load().epoch == s.epoch }
		for e, err := range s.withValues(recs) {
			if err != nil {
				yield(Object[T]{}, err)
				return
			}
			// s returns the record, so a pinned value is good for it too.
			v, _, ok := o.cache.get(e.Handle)
			if !ok {
				if v, err = o.codec.Unmarshal(e.Value); err != nil {
					yield(Object[T]{}, fmt.Errorf("timelog: %q: decode value %d: %w", o.log.name, e.Handle, err))
					return
				}
				v = o.cache.putIf(e.Handle, v, fresh)
			}
			if !yield(Object[T]{Record: e.Record, Value: v}, nil) {
				return
			}
		}
	}
}

// CacheStats tells what the cache holds.
type CacheStats struct {
	Live    int // cached values of live records
	Retired int // values of removed records pinned until released
}

// CacheStats returns the cache's counts.
func (o *Objects[T]) CacheStats() CacheStats { return o.cache.stats() }

// Close closes the log (see Log.Close: ErrSnapshotsOpen while snapshots
// are open) and empties the cache: nothing of the log's values stays
// reachable from it.
func (o *Objects[T]) Close() error {
	if err := o.log.Close(); err != nil {
		return err
	}
	o.cache.clear()
	return nil
}

type objEntry[T any] struct {
	h    uint64
	v    T
	elem *list.Element // in the LRU while the record is live; nil: pinned
}

// objCache holds decoded values by handle. Live entries are in the LRU;
// an entry cached when its record is removed is pinned (out of the LRU)
// until released. Nothing is kept for a removed record that is not
// cached: an old snapshot reads its value from the store, and the entry
// it caches then is an ordinary LRU entry until the release drops it. So
// the cache holds at most max live entries plus the pinned ones, whatever
// the number of removed records waiting for their release.
type objCache[T any] struct {
	mu  sync.Mutex
	max int
	m   map[uint64]*objEntry[T]
	lru *list.List // live entries, most recent first
}

func newObjCache[T any](max int) *objCache[T] {
	return &objCache[T]{max: max, m: map[uint64]*objEntry[T]{}, lru: list.New()}
}

// get returns the cached value of h, and whether it is pinned (its record
// is removed).
func (c *objCache[T]) get(h uint64) (v T, pinned, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[h]
	if !ok {
		return v, false, false
	}
	if e.elem != nil {
		c.lru.MoveToFront(e.elem)
	}
	return e.v, e.elem == nil, true
}

// put caches v for h unless a value is cached already, and returns the
// cached one.
func (c *objCache[T]) put(h uint64, v T) T { return c.putIf(h, v, nil) }

// putIf is put, done only if ok (nil: always) reports true; ok runs under
// the cache's lock, so a removal announced (retire) after it pins the
// entry.
func (c *objCache[T]) putIf(h uint64, v T, ok func() bool) T {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, found := c.m[h]; found {
		return e.v
	}
	if c.max == 0 || (ok != nil && !ok()) {
		return v
	}
	e := &objEntry[T]{h: h, v: v}
	c.m[h] = e
	e.elem = c.lru.PushFront(e)
	for c.lru.Len() > c.max {
		old := c.lru.Remove(c.lru.Back()).(*objEntry[T])
		delete(c.m, old.h)
	}
	return v
}

// retire pins the cached value of a removed record, if any (OnDrop).
func (c *objCache[T]) retire(h uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[h]; ok && e.elem != nil {
		c.lru.Remove(e.elem)
		e.elem = nil
	}
}

// release lets the value of h go (OnRelease).
func (c *objCache[T]) release(h uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[h]; ok {
		if e.elem != nil {
			c.lru.Remove(e.elem)
		}
		delete(c.m, h)
	}
}

func (c *objCache[T]) stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Live: c.lru.Len(), Retired: len(c.m) - c.lru.Len()}
}

func (c *objCache[T]) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = map[uint64]*objEntry[T]{}
	c.lru.Init()
}
