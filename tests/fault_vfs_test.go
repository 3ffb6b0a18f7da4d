//go:build linux

package tests

import (
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"

	"modernc.org/libc"
	sqlitelib "modernc.org/sqlite/lib"
)

// The fault injector replaces the write system calls of SQLite's unix VFS
// (through the VFS's own xSetSystemCall hook, which SQLite provides for
// exactly this kind of testing) with wrappers that fail the n-th write
// after arming, with EIO or ENOSPC. It covers every file SQLite writes
// with pwrite/write (database, -wal, -journal, a backup's destination) and
// truncations (ftruncate). It is process-wide: tests that arm it must not
// run in parallel with other tests of this package (none uses t.Parallel).

// faults is the injector's state.
var faults struct {
	once      sync.Once
	installed bool
	countdown atomic.Int64 // the write that reaches 0 fails; <= 0 when disarmed
	armed     atomic.Bool
	errno     atomic.Int32
	hits      atomic.Int64 // faults injected since arming
	calls     atomic.Int64 // writes seen since arming

	// The original system calls, and the wrappers kept reachable (SQLite
	// holds only their addresses).
	pwrite    func(tls *libc.TLS, fd int32, buf uintptr, n uint64, off int64) int64
	write     func(tls *libc.TLS, fd int32, buf uintptr, n uint64) int64
	ftruncate func(tls *libc.TLS, fd int32, off int64) int32
	keep      []any
}

// funcPtr is the C function pointer modernc's SQLite uses for a Go func
// value: the address of the func value's closure.
func funcPtr[F any](f F) uintptr { return *(*uintptr)(unsafe.Pointer(&f)) }

// cmem turns an address in SQLite's memory (outside the Go heap) into a
// pointer.
func cmem(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// fromPtr turns a C function pointer of modernc's SQLite into a Go func.
func fromPtr[F any](p uintptr) F {
	return *(*F)(unsafe.Pointer(&struct{ uintptr }{p}))
}

// inject decides whether this write fails, setting errno if so.
func inject(tls *libc.TLS) bool {
	if !faults.armed.Load() {
		return false
	}
	faults.calls.Add(1)
	if faults.countdown.Add(-1) != 0 {
		return false
	}
	faults.hits.Add(1)
	*(*int32)(cmem(libc.X__errno_location(tls))) = faults.errno.Load()
	return true
}

// installFaults puts the wrappers in place (once per process); it reports
// false where the VFS does not offer the hook.
func installFaults(t *testing.T) bool {
	t.Helper()
	faults.once.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		vfs := sqlitelib.Xsqlite3_vfs_find(tls, 0)
		if vfs == 0 {
			return
		}
		v := (*sqlitelib.Tsqlite3_vfs)(cmem(vfs))
		if v.FxSetSystemCall == 0 || v.FxGetSystemCall == 0 {
			return
		}
		set := fromPtr[func(*libc.TLS, uintptr, uintptr, uintptr) int32](v.FxSetSystemCall)
		get := fromPtr[func(*libc.TLS, uintptr, uintptr) uintptr](v.FxGetSystemCall)
		name := func(s string) uintptr {
			p, err := libc.CString(s)
			if err != nil {
				panic(err)
			}
			return p
		}
		pw, w, ft := name("pwrite"), name("write"), name("ftruncate")
		op, ow, oft := get(tls, vfs, pw), get(tls, vfs, w), get(tls, vfs, ft)
		if op == 0 || ow == 0 || oft == 0 {
			return
		}
		faults.pwrite = fromPtr[func(*libc.TLS, int32, uintptr, uint64, int64) int64](op)
		faults.write = fromPtr[func(*libc.TLS, int32, uintptr, uint64) int64](ow)
		faults.ftruncate = fromPtr[func(*libc.TLS, int32, int64) int32](oft)
		pwrite := func(tls *libc.TLS, fd int32, buf uintptr, n uint64, off int64) int64 {
			if inject(tls) {
				return -1
			}
			return faults.pwrite(tls, fd, buf, n, off)
		}
		write := func(tls *libc.TLS, fd int32, buf uintptr, n uint64) int64 {
			if inject(tls) {
				return -1
			}
			return faults.write(tls, fd, buf, n)
		}
		ftruncate := func(tls *libc.TLS, fd int32, off int64) int32 {
			if inject(tls) {
				return -1
			}
			return faults.ftruncate(tls, fd, off)
		}
		faults.keep = []any{pwrite, write, ftruncate}
		if set(tls, vfs, pw, funcPtr(pwrite)) != 0 || set(tls, vfs, w, funcPtr(write)) != 0 || set(tls, vfs, ft, funcPtr(ftruncate)) != 0 {
			return
		}
		faults.installed = true
	})
	return faults.installed
}

// armFault makes the n-th write from now fail with errno.
func armFault(n int64, errno syscall.Errno) {
	faults.hits.Store(0)
	faults.calls.Store(0)
	faults.errno.Store(int32(errno))
	faults.countdown.Store(n)
	faults.armed.Store(true)
}

// disarmFault stops injecting and reports whether a fault was injected.
func disarmFault() (hit bool) {
	faults.armed.Store(false)
	faults.countdown.Store(0)
	return faults.hits.Load() > 0
}
