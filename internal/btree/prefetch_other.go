//go:build !snkv_nofast && (!amd64 || purego)

package btree

// havePrefetch reports whether prefetch asks the CPU for anything: not on
// this platform, so the seek does not compute what to ask for.
const havePrefetch = false

// prefetch does nothing on this platform (see prefetch_amd64.go).
func prefetch(uintptr) {}
