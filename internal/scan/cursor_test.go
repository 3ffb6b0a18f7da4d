package scan_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/scan"
	"github.com/stretchr/testify/require"
)

// entry is the element type the Seq tests iterate (iterator.Entry in the
// store).
type entry struct{ Key, Value []byte }

// memSource is a Source over a sorted slice of keys, with failure
// injection and accounting of what the cursor opened and closed.
type memSource struct {
	keys      [][]byte // sorted
	scans     int
	openRows  int
	closes    int
	failScan  error // returned by Scan
	failAfter int   // rows yielded before failRows is reported (-1: never)
	failRows  error
	failClose error
	stepping  bool // Scan returns rows that are a scan.Stepper
}

func newMemSource(keys ...[]byte) *memSource {
	ks := slices.Clone(keys)
	slices.SortFunc(ks, bytes.Compare)
	ks = slices.CompactFunc(ks, bytes.Equal)
	return &memSource{keys: ks, failAfter: -1}
}

func (s *memSource) Scan(lo, hi scan.Bound, desc bool) (scan.Rows, error) {
	s.scans++
	if s.failScan != nil {
		return nil, s.failScan
	}
	var sel [][]byte
	for _, k := range s.keys {
		if lo.Key != nil {
			c := bytes.Compare(k, lo.Key)
			if c < 0 || (c == 0 && !lo.Inclusive) {
				continue
			}
		}
		if hi.Key != nil {
			c := bytes.Compare(k, hi.Key)
			if c > 0 || (c == 0 && !hi.Inclusive) {
				continue
			}
		}
		sel = append(sel, k)
	}
	if desc {
		slices.Reverse(sel)
	}
	s.openRows++
	r := &memRows{src: s, keys: sel, i: -1}
	if s.stepping {
		return &stepRows{r}, nil
	}
	return r, nil
}

// stepRows are memRows that also step in one call.
type stepRows struct{ *memRows }

func (r *stepRows) Step() (key, value []byte, ok bool) {
	if !r.Next() {
		return nil, nil, false
	}
	return r.Key(), r.Value(), true
}

func (s *memSource) Close() error {
	s.closes++
	return s.failClose
}

type memRows struct {
	src    *memSource
	keys   [][]byte
	i      int
	err    error
	closed bool
}

func (r *memRows) Next() bool {
	if r.err != nil || r.closed {
		return false
	}
	if r.src.failRows != nil && r.src.failAfter >= 0 && r.i+1 >= r.src.failAfter {
		r.err = r.src.failRows
		return false
	}
	r.i++
	return r.i < len(r.keys)
}

// Key and Value return fresh slices, as the Rows contract requires.
func (r *memRows) Key() []byte   { return bytes.Clone(r.keys[r.i]) }
func (r *memRows) Value() []byte { return append([]byte("v:"), r.keys[r.i]...) }
func (r *memRows) Err() error    { return r.err }

// Close reports the error that stopped Next again, as the store's rows do.
func (r *memRows) Close() error {
	if !r.closed {
		r.closed = true
		r.src.openRows--
	}
	return r.err
}

func TestPrefixEnd(t *testing.T) {
	cases := []struct{ prefix, want []byte }{
		{nil, nil},
		{[]byte{}, nil},
		{[]byte("a"), []byte("b")},
		{[]byte("ab"), []byte("ac")},
		{[]byte{0x00}, []byte{0x01}},
		{[]byte{'a', 0xff}, []byte("b")},
		{[]byte{'a', 0xff, 0xff}, []byte("b")},
		{[]byte{'a', 0xfe}, []byte{'a', 0xff}},
		{[]byte{0x80}, []byte{0x81}},
		{[]byte{0xfe, 0xff}, []byte{0xff}},
		{[]byte{0x7f, 0xc3, 0xa9}, []byte{0x7f, 0xc3, 0xaa}}, // UTF-8 "é" is just bytes
		{[]byte{0xff}, nil},
		{[]byte{0xff, 0xff, 0xff}, nil},
	}
	for _, tc := range cases {
		in := bytes.Clone(tc.prefix)
		require.Equal(t, tc.want, scan.PrefixEnd(in), "%x", tc.prefix)
		require.Equal(t, tc.prefix, in, "the prefix is not modified")
	}
	// The definition: greater than every key with the prefix, and the
	// smallest such key.
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		p := make([]byte, 1+r.IntN(3))
		for i := range p {
			p[i] = []byte{0x00, 0x7f, 0x80, 0xfe, 0xff}[r.IntN(5)]
		}
		end := scan.PrefixEnd(p)
		ext := append(bytes.Clone(p), bytes.Repeat([]byte{0xff}, 1+r.IntN(3))...)
		if end == nil {
			require.Equal(t, bytes.Repeat([]byte{0xff}, len(p)), p)
			continue
		}
		require.Positive(t, bytes.Compare(end, ext), "%x > %x", end, ext)
		require.False(t, bytes.HasPrefix(end, p), "%x does not start with %x", end, p)
	}
}

