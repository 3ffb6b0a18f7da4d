//go:build !snkv_nofast && amd64 && !purego

package btree

// havePrefetch reports whether prefetch asks the CPU for anything.
const havePrefetch = true

// prefetch asks for the cache line at p to be brought into the CPU's
// caches (PREFETCHT0). It is a hint: it reads nothing, cannot fault (an
// address that is not mapped is ignored) and does not wait for the line.
//
//go:noescape
func prefetch(p uintptr)
