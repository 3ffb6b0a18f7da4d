package engine

import (
	"sync"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// Page-cache memory in slots of its exact size.
//
// SQLite allocates each page of a connection's cache on its own: 4 KiB of
// page data and about 300 bytes of headers. The C library's allocator
// (modernc.org/libc) rounds every allocation up to the next power of two,
// so a cached 4 KiB page occupies an 8 KiB slot, and a full cache of the
// default 2 MiB holds about 4.4 MiB of memory. SQLite's own remedy, the
// bulk allocation of a connection's cache lines (SQLITE_CONFIG_PAGECACHE
// with no buffer), is compiled out of the driver: it is built with
// SQLITE_ENABLE_MEMORY_MANAGEMENT, whose caches share one group in which a
// page may move from one connection's cache to another's, so SQLite never
// makes the bulk.
//
// Instead the process's SQLite allocator is wrapped (SQLITE_CONFIG_MALLOC,
// before SQLite initialises): an allocation of a 4 KiB page with its
// headers is carved from chunks of about 64 KiB, each holding pageSlots
// slots of the exact size, and everything else goes to the allocator as
// before. A chunk is itself one allocation of that allocator, which maps it
// on its own and unmaps it when it is freed; its memory becomes resident
// as its slots are first used. A chunk whose slots are all free is given
// back, except one kept for the next page.
//
// A slot begins with a word that tells it from the default allocator's
// blocks: those begin with their size, never negative; a slot's word is the
// bitwise complement of its chunk's index.

// pageSlots is how many slots a chunk holds: 15 slots of a 4 KiB page
// with its headers fill about 64 KiB.
const pageSlots = 15

// pageAlloc is the size of the allocation SQLite makes for one cached page
// of 4 KiB (pcache1: the page, the pager's and the B-tree's headers, and
// the cache's own), and slotSize the slot that holds it with its word.
var (
	pageAlloc = int32(4096 + round8(unsafe.Sizeof(sqlite3.TMemPage{})) +
		round8(unsafe.Sizeof(sqlite3.TPgHdr{})) + round8(unsafe.Sizeof(sqlite3.TPgHdr1{})))
	slotSize = uintptr(8 + round8(uintptr(pageAlloc)))
)

func round8(n uintptr) uintptr { return (n + 7) &^ 7 }

// pageChunk is a chunk of slots; free lists the free slots' indexes.
type pageChunk struct {
	base   uintptr // the first slot
	free   []uint8
	listed bool // in pageMem.open
}

var pageMem struct {
	sync.Mutex
	orig   sqlite3.Tsqlite3_mem_methods // the allocator wrapped
	chunks []*pageChunk                 // by index; nil where given back
	// open lists the indexes of chunks with a free slot, newest last, so
	// that an allocation takes one without a look at every chunk. An
	// entry goes stale when its chunk fills or is given back; it is
	// dropped when an allocation meets it. holes lists the nil indexes
	// of chunks, for the next chunk made.
	open, holes []int
	spare       int  // index of an empty chunk kept, or -1
	inUse       int  // slots handed out, for tests
	ok          bool // the wrapper is installed
}

// pageMemInstalled reports whether SQLite allocates cached pages from the
// slots (false when SQLite was initialised before this package's init).
func pageMemInstalled() bool { return pageMem.ok }

// pageSlotsInUse is how many slots are handed out now.
func pageSlotsInUse() int {
	pageMem.Lock()
	defer pageMem.Unlock()
	return pageMem.inUse
}

func init() { installPageMem() }

func installPageMem() {
	tls := libc.NewTLS()
	defer tls.Close()
	bp := tls.Alloc(int(unsafe.Sizeof(sqlite3.Tsqlite3_mem_methods{})) + 16)
	defer tls.Free(int(unsafe.Sizeof(sqlite3.Tsqlite3_mem_methods{})) + 16)
	m := bp + 16
	if sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_GETMALLOC, libc.VaList(bp, m)) != sqlite3.SQLITE_OK {
		return
	}
	orig := *(*sqlite3.Tsqlite3_mem_methods)(cptr(m))
	if orig.FxMalloc == 0 || orig.FxFree == 0 || orig.FxRealloc == 0 || orig.FxSize == 0 || orig.FxRoundup == 0 {
		return
	}
	pageMem.orig = orig
	// The default allocator writes each block's size before it, which is
	// what tells its blocks from the slots: check that it still does.
	p := origMalloc(tls, 24)
	if p == 0 {
		return
	}
	size := *(*int64)(cptr(p - 8))
	origFree(tls, p)
	if size < 24 || size > 4096 {
		return
	}
	w := orig
	w.FxMalloc = cfunc(pageMemMalloc)
	w.FxFree = cfunc(pageMemFree)
	w.FxRealloc = cfunc(pageMemRealloc)
	w.FxSize = cfunc(pageMemSize)
	w.FxRoundup = cfunc(pageMemRoundup)
	pageMem.spare = -1
	*(*sqlite3.Tsqlite3_mem_methods)(cptr(m)) = w
	// SQLITE_MISUSE when SQLite is already initialised: then it keeps the
	// allocator it has.
	pageMem.ok = sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_MALLOC, libc.VaList(bp, m)) == sqlite3.SQLITE_OK
}

