//go:build linux

package tests

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"modernc.org/libc"
	sqlitelib "modernc.org/sqlite/lib"
)

// The power-loss recorder: a VFS that SQLite's default one is wrapped in
// for the power-loss suite's children. It registers as the default VFS
// (before the store opens, so that the store's own WAL VFS wraps it in
// turn), and for the database file, its -wal and a -journal it appends to a
// log every write (with its bytes), truncation (a size hint that changes
// the file's size included), sync (xSync: fsync or fdatasync of that file)
// and deletion, in the order they happen. The parent rebuilds from the log the files a power cut
// could leave (powerImage). The -shm file is not recorded: it is shared
// memory, rebuilt by SQLite's recovery after a power cut, and removed from
// every image.
//
// After the cut-th recorded operation the recorder stops the run: it
// writes the line "cut" to stdout and blocks every later file operation
// forever, so that the log, the files on disk and the commits the child
// reported (before the block, a commit's writes are in the log) describe
// one moment. The parent then kills the child.

// Kinds of a power log record.
const (
	powerOpWrite    = 'W'
	powerOpTruncate = 'T'
	powerOpSync     = 'S'
	powerOpDelete   = 'D'
)

// powerRecord is one operation of the log: op on the file name (a base
// name), at off with data (a write) or to size off (a truncation).
type powerRecord struct {
	op   byte
	name string
	off  int64
	data []byte
}

// powerRec is the recorder's state in the child.
var powerRec struct {
	mu sync.Mutex
	// hint is held through a size hint's change of the file and its
	// record, and by every count of an operation (powerAfter), so that
	// the cut never falls between the two: a size hint changes the file
	// before it can be recorded (whether it does is known only after).
	hint    sync.Mutex
	log     *os.File
	cut     int64 // stop after this many operations (0: never)
	ops     int64
	stopped bool

	parent  uintptr             // the default VFS it wraps
	parSz   int32               // the parent's szOsFile, rounded up to 8
	methods map[uintptr]uintptr // the parent's io methods of a file -> the recorder's that wrap them
	names   map[int32]string    // the base names of open recorded files
	nextID  int32
	keep    []any
}

// powerFile is the recorder's state of an open recorded file, in SQLite's
// memory right after the parent's sqlite3_file.
type powerFile struct {
	inner uintptr // the parent's io methods for it
	id    int32   // its name's key in powerRec.names
}

// installPowerRecorder registers the recorder as the default VFS, logging
// to logPath and stopping the run after cut operations (0: never).
func installPowerRecorder(logPath string, cut int64) error {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	r := &powerRec
	r.log, r.cut, r.names = f, cut, map[int32]string{}
	tls := libc.NewTLS()
	defer tls.Close()
	parent := sqlitelib.Xsqlite3_vfs_find(tls, 0)
	if parent == 0 {
		return errors.New("power recorder: no default VFS")
	}
	pv := (*sqlitelib.Tsqlite3_vfs)(cmem(parent))
	v := sqlitelib.Xsqlite3_malloc64(tls, uint64(unsafe.Sizeof(sqlitelib.Tsqlite3_vfs{})))
	name, err := libc.CString("snkv-powerloss")
	if v == 0 || err != nil {
		return errors.New("power recorder: out of memory")
	}
	r.parent, r.parSz, r.methods = parent, (pv.FszOsFile+7)&^7, map[uintptr]uintptr{}
	vv := (*sqlitelib.Tsqlite3_vfs)(cmem(v))
	*vv = *pv
	vv.FpNext = 0
	vv.FzName = name
	vv.FszOsFile = r.parSz + int32(unsafe.Sizeof(powerFile{}))
	vv.FxOpen = funcPtr(powerOpen)
	vv.FxDelete = funcPtr(powerDelete)
	r.keep = append(r.keep, powerOpen, powerDelete, powerClose, powerWrite, powerTruncate, powerSync, powerFileControl)
	if rc := sqlitelib.Xsqlite3_vfs_register(tls, v, 1); rc != sqlitelib.SQLITE_OK {
		return fmt.Errorf("power recorder: register: rc %d", rc)
	}
	return nil
}