func TestOptionsRange(t *testing.T) {
	cases := []struct {
		name   string
		opts   scan.Spec
		lo, hi scan.Bound
		empty  bool
	}{
		{name: "zero", opts: scan.Spec{}},
		{name: "empty start is no bound", opts: scan.Spec{Start: []byte{}}},
		{name: "empty end is empty", opts: scan.Spec{End: []byte{}}, hi: scan.Bound{Key: []byte{}}, empty: true},
		{name: "start end", opts: scan.Spec{Start: []byte("a"), End: []byte("c")},
			lo: scan.Bound{Key: []byte("a"), Inclusive: true}, hi: scan.Bound{Key: []byte("c")}},
		{name: "start == end", opts: scan.Spec{Start: []byte("a"), End: []byte("a")},
			lo: scan.Bound{Key: []byte("a"), Inclusive: true}, hi: scan.Bound{Key: []byte("a")}, empty: true},
		{name: "prefix", opts: scan.Spec{Prefix: []byte("ab")},
			lo: scan.Bound{Key: []byte("ab"), Inclusive: true}, hi: scan.Bound{Key: []byte("ac")}},
		{name: "all-0xFF prefix has no upper bound", opts: scan.Spec{Prefix: []byte{0xff, 0xff}},
			lo: scan.Bound{Key: []byte{0xff, 0xff}, Inclusive: true}},
		{name: "prefix narrows start and end", opts: scan.Spec{Prefix: []byte("b"), Start: []byte("a"), End: []byte("z")},
			lo: scan.Bound{Key: []byte("b"), Inclusive: true}, hi: scan.Bound{Key: []byte("c")}},
		{name: "start and end narrow prefix", opts: scan.Spec{Prefix: []byte("b"), Start: []byte("bb"), End: []byte("bc")},
			lo: scan.Bound{Key: []byte("bb"), Inclusive: true}, hi: scan.Bound{Key: []byte("bc")}},
		{name: "start and end on the prefix's own bounds", opts: scan.Spec{Prefix: []byte("b"), Start: []byte("b"), End: []byte("c")},
			lo: scan.Bound{Key: []byte("b"), Inclusive: true}, hi: scan.Bound{Key: []byte("c")}},
		{name: "end before the prefix's end", opts: scan.Spec{Prefix: []byte("b"), End: []byte("bz")},
			lo: scan.Bound{Key: []byte("b"), Inclusive: true}, hi: scan.Bound{Key: []byte("bz")}},
		{name: "start past prefix", opts: scan.Spec{Prefix: []byte("b"), Start: []byte("c")},
			lo: scan.Bound{Key: []byte("c"), Inclusive: true}, hi: scan.Bound{Key: []byte("c")}, empty: true},
	}
	for _, tc := range cases {
		lo, hi, empty := tc.opts.Range()
		require.Equal(t, tc.empty, empty, tc.name)
		require.Equal(t, tc.lo, lo, tc.name)
		if !tc.empty || tc.hi.Key != nil {
			require.Equal(t, tc.hi, hi, tc.name)
		}
	}
}

