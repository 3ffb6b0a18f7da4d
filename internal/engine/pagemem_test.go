package engine

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"unsafe"

	"modernc.org/libc"

	"github.com/stretchr/testify/require"
)

// Every 4 KiB page a connection caches sits in a slot of its exact size,
// and closing the store gives every slot back.
func TestPageCacheInExactSlots(t *testing.T) {
	require.True(t, pageMemInstalled(), "SQLite was initialised before the page slots were set up")
	ctx := context.Background()
	before := pageSlotsInUse()
	db := testDB(t, filepath.Join(t.TempDir(), "p.db"))
	withWriter(t, db, func(c *Conn) {
		require.NoError(t, db.SetJournalMode(ctx, c))
		require.NoError(t, c.ExecScript(ctx, "CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)"))
	})
	putRows(t, db, 0, 2000, 400) // about 200 pages
	var cached int64
	withWriter(t, db, func(c *Conn) {
		n, err := c.QueryInt(ctx, "SELECT sum(length(v)) FROM t")
		require.NoError(t, err)
		require.Equal(t, int64(2000*400), n)
		cached, err = c.QueryInt(ctx, "PRAGMA page_count")
		require.NoError(t, err)
	})
	require.GreaterOrEqual(t, pageSlotsInUse()-before, int(cached)*9/10,
		"the writer's cache holds the file's %d pages, nearly all in slots", cached)
	require.NoError(t, db.Close())
	require.LessOrEqual(t, pageSlotsInUse(), before, "slots left in use after Close")
}

// The wrapped allocator keeps SQLite's contract for the page sizes it
// serves and for the others: sizes, reallocation across the boundary, and
// the contents kept.
func TestPageMemReallocAcrossSlots(t *testing.T) {
	require.True(t, pageMemInstalled())
	tls := newTestTLS(t)
	p := pageMemMalloc(tls, pageAlloc)
	require.NotZero(t, p)
	require.True(t, isSlot(p))
	require.Equal(t, pageAlloc, pageMemSize(tls, p))
	b := unsafeBytes(p, int(pageAlloc))
	for i := range b {
		b[i] = byte(i)
	}
	q := pageMemRealloc(tls, p, 5000) // past a slot: to the allocator
	require.False(t, isSlot(q))
	require.GreaterOrEqual(t, pageMemSize(tls, q), int32(5000))
	for i, v := range unsafeBytes(q, int(pageAlloc)) {
		require.Equal(t, byte(i), v, "byte %d", i)
	}
	r := pageMemRealloc(tls, q, 4100) // back into a slot
	require.True(t, isSlot(r))
	for i, v := range unsafeBytes(r, 4100) {
		require.Equal(t, byte(i), v, "byte %d", i)
	}
	s := pageMemRealloc(tls, r, 100) // small: to the allocator
	require.False(t, isSlot(s))
	for i, v := range unsafeBytes(s, 100) {
		require.Equal(t, byte(i), v, "byte %d", i)
	}
	pageMemFree(tls, s)
	require.Equal(t, pageAlloc, pageMemRoundup(tls, 4097))
	require.Equal(t, int32(104), pageMemRoundup(tls, 100))
}

func newTestTLS(t *testing.T) *libc.TLS {
	tls := libc.NewTLS()
	t.Cleanup(tls.Close)
	return tls
}

func unsafeBytes(p uintptr, n int) []byte { return unsafe.Slice((*byte)(cptr(p)), n) }

// Slots taken and given back in random order across many chunks: every
// live slot is distinct and keeps what was written to it, a chunk with
// a free slot is used before another is made (the live slots share
// chunks), and all given back leaves
// only the spare.
func TestPageMemManyChunks(t *testing.T) {
	require.True(t, pageMemInstalled())
	tls := newTestTLS(t)
	base := pageSlotsInUse()
	rng := rand.New(rand.NewPCG(35, 9))
	live := map[uintptr]byte{}
	chunksInUse := func() int {
		pageMem.Lock()
		defer pageMem.Unlock()
		n := 0
		for _, c := range pageMem.chunks {
			if c != nil {
				n++
			}
		}
		return n
	}
	before := chunksInUse()
	for round := range 40 {
		for range 60 + rng.IntN(60) {
			p := pageMemMalloc(tls, pageAlloc)
			require.NotZero(t, p)
			_, dup := live[p]
			require.False(t, dup, "a slot handed out twice")
			v := byte(rng.IntN(256))
			unsafeBytes(p, int(pageAlloc))[pageAlloc-1] = v
			live[p] = v
		}
		for p, v := range live {
			if rng.IntN(2) == 0 {
				require.Equal(t, v, unsafeBytes(p, int(pageAlloc))[pageAlloc-1], "round %d", round)
				pageMemFree(tls, p)
				delete(live, p)
			}
		}
		// Freed slots are reused before a chunk is made, so the live
		// slots share chunks (one each if they did not).
		require.LessOrEqual(t, chunksInUse()-before, len(live)/3+2, "round %d: %d live slots", round, len(live))
	}
	for p := range live {
		pageMemFree(tls, p)
	}
	require.Equal(t, base, pageSlotsInUse())
	require.LessOrEqual(t, chunksInUse()-before, 1, "only the spare is kept")
}
