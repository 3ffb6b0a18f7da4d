package engine

import (
	"fmt"
	"path/filepath"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// checkHeader refuses an existing, non-empty file that does not start with
// SQLite's header: SQLite itself takes a file shorter than one page for an
// empty database and would write over it.
//
// The file is read through SQLite's default VFS, not with os.Open: SQLite's
// locks on a database file are POSIX record locks, which belong to the
// process and are all dropped when any descriptor of the file is closed.
// Another store or connection of this process may have the file open (and
// locked) already; SQLite's VFS knows, and defers closing its descriptor
// until those locks are released.
func checkHeader(path string, size int64) error {
	if size == 0 {
		return nil
	}
	head, err := readHead(path, len(sqliteMagic))
	if err != nil {
		return fmt.Errorf("snkv: open %q: %w: %w", path, ErrCantOpen, err)
	}
	if size < int64(len(sqliteMagic)) || string(head) != sqliteMagic {
		return fmt.Errorf("snkv: open %q: %w: %d-byte file without a SQLite header", path, ErrCorrupt, size)
	}
	return nil
}

// readHead returns the first n bytes of the file at path (zeros past its
// end), read with the default VFS's xOpen, xRead and xClose.
func readHead(path string, n int) ([]byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	tls := libc.NewTLS()
	defer tls.Close()
	var allocs []uintptr
	defer func() {
		for _, p := range allocs {
			sqlite3.Xsqlite3_free(tls, p)
		}
	}()
	alloc := func(size int) uintptr {
		p := sqlite3.Xsqlite3_malloc64(tls, uint64(size))
		if p != 0 {
			clear(unsafe.Slice((*byte)(cptr(p)), size))
			allocs = append(allocs, p)
		}
		return p
	}
	cstr := func(s string) uintptr {
		p := alloc(len(s) + 1)
		if p != 0 {
			copy(unsafe.Slice((*byte)(cptr(p)), len(s)), s)
		}
		return p
	}
	vfs := sqlite3.Xsqlite3_vfs_find(tls, 0)
	if vfs == 0 {
		return nil, errNoMem
	}
	v := (*sqlite3.Tsqlite3_vfs)(cptr(vfs))
	zDb, zJournal, zWal := cstr(abs), cstr(abs+"-journal"), cstr(abs+"-wal")
	file, pOut, buf := alloc(int(v.FszOsFile)), alloc(8), alloc(n)
	if zDb == 0 || zJournal == 0 || zWal == 0 || file == 0 || pOut == 0 || buf == 0 {
		return nil, errNoMem
	}
	// A main-database file name, as xOpen expects (its URI parameters and
	// companion names follow it in memory).
	zName := sqlite3.Xsqlite3_create_filename(tls, zDb, zJournal, zWal, 0, 0)
	if zName == 0 {
		return nil, errNoMem
	}
	defer sqlite3.Xsqlite3_free_filename(tls, zName)
	xOpen := *(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{v.FxOpen}))
	if rc := xOpen(tls, vfs, zName, file, sqlite3.SQLITE_OPEN_READONLY|sqlite3.SQLITE_OPEN_MAIN_DB, pOut); rc != sqlite3.SQLITE_OK {
		return nil, &Error{code: int(rc), msg: "cannot open the file to read its header"}
	}
	methods := (*sqlite3.Tsqlite3_file)(cptr(file)).FpMethods
	if methods == 0 {
		return nil, &Error{code: sqlite3.SQLITE_CANTOPEN, msg: "cannot open the file to read its header"}
	}
	io := (*sqlite3.Tsqlite3_io_methods)(cptr(methods))
	xClose := *(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{io.FxClose}))
	defer xClose(tls, file)
	xRead := *(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&struct{ uintptr }{io.FxRead}))
	// A short read is not an error here: the rest of buf is zeros.
	if rc := xRead(tls, file, buf, int32(n), 0); rc != sqlite3.SQLITE_OK && rc != sqlite3.SQLITE_IOERR_SHORT_READ {
		return nil, &Error{code: int(rc), msg: "cannot read the file's header"}
	}
	return append([]byte(nil), unsafe.Slice((*byte)(cptr(buf)), n)...), nil
}