// powerLog appends one operation to the log, or blocks forever once
// the run is stopped; it reports false when it could not log (the
// operation then fails).
func powerLog(op byte, name string, off int64, data []byte) bool {
	r := &powerRec
	r.mu.Lock()
	if r.stopped {
		select {} // the run is over: no operation after the cut happens
	}
	b := make([]byte, 0, 1+1+len(name)+8+4+len(data))
	b = append(b, op, byte(len(name)))
	b = append(b, name...)
	b = binary.LittleEndian.AppendUint64(b, uint64(off))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	b = append(b, data...)
	_, err := r.log.Write(b)
	r.mu.Unlock()
	return err == nil
}

// powerAfter counts an operation done and stops the run at the cut.
func powerAfter() {
	powerRec.hint.Lock()
	defer powerRec.hint.Unlock()
	powerCount()
}

// powerCount is powerAfter with powerRec.hint held.
func powerCount() {
	r := &powerRec
	r.mu.Lock()
	r.ops++
	if r.cut > 0 && r.ops >= r.cut {
		r.stopped = true
		crashSay("cut")
	}
	r.mu.Unlock()
}

func powerState(file uintptr) *powerFile { return (*powerFile)(cmem(file + uintptr(powerRec.parSz))) }

func powerName(file uintptr) string {
	powerRec.mu.Lock()
	defer powerRec.mu.Unlock()
	return powerRec.names[powerState(file).id]
}

// powerInner returns the parent's io methods of the recorded file.
func powerInner(file uintptr) *sqlitelib.Tsqlite3_io_methods {
	return (*sqlitelib.Tsqlite3_io_methods)(cmem(powerState(file).inner))
}

