//go:build linux || darwin || freebsd || netbsd || openbsd

package engine

import (
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// walIndexRegion is the size of one region of the WAL index (SQLite's
// WALINDEX_PGSZ); the first holds the WAL-index header (bytes 0-95).
const walIndexRegion = 32768

// mapShm returns SQLite's own mapping of the first region of the WAL index
// of the database c is open on, asked of c's file through the VFS's xShmMap
// method (which hands out the region a connection already has mapped).
//
// The process must never open and close the -shm file itself: SQLite's
// locks on it are POSIX record locks, which belong to the process, and
// closing any descriptor of the file drops all of them (the dead man switch
// every user of the WAL index holds, and the read marks of open read
// transactions). Another process then takes itself for the only user,
// truncates and rebuilds the -shm file under this one's mappings, and
// checkpoints over pages that readers here still read.
//
// The mapping belongs to SQLite: it stays valid while any connection of
// this process has the file open in WAL mode, so the DB reads it only
// through an open reader and forgets it when the last reader closes
// (closeShm).
func mapShm(c *Conn) (*shmView, error) {
	zMain, err := c.cString("main")
	if err != nil {
		return nil, err
	}
	defer sqlite3.Xsqlite3_free(c.tls, zMain)
	slot := sqlite3.Xsqlite3_malloc64(c.tls, uint64(unsafe.Sizeof(uintptr(0))))
	if slot == 0 {
		return nil, errNoMem
	}
	defer sqlite3.Xsqlite3_free(c.tls, slot)
	out := (*uintptr)(cptr(slot))
	*out = 0
	if sqlite3.Xsqlite3_file_control(c.tls, c.db, zMain, sqlite3.SQLITE_FCNTL_FILE_POINTER, slot) != sqlite3.SQLITE_OK || *out == 0 {
		return nil, errNoShm
	}
	file := *out
	methods := (*sqlite3.Tsqlite3_file)(cptr(file)).FpMethods
	if methods == 0 {
		return nil, errNoShm // the file is not open
	}
	io := (*sqlite3.Tsqlite3_io_methods)(cptr(methods))
	if io.FiVersion < 2 || io.FxShmMap == 0 {
		return nil, errNoShm // a VFS without shared memory
	}
	xShmMap := *(*func(*libc.TLS, uintptr, int32, int32, int32, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{io.FxShmMap}))
	*out = 0
	// bExtend 0: map the region only if it exists; never grow the file.
	if xShmMap(c.tls, file, 0, walIndexRegion, 0, slot) != sqlite3.SQLITE_OK || *out == 0 {
		return nil, errNoShm
	}
	return &shmView{p: cptr(*out)}, nil
}
