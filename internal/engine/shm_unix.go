//go:build linux || darwin || freebsd || netbsd || openbsd

package engine

import (
	"os"
	"syscall"
	"unsafe"
)

// shmMapLen is how much of the -shm file is mapped: its first page holds
// the WAL-index header (bytes 0-95).
const shmMapLen = 4096

// mapShm maps the start of the WAL-index file path read-only, shared, so
// that the mapping sees every write SQLite makes to it from any process.
func mapShm(path string) (*shmView, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < shmMapLen {
		// A -shm file shorter than a page is not one SQLite has mapped.
		return nil, errNoShm
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, shmMapLen, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	return &shmView{p: unsafe.Pointer(&b[0]), unmap: func() { _ = syscall.Munmap(b) }}, nil
}
