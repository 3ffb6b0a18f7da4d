package engine

import (
	"sync"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// A database file's mapping kept across read transactions.
//
// A connection that reads the database file through a memory mapping
// (Config.MmapSize) unmaps the whole file whenever it begins a read
// transaction on a snapshot another connection changed (SQLite's pager
// calls xUnfetch(0, NULL), "the file may have changed size"), and maps it
// again at its next read. In a store every read connection sees the
// writer's commits, so after each commit each reader tore its mapping
// down and took a page fault for every page it then touched: 50,000
// existence checks after a large delete took about 2,800 faults, a sixth
// of their time, where a connection that kept its mapping takes none.
//
// Stores opened with memory-mapped reads open their database file through
// walVFS, whose methods for it are the default VFS's but for xUnfetch: an
// unmap of the whole file is skipped when the mapping already covers what
// a new one would (the file's size, at most the mapping limit, unchanged;
// no page of it fetched). A shared mapping shows the file's bytes as they
// are, whatever was written since it was made, so a kept mapping reads
// what a new one would; a file that grew or shrank is unmapped as before
// (dbmap_linux.go).

var (
	dbMethodsMu sync.Mutex
	dbInner     uintptr // the default VFS's methods for a database file
	dbMethods   uintptr // dbInner with dbUnfetch
)

// dbWrap gives the database file f, just opened by the default VFS,
// walVFS's database methods when its store maps its files for reads.
func dbWrap(tls *libc.TLS, zName uintptr, f *sqlite3.Tsqlite3_file) {
	if !walMapSupported || sqlite3.Xsqlite3_uri_int64(tls, zName, walMapParamC, 0) <= 0 {
		return
	}
	dbMethodsMu.Lock()
	defer dbMethodsMu.Unlock()
	if dbInner == 0 {
		m := sqlite3.Xsqlite3_malloc64(tls, uint64(unsafe.Sizeof(sqlite3.Tsqlite3_io_methods{})))
		if m == 0 {
			return
		}
		inner := (*sqlite3.Tsqlite3_io_methods)(cptr(f.FpMethods))
		if inner.FiVersion < 3 || inner.FxUnfetch == 0 {
			sqlite3.Xsqlite3_free(tls, m)
			return
		}
		mm := (*sqlite3.Tsqlite3_io_methods)(cptr(m))
		*mm = *inner
		mm.FxUnfetch = cfunc(dbUnfetch)
		dbInner, dbMethods = f.FpMethods, m
	}
	if f.FpMethods == dbInner { // methods this wrapper was made for
		f.FpMethods = dbMethods
	}
}

// dbUnfetch is xUnfetch of a database file opened through walVFS.
func dbUnfetch(tls *libc.TLS, file uintptr, off int64, p uintptr) int32 {
	if p == 0 && dbMappingCurrent(file) {
		dbKept.Add(1)
		return sqlite3.SQLITE_OK
	}
	x := *(*func(*libc.TLS, uintptr, int64, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{(*sqlite3.Tsqlite3_io_methods)(cptr(dbInner)).FxUnfetch}))
	return x(tls, file, off, p)
}
