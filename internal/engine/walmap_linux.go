//go:build linux

package engine

import (
	"runtime/debug"
	"syscall"
	"unsafe"

	sqlite3 "modernc.org/sqlite/lib"
)

// walMapSupported reports whether WAL files may be mapped here: Linux,
// whose page cache makes a shared mapping see every write to the file at
// once, on a 64-bit platform (the mapping reserves address space).
const walMapSupported = unsafe.Sizeof(uintptr(0)) == 8

// walMapOpen maps size bytes of the open WAL file (a file of the default
// unix VFS), whatever its size now; it returns 0 if the mapping fails.
func walMapOpen(file uintptr, size int64) uintptr {
	return walMapFD(int((*sqlite3.TunixFile)(cptr(file)).Fh), size)
}

// walMapFD maps size bytes of the file open on fd for reads, shared.
func walMapFD(fd int, size int64) uintptr {
	if fd < 0 || size <= 0 {
		return 0
	}
	b, err := syscall.Mmap(fd, 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return 0
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(b)))
}

// walMapClose removes a mapping made by walMapOpen.
func walMapClose(base uintptr, size int64) {
	_ = syscall.Munmap(unsafe.Slice((*byte)(cptr(base)), size))
}

// walMapRead copies n bytes at off of the mapping at base into buf. It
// reports false, having copied part or nothing, if the bytes lie past the
// end of the file (the mapping covers more than the file): the read is
// then left to the file's own read, which reports it short.
func walMapRead(base, buf uintptr, n int32, off int64) (ok bool) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if recover() != nil {
			ok = false
		}
	}()
	copy(unsafe.Slice((*byte)(cptr(buf)), n), unsafe.Slice((*byte)(cptr(base+uintptr(off))), n))
	return true
}