func powerOpen(tls *libc.TLS, _ uintptr, zName uintptr, file uintptr, flags int32, pOutFlags uintptr) int32 {
	r := &powerRec
	xOpen := fromPtr[func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32]((*sqlitelib.Tsqlite3_vfs)(cmem(r.parent)).FxOpen)
	rc := xOpen(tls, r.parent, zName, file, flags, pOutFlags)
	f := (*sqlitelib.Tsqlite3_file)(cmem(file))
	if rc != sqlitelib.SQLITE_OK || zName == 0 || f.FpMethods == 0 ||
		flags&(sqlitelib.SQLITE_OPEN_MAIN_DB|sqlitelib.SQLITE_OPEN_WAL|sqlitelib.SQLITE_OPEN_MAIN_JOURNAL) == 0 {
		return rc
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// The unix VFS gives a database file its locking methods and a WAL or
	// journal file methods without locks: one wrapper for each.
	m, ok := r.methods[f.FpMethods]
	if !ok {
		m = sqlitelib.Xsqlite3_malloc64(tls, uint64(unsafe.Sizeof(sqlitelib.Tsqlite3_io_methods{})))
		if m == 0 {
			closeFn := fromPtr[func(*libc.TLS, uintptr) int32]((*sqlitelib.Tsqlite3_io_methods)(cmem(f.FpMethods)).FxClose)
			closeFn(tls, file)
			f.FpMethods = 0
			return sqlitelib.SQLITE_NOMEM
		}
		mm := (*sqlitelib.Tsqlite3_io_methods)(cmem(m))
		*mm = *(*sqlitelib.Tsqlite3_io_methods)(cmem(f.FpMethods))
		mm.FxClose = funcPtr(powerClose)
		mm.FxWrite = funcPtr(powerWrite)
		mm.FxTruncate = funcPtr(powerTruncate)
		mm.FxSync = funcPtr(powerSync)
		mm.FxFileControl = funcPtr(powerFileControl)
		r.methods[f.FpMethods] = m
	}
	r.nextID++
	r.names[r.nextID] = filepath.Base(libc.GoString(zName))
	*powerState(file) = powerFile{inner: f.FpMethods, id: r.nextID}
	f.FpMethods = m
	return rc
}

func powerDelete(tls *libc.TLS, _ uintptr, zName uintptr, syncDir int32) int32 {
	r := &powerRec
	name := filepath.Base(libc.GoString(zName))
	record := !strings.HasSuffix(name, "-shm")
	if record && !powerLog(powerOpDelete, name, 0, nil) {
		return sqlitelib.SQLITE_IOERR_DELETE
	}
	x := fromPtr[func(*libc.TLS, uintptr, uintptr, int32) int32]((*sqlitelib.Tsqlite3_vfs)(cmem(r.parent)).FxDelete)
	rc := x(tls, r.parent, zName, syncDir)
	if record {
		powerAfter()
	}
	return rc
}

func powerClose(tls *libc.TLS, file uintptr) int32 {
	x := fromPtr[func(*libc.TLS, uintptr) int32](powerInner(file).FxClose)
	powerRec.mu.Lock()
	delete(powerRec.names, powerState(file).id)
	powerRec.mu.Unlock()
	return x(tls, file)
}

func powerWrite(tls *libc.TLS, file, buf uintptr, n int32, off int64) int32 {
	data := unsafe.Slice((*byte)(cmem(buf)), n)
	if !powerLog(powerOpWrite, powerName(file), off, data) {
		return sqlitelib.SQLITE_IOERR_WRITE
	}
	x := fromPtr[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](powerInner(file).FxWrite)
	rc := x(tls, file, buf, n, off)
	powerAfter()
	return rc
}

func powerTruncate(tls *libc.TLS, file uintptr, size int64) int32 {
	if !powerLog(powerOpTruncate, powerName(file), size, nil) {
		return sqlitelib.SQLITE_IOERR_TRUNCATE
	}
	x := fromPtr[func(*libc.TLS, uintptr, int64) int32](powerInner(file).FxTruncate)
	rc := x(tls, file, size)
	powerAfter()
	return rc
}

func powerSync(tls *libc.TLS, file uintptr, flags int32) int32 {
	x := fromPtr[func(*libc.TLS, uintptr, int32) int32](powerInner(file).FxSync)
	rc := x(tls, file, flags)
	if rc == sqlitelib.SQLITE_OK && !powerLog(powerOpSync, powerName(file), 0, nil) {
		return sqlitelib.SQLITE_IOERR_FSYNC
	}
	powerAfter()
	return rc
}

// powerFileControl passes a file control on. A size hint may change the
// file's size without a write (with memory mapping on, the unix VFS grows
// the database file with ftruncate before a checkpoint writes its pages):
// a change is logged as the truncation it is.
func powerFileControl(tls *libc.TLS, file uintptr, op int32, arg uintptr) int32 {
	m := powerInner(file)
	x := fromPtr[func(*libc.TLS, uintptr, int32, uintptr) int32](m.FxFileControl)
	if op != sqlitelib.SQLITE_FCNTL_SIZE_HINT {
		return x(tls, file, op, arg)
	}
	size := fromPtr[func(*libc.TLS, uintptr, uintptr) int32](m.FxFileSize)
	p := sqlitelib.Xsqlite3_malloc64(tls, 8)
	if p == 0 {
		return sqlitelib.SQLITE_NOMEM
	}
	defer sqlitelib.Xsqlite3_free(tls, p)
	powerRec.hint.Lock()
	defer powerRec.hint.Unlock()
	powerRec.mu.Lock()
	stopped := powerRec.stopped
	powerRec.mu.Unlock()
	if stopped {
		select {} // the run is over: the hint would change the file after the cut
	}
	if rc := size(tls, file, p); rc != sqlitelib.SQLITE_OK {
		return rc
	}
	before := *(*int64)(cmem(p))
	rc := x(tls, file, op, arg)
	if size(tls, file, p) == sqlitelib.SQLITE_OK {
		if after := *(*int64)(cmem(p)); after != before {
			if !powerLog(powerOpTruncate, powerName(file), after, nil) {
				return sqlitelib.SQLITE_IOERR_TRUNCATE
			}
			powerCount()
		}
	}
	return rc
}

// readPowerLog reads a power log; a record cut short at its end (the
// child was killed while appending it) is dropped, as an operation that
// did not happen.
func readPowerLog(path string) ([]powerRecord, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []powerRecord
	for len(b) > 0 {
		if len(b) < 2 || len(b) < 2+int(b[1])+12 {
			break
		}
		rec := powerRecord{op: b[0], name: string(b[2 : 2+b[1]])}
		p := b[2+b[1]:]
		rec.off = int64(binary.LittleEndian.Uint64(p))
		n := int(binary.LittleEndian.Uint32(p[8:]))
		p = p[12:]
		if len(p) < n {
			break
		}
		if n > 0 {
			rec.data = p[:n:n]
		}
		out = append(out, rec)
		b = p[n:]
	}
	return out, nil
}