func keysOf(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// TestCursorModel drives a cursor with random moves over random keys and
// random options and checks each step against a brute-force model.
func TestCursorModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	alphabet := []byte{0x00, 'a', 'b', 0xfe, 0xff}
	randKey := func(n int) []byte {
		k := make([]byte, 1+r.IntN(n))
		for i := range k {
			k[i] = alphabet[r.IntN(len(alphabet))]
		}
		return k
	}
	randBound := func() []byte {
		switch r.IntN(4) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		return randKey(3)
	}
	for walk := range 300 {
		var keys [][]byte
		for range r.IntN(30) {
			keys = append(keys, randKey(3))
		}
		src := newMemSource(keys...)
		opts := scan.Spec{Start: randBound(), End: randBound(), Reverse: r.IntN(2) == 0}
		if r.IntN(2) == 0 {
			opts.Prefix = randKey(2)
		}
		var sel [][]byte // visited keys in iteration order
		for _, k := range src.keys {
			if bytes.HasPrefix(k, opts.Prefix) && (len(opts.Start) == 0 || bytes.Compare(k, opts.Start) >= 0) &&
				(opts.End == nil || bytes.Compare(k, opts.End) < 0) {
				sel = append(sel, k)
			}
		}
		if opts.Reverse {
			slices.Reverse(sel)
		}
		c := scan.New(src, opts)
		pos, fresh := -1, true // pos: index in sel; -1 before the first, len(sel) after the last
		var trail []string
		for range 40 {
			var ok bool
			switch op := r.IntN(6); op {
			case 0, 1:
				trail = append(trail, "next")
				ok = c.Next()
				switch {
				case fresh:
					pos = 0
				case pos < len(sel):
					pos++
				}
			case 2, 3:
				trail = append(trail, "prev")
				ok = c.Prev()
				switch {
				case fresh, pos == len(sel):
					pos = len(sel) - 1
				case pos >= 0:
					pos--
				}
			case 4:
				k := randKey(3)
				trail = append(trail, fmt.Sprintf("seek %x", k))
				ok = c.Seek(k)
				pos = len(sel)
				for i, s := range sel {
					cmp := bytes.Compare(s, k)
					if (!opts.Reverse && cmp >= 0) || (opts.Reverse && cmp <= 0) {
						pos = i
						break
					}
				}
			case 5:
				if r.IntN(2) == 0 {
					trail = append(trail, "first")
					ok = c.First()
					pos = 0
				} else {
					trail = append(trail, "last")
					ok = c.Last()
					pos = len(sel) - 1
				}
			}
			fresh = false
			valid := pos >= 0 && pos < len(sel)
			require.NoError(t, c.Err())
			require.Equal(t, valid, ok, "walk %d %+q over %q: %q", walk, opts, src.keys, trail)
			require.Equal(t, valid, c.Valid())
			if valid {
				require.Equal(t, sel[pos], c.Key(), "walk %d %+q over %q: %q", walk, opts, src.keys, trail)
				require.Equal(t, append([]byte("v:"), sel[pos]...), c.Value())
			} else {
				require.Nil(t, c.Key())
				require.Nil(t, c.Value())
			}
			require.LessOrEqual(t, src.openRows, 1, "at most one scan is open at a time")
		}
		require.NoError(t, c.Close())
		require.Zero(t, src.openRows, "Close closes the open scan")
		require.Equal(t, 1, src.closes)
	}
}

func TestCursorClose(t *testing.T) {
	src := newMemSource(keysOf("a", "b")...)
	c := scan.New(src, scan.Spec{})
	require.True(t, c.First())
	require.NoError(t, c.Close())
	require.NoError(t, c.Close(), "second Close")
	require.Equal(t, 1, src.closes, "the source is closed exactly once")
	require.Zero(t, src.openRows)
	require.False(t, c.Valid())
	require.Nil(t, c.Key())
	scans := src.scans
	for name, move := range map[string]func() bool{
		"Next": c.Next, "Prev": c.Prev, "First": c.First, "Last": c.Last,
		"Seek": func() bool { return c.Seek([]byte("a")) },
	} {
		require.False(t, move(), name)
		require.ErrorIs(t, c.Err(), scan.ErrClosed, name)
	}
	require.Equal(t, scans, src.scans, "a closed cursor never reads its source")

	// A cursor closed before any move closes its source too.
	src = newMemSource()
	require.NoError(t, scan.New(src, scan.Spec{}).Close())
	require.Equal(t, 1, src.closes)

	// An error closing the source is reported.
	src = newMemSource()
	src.failClose = errors.New("close failed")
	require.ErrorIs(t, scan.New(src, scan.Spec{}).Close(), src.failClose)
}

func TestCursorErrors(t *testing.T) {
	boom := errors.New("boom")
	t.Run("scan fails", func(t *testing.T) {
		src := newMemSource(keysOf("a")...)
		src.failScan = boom
		c := scan.New(src, scan.Spec{})
		require.False(t, c.First())
		require.ErrorIs(t, c.Err(), boom)
		require.False(t, c.Next(), "a failed cursor stays failed")
		require.False(t, c.Seek([]byte("a")))
		require.ErrorIs(t, c.Err(), boom, "the first error is kept")
		require.NoError(t, c.Close())
	})
	t.Run("rows fail midway", func(t *testing.T) {
		src := newMemSource(keysOf("a", "b", "c")...)
		src.failRows, src.failAfter = boom, 1
		c := scan.New(src, scan.Spec{})
		require.True(t, c.First())
		require.Equal(t, []byte("a"), c.Key())
		require.False(t, c.Next())
		require.ErrorIs(t, c.Err(), boom)
		src.failRows = nil
		require.False(t, c.First(), "no recovery once failed")
		require.NoError(t, c.Close())
	})
	t.Run("empty range never scans", func(t *testing.T) {
		src := newMemSource(keysOf("a")...)
		c := scan.New(src, scan.Spec{Start: []byte("b"), End: []byte("a")})
		require.False(t, c.First())
		require.False(t, c.Last())
		require.False(t, c.Seek([]byte("a")))
		require.NoError(t, c.Err())
		require.Zero(t, src.scans)
		require.NoError(t, c.Close())
	})
}

