//go:build !linux

package engine

// walMapSupported is false: WAL files are read with the file's own reads.
const walMapSupported = false

func walMapOpen(uintptr, int64) uintptr              { return 0 }
func walMapClose(uintptr, int64)                     {}
func walMapRead(uintptr, uintptr, int32, int64) bool { return false }
