package iterator_test

import (
	"bytes"
	"testing"

	"github.com/snkv-go/snkv/internal/scan"
	"github.com/snkv-go/snkv/iterator"
	"github.com/stretchr/testify/require"
)

// sliceSource is a scan.Source over sorted keys whose values are the keys
// with "v:" in front.
type sliceSource struct {
	keys   []string
	closed int
}

func (s *sliceSource) Scan(lo, hi scan.Bound, desc bool) (scan.Rows, error) {
	var sel []string
	for _, k := range s.keys {
		if lo.Key != nil && (k < string(lo.Key) || k == string(lo.Key) && !lo.Inclusive) {
			continue
		}
		if hi.Key != nil && (k > string(hi.Key) || k == string(hi.Key) && !hi.Inclusive) {
			continue
		}
		sel = append(sel, k)
	}
	if desc {
		for i, j := 0, len(sel)-1; i < j; i, j = i+1, j-1 {
			sel[i], sel[j] = sel[j], sel[i]
		}
	}
	return &sliceRows{keys: sel, i: -1}, nil
}

func (s *sliceSource) Close() error { s.closed++; return nil }

type sliceRows struct {
	keys []string
	i    int
}

func (r *sliceRows) Next() bool    { r.i++; return r.i < len(r.keys) }
func (r *sliceRows) Key() []byte   { return []byte(r.keys[r.i]) }
func (r *sliceRows) Value() []byte { return []byte("v:" + r.keys[r.i]) }
func (r *sliceRows) Err() error    { return nil }
func (r *sliceRows) Close() error  { return nil }

// newCursor builds the public cursor the way a column family does.
func newCursor(src scan.Source, opts iterator.Options) *iterator.Cursor {
	return scan.NewIteratorCursor(src, scan.Spec(opts)).(*iterator.Cursor)
}

// The public Cursor positions, steps and reports as its options say.
func TestCursorOverASource(t *testing.T) {
	src := &sliceSource{keys: []string{"a", "b", "c", "d"}}
	c := newCursor(src, iterator.Options{Start: []byte("b")})
	require.False(t, c.Valid(), "unpositioned")
	require.Nil(t, c.Key())
	require.True(t, c.First())
	require.Equal(t, []byte("b"), c.Key())
	require.Equal(t, []byte("v:b"), c.Value())
	require.True(t, c.Next())
	require.Equal(t, []byte("c"), c.Key())
	require.True(t, c.Prev())
	require.Equal(t, []byte("b"), c.Key())
	require.False(t, c.Prev(), "a is below Start")
	require.True(t, c.Last())
	require.Equal(t, []byte("d"), c.Key())
	require.True(t, c.Seek([]byte("bb")))
	require.Equal(t, []byte("c"), c.Key())
	require.NoError(t, c.Err())
	require.NoError(t, c.Close())
	require.NoError(t, c.Close(), "a second Close")
	require.Equal(t, 1, src.closed, "the source is closed once")
	require.False(t, c.Next())
	require.ErrorIs(t, c.Err(), iterator.ErrClosedCursor)

	rev := newCursor(&sliceSource{keys: []string{"a", "b", "c"}}, iterator.Options{Reverse: true, Prefix: []byte("b")})
	require.True(t, rev.First())
	require.Equal(t, []byte("b"), rev.Key())
	require.False(t, rev.Next())
	require.NoError(t, rev.Close())
}

// A nil *Cursor behaves as a closed one: no panic, ErrClosedCursor from
// Err and Close, false and nil from the rest.
func TestNilCursor(t *testing.T) {
	var c *iterator.Cursor
	require.NotPanics(t, func() {
		require.False(t, c.First())
		require.False(t, c.Last())
		require.False(t, c.Seek([]byte("a")))
		require.False(t, c.Next())
		require.False(t, c.Prev())
		require.False(t, c.Valid())
		require.Nil(t, c.Key())
		require.Nil(t, c.Value())
		require.ErrorIs(t, c.Err(), iterator.ErrClosedCursor)
		require.ErrorIs(t, c.Close(), iterator.ErrClosedCursor)
	})
}

// Options and scan.Spec stay field for field the same: columnfamily
// converts one to the other.
func TestOptionsConvertToSpec(t *testing.T) {
	o := iterator.Options{Prefix: []byte("p"), Start: []byte("s"), End: []byte("e"), Reverse: true, Borrow: true}
	s := scan.Spec(o)
	require.True(t, bytes.Equal(o.Prefix, s.Prefix) && bytes.Equal(o.Start, s.Start) && bytes.Equal(o.End, s.End))
	require.True(t, s.Reverse && s.Borrow)
}

func TestPrefixEnd(t *testing.T) {
	require.Equal(t, []byte("ac"), iterator.PrefixEnd([]byte("ab")))
	require.Equal(t, []byte{'a', 1}, iterator.PrefixEnd([]byte{'a', 0, 0xff}))
	require.Nil(t, iterator.PrefixEnd([]byte{0xff, 0xff}))
	require.Nil(t, iterator.PrefixEnd(nil))
	p := []byte("ab")
	iterator.PrefixEnd(p)[0] = 'x'
	require.Equal(t, []byte("ab"), p, "a new slice")
}