// collectSeq drains a Seq, returning the keys and every error yielded.
func collectSeq(seq func(func(entry, error) bool)) (keys []string, errs []error) {
	for e, err := range seq {
		if err != nil {
			errs = append(errs, err)
			if e.Key != nil || e.Value != nil {
				panic("an error comes with an empty entry")
			}
			continue
		}
		keys = append(keys, string(e.Key))
	}
	return keys, errs
}

// TestSeq runs the loop over rows that only step (Next, Key, Value) and
// over rows that also hand each row on in one call (Stepper).
func TestSeq(t *testing.T) {
	for _, stepping := range []bool{false, true} {
		t.Run(fmt.Sprintf("stepping=%v", stepping), func(t *testing.T) { testSeq(t, stepping) })
	}
}

func testSeq(t *testing.T, stepping bool) {
	newMemSource := func(keys ...[]byte) *memSource {
		s := newMemSource(keys...)
		s.stepping = stepping
		return s
	}
	boom := errors.New("boom")
	open := func(src *memSource, opts scan.Spec) func() (*scan.Cursor, error) {
		return func() (*scan.Cursor, error) { return scan.New(src, opts), nil }
	}
	t.Run("complete", func(t *testing.T) {
		src := newMemSource(keysOf("c", "a", "b")...)
		keys, errs := collectSeq(scan.Seq[entry](open(src, scan.Spec{Reverse: true})))
		require.Equal(t, []string{"c", "b", "a"}, keys)
		require.Empty(t, errs)
		require.Equal(t, 1, src.closes)
		require.Zero(t, src.openRows)
	})
	t.Run("entries are the caller's", func(t *testing.T) {
		src := newMemSource(keysOf("a", "b")...)
		var held []entry
		for e, err := range scan.Seq[entry](open(src, scan.Spec{})) {
			require.NoError(t, err)
			held = append(held, e)
		}
		require.Equal(t, []entry{{Key: []byte("a"), Value: []byte("v:a")}, {Key: []byte("b"), Value: []byte("v:b")}}, held)
	})
	t.Run("break closes", func(t *testing.T) {
		src := newMemSource(keysOf("a", "b", "c")...)
		for range scan.Seq[entry](open(src, scan.Spec{})) {
			break
		}
		require.Equal(t, 1, src.closes)
		require.Zero(t, src.openRows)
	})
	t.Run("panic closes", func(t *testing.T) {
		src := newMemSource(keysOf("a", "b")...)
		require.PanicsWithValue(t, "stop", func() {
			for range scan.Seq[entry](open(src, scan.Spec{})) {
				panic("stop")
			}
		})
		require.Equal(t, 1, src.closes)
		require.Zero(t, src.openRows)
	})
	t.Run("open fails", func(t *testing.T) {
		keys, errs := collectSeq(scan.Seq[entry](func() (*scan.Cursor, error) { return nil, boom }))
		require.Empty(t, keys)
		require.Len(t, errs, 1)
		require.ErrorIs(t, errs[0], boom)
	})
	t.Run("rows fail", func(t *testing.T) {
		src := newMemSource(keysOf("a", "b", "c")...)
		src.failRows, src.failAfter = boom, 2
		keys, errs := collectSeq(scan.Seq[entry](open(src, scan.Spec{})))
		require.Equal(t, []string{"a", "b"}, keys)
		require.Len(t, errs, 1, "the failure is the last element")
		require.ErrorIs(t, errs[0], boom)
		require.Equal(t, "boom", errs[0].Error(), "the failure is reported once")
		require.Equal(t, 1, src.closes)
	})
	t.Run("scan fails", func(t *testing.T) {
		src := newMemSource(keysOf("a")...)
		src.failScan = boom
		keys, errs := collectSeq(scan.Seq[entry](open(src, scan.Spec{})))
		require.Empty(t, keys)
		require.Len(t, errs, 1)
		require.ErrorIs(t, errs[0], boom)
	})
	t.Run("close fails", func(t *testing.T) {
		src := newMemSource(keysOf("a")...)
		src.failClose = boom
		keys, errs := collectSeq(scan.Seq[entry](open(src, scan.Spec{})))
		require.Equal(t, []string{"a"}, keys)
		require.Len(t, errs, 1)
		require.ErrorIs(t, errs[0], boom)
	})
	t.Run("stop after the error", func(t *testing.T) {
		src := newMemSource(keysOf("a")...)
		src.failScan = boom
		n := 0
		for range scan.Seq[entry](open(src, scan.Spec{})) {
			n++
			break
		}
		require.Equal(t, 1, n)
	})
}
