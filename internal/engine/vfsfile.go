package engine

import (
	"path/filepath"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// vfsFile is a database file opened through SQLite's default VFS, the way
// a connection opens it, for the few things the engine does to a file
// without a connection: read its first bytes (checkHeader, probeNeeded)
// and take its rollback-mode locks (removeNewCompanions).
//
// It goes through the VFS, never os.Open, because SQLite's locks on a
// database file are POSIX record locks, which belong to the process and
// are all dropped when any descriptor of the file is closed. Another
// connection of this process may have the file open and locked; the VFS
// knows, counts this file's locks with theirs, and defers closing the
// descriptor until their locks are released.
type vfsFile struct {
	tls    *libc.TLS
	allocs []uintptr
	file   uintptr // the sqlite3_file
	io     *sqlite3.Tsqlite3_io_methods
	zName  uintptr // the file name as xOpen got it; freed by close
}

// openVFSFile opens the main database file at path through the default VFS
// with the given SQLITE_OPEN_* flags (SQLITE_OPEN_MAIN_DB is added). It
// never creates the file unless flags ask for it. The caller must close it.
func openVFSFile(path string, flags int32) (*vfsFile, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	f := &vfsFile{tls: libc.NewTLS()}
	fail := func(err error) (*vfsFile, error) {
		f.free()
		return nil, err
	}
	vfs := sqlite3.Xsqlite3_vfs_find(f.tls, 0)
	if vfs == 0 {
		return fail(errNoMem)
	}
	v := (*sqlite3.Tsqlite3_vfs)(cptr(vfs))
	zDb, zJournal, zWal := f.cstr(abs), f.cstr(abs+"-journal"), f.cstr(abs+"-wal")
	file, pOut := f.alloc(int(v.FszOsFile)), f.alloc(8)
	if zDb == 0 || zJournal == 0 || zWal == 0 || file == 0 || pOut == 0 {
		return fail(errNoMem)
	}
	// A main-database file name, as xOpen expects (its URI parameters and
	// companion names follow it in memory).
	f.zName = sqlite3.Xsqlite3_create_filename(f.tls, zDb, zJournal, zWal, 0, 0)
	if f.zName == 0 {
		return fail(errNoMem)
	}
	xOpen := *(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{v.FxOpen}))
	if rc := xOpen(f.tls, vfs, f.zName, file, flags|sqlite3.SQLITE_OPEN_MAIN_DB, pOut); rc != sqlite3.SQLITE_OK {
		return fail(&Error{code: int(rc), msg: "cannot open the file"})
	}
	methods := (*sqlite3.Tsqlite3_file)(cptr(file)).FpMethods
	if methods == 0 {
		return fail(&Error{code: sqlite3.SQLITE_CANTOPEN, msg: "cannot open the file"})
	}
	f.file, f.io = file, (*sqlite3.Tsqlite3_io_methods)(cptr(methods))
	return f, nil
}

// alloc returns n zeroed bytes of SQLite's heap, freed by close (0: out of
// memory).
func (f *vfsFile) alloc(n int) uintptr {
	p := sqlite3.Xsqlite3_malloc64(f.tls, uint64(n))
	if p != 0 {
		clear(unsafe.Slice((*byte)(cptr(p)), n))
		f.allocs = append(f.allocs, p)
	}
	return p
}

// cstr returns s as a C string, freed by close (0: out of memory).
func (f *vfsFile) cstr(s string) uintptr {
	p := f.alloc(len(s) + 1)
	if p != 0 {
		copy(unsafe.Slice((*byte)(cptr(p)), len(s)), s)
	}
	return p
}

// read returns the first n bytes of the file (zeros past its end).
func (f *vfsFile) read(n int) ([]byte, error) {
	buf := f.alloc(n)
	if buf == 0 {
		return nil, errNoMem
	}
	xRead := *(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&struct{ uintptr }{f.io.FxRead}))
	// A short read is not an error here: the rest of buf is zeros.
	if rc := xRead(f.tls, f.file, buf, int32(n), 0); rc != sqlite3.SQLITE_OK && rc != sqlite3.SQLITE_IOERR_SHORT_READ {
		return nil, &Error{code: int(rc), msg: "cannot read the file's header"}
	}
	return append([]byte(nil), unsafe.Slice((*byte)(cptr(buf)), n)...), nil
}

// lock raises the file's lock to level (SQLITE_LOCK_SHARED, _RESERVED or
// _EXCLUSIVE) without waiting: it reports whether the lock was granted.
func (f *vfsFile) lock(level int32) bool {
	xLock := *(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&struct{ uintptr }{f.io.FxLock}))
	return xLock(f.tls, f.file, level) == sqlite3.SQLITE_OK
}

// close releases every lock the file holds and closes it.
func (f *vfsFile) close() {
	if f.file != 0 {
		xUnlock := *(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&struct{ uintptr }{f.io.FxUnlock}))
		xUnlock(f.tls, f.file, sqlite3.SQLITE_LOCK_NONE)
		xClose := *(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{f.io.FxClose}))
		xClose(f.tls, f.file)
		f.file = 0
	}
	f.free()
}

func (f *vfsFile) free() {
	if f.zName != 0 {
		sqlite3.Xsqlite3_free_filename(f.tls, f.zName)
		f.zName = 0
	}
	for _, p := range f.allocs {
		sqlite3.Xsqlite3_free(f.tls, p)
	}
	f.allocs = nil
	f.tls.Close()
}

// readHead returns the first n bytes of the file at path (zeros past its
// end), read through the default VFS (see vfsFile).
func readHead(path string, n int) ([]byte, error) {
	f, err := openVFSFile(path, sqlite3.SQLITE_OPEN_READONLY)
	if err != nil {
		if c := Code(err); c != 0 {
			return nil, &Error{code: c, msg: "cannot open the file to read its header"}
		}
		return nil, err
	}
	defer f.close()
	return f.read(n)
}

// lockAlone takes an EXCLUSIVE rollback-mode lock on the database file at
// path, without waiting, and runs fn while holding it; it reports whether
// fn ran. This is how SQLite itself knows, when a connection closes, that
// it is the last one on the file and may delete the -wal and -shm
// (sqlite3WalClose): every connection that has the file open in WAL mode
// holds a SHARED lock on it from its first read to its close, and one in
// rollback mode holds at least SHARED while it reads or writes, so the
// EXCLUSIVE lock is granted only while no connection, of this process or
// another, is using the file or its companions. It is not granted on a
// file this process cannot open for writing.
func lockAlone(path string, fn func()) bool {
	f, err := openVFSFile(path, sqlite3.SQLITE_OPEN_READWRITE)
	if err != nil {
		return false
	}
	defer f.close()
	if !f.lock(sqlite3.SQLITE_LOCK_SHARED) || !f.lock(sqlite3.SQLITE_LOCK_RESERVED) || !f.lock(sqlite3.SQLITE_LOCK_EXCLUSIVE) {
		return false
	}
	fn()
	return true
}