func origMalloc(tls *libc.TLS, n int32) uintptr {
	return (*(*func(*libc.TLS, int32) uintptr)(unsafe.Pointer(&struct{ uintptr }{pageMem.orig.FxMalloc})))(tls, n)
}

func origFree(tls *libc.TLS, p uintptr) {
	(*(*func(*libc.TLS, uintptr))(unsafe.Pointer(&struct{ uintptr }{pageMem.orig.FxFree})))(tls, p)
}

// isSlot reports whether p, from this allocator, is a page slot.
func isSlot(p uintptr) bool { return *(*int64)(cptr(p - 8)) < 0 }

// isPage reports whether an allocation of n bytes goes to a slot.
func isPage(n int32) bool { return n > 4096 && n <= pageAlloc }

func pageMemMalloc(tls *libc.TLS, n int32) uintptr {
	if !isPage(n) {
		return origMalloc(tls, n)
	}
	pageMem.Lock()
	defer pageMem.Unlock()
	ci := -1
	if pageMem.spare >= 0 {
		ci, pageMem.spare = pageMem.spare, -1
	} else {
		for n := len(pageMem.open); n > 0; n = len(pageMem.open) {
			i := pageMem.open[n-1]
			if c := pageMem.chunks[i]; c != nil && c.listed && len(c.free) > 0 {
				ci = i
				break
			}
			pageMem.open = pageMem.open[:n-1]
			if c := pageMem.chunks[i]; c != nil {
				c.listed = false
			}
		}
	}
	if ci < 0 {
		base := origMalloc(tls, int32(pageSlots*slotSize))
		if base == 0 {
			return 0
		}
		c := &pageChunk{base: base, free: make([]uint8, pageSlots), listed: true}
		for i := range c.free {
			// Taken from the end: the lowest slots first, so that the
			// chunk's memory becomes resident in order.
			c.free[i] = uint8(pageSlots - 1 - i)
		}
		if n := len(pageMem.holes); n > 0 {
			ci = pageMem.holes[n-1]
			pageMem.holes = pageMem.holes[:n-1]
			pageMem.chunks[ci] = c
		} else {
			ci = len(pageMem.chunks)
			pageMem.chunks = append(pageMem.chunks, c)
		}
		pageMem.open = append(pageMem.open, ci)
	}
	c := pageMem.chunks[ci]
	s := c.free[len(c.free)-1]
	c.free = c.free[:len(c.free)-1]
	pageMem.inUse++
	slot := c.base + uintptr(s)*slotSize
	*(*int64)(cptr(slot)) = ^int64(ci)<<8 | int64(s) // negative: see isSlot
	return slot + 8
}

func pageMemFree(tls *libc.TLS, p uintptr) {
	if !isSlot(p) {
		origFree(tls, p)
		return
	}
	w := *(*int64)(cptr(p - 8))
	ci, s := int(^(w >> 8)), uint8(w&0xff)
	pageMem.Lock()
	defer pageMem.Unlock()
	c := pageMem.chunks[ci]
	c.free = append(c.free, s)
	pageMem.inUse--
	if !c.listed {
		c.listed = true
		pageMem.open = append(pageMem.open, ci)
	}
	if len(c.free) < pageSlots {
		return
	}
	if pageMem.spare < 0 {
		pageMem.spare = ci
		return
	}
	pageMem.chunks[ci] = nil
	pageMem.holes = append(pageMem.holes, ci)
	origFree(tls, c.base)
}

func pageMemSize(tls *libc.TLS, p uintptr) int32 {
	if isSlot(p) {
		return pageAlloc
	}
	return (*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{pageMem.orig.FxSize})))(tls, p)
}

func pageMemRoundup(tls *libc.TLS, n int32) int32 {
	if isPage(n) {
		return pageAlloc
	}
	return (*(*func(*libc.TLS, int32) int32)(unsafe.Pointer(&struct{ uintptr }{pageMem.orig.FxRoundup})))(tls, n)
}

func pageMemRealloc(tls *libc.TLS, p uintptr, n int32) uintptr {
	if !isSlot(p) {
		if !isPage(n) {
			return (*(*func(*libc.TLS, uintptr, int32) uintptr)(unsafe.Pointer(&struct{ uintptr }{pageMem.orig.FxRealloc})))(tls, p, n)
		}
	} else if isPage(n) {
		return p
	}
	q := pageMemMalloc(tls, n)
	if q == 0 {
		return 0
	}
	old := pageMemSize(tls, p)
	k := int(min(old, n))
	copy(unsafe.Slice((*byte)(cptr(q)), k), unsafe.Slice((*byte)(cptr(p)), k))
	pageMemFree(tls, p)
	return q
}
