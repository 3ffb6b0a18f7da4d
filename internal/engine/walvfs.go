package engine

import (
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// WAL frames in batches.
//
// SQLite appends each frame to the WAL with two writes: its 24-byte header,
// then the page right after it (walWriteOneFrame). Each is a system call,
// and a transaction that changes thousands of pages (10,000 random updates,
// 5,000 random deletes, a bulk load, each spill of a full cache) made twice
// as many as it has frames. Stores on files open through walVFS, a VFS that
// is the default one except for WAL files, where it holds frames back and
// writes them together: the same bytes at the same offsets, one write for
// up to walBatch bytes of consecutive frames (16 frames of 4 KiB pages).
//
// No commit leaves any of itself in this process's memory. The frame that
// ends a commit says so in its header (the database's size after the
// commit, 0 in every other frame): once its page is held, every frame held
// is written at once, before SQLite goes on to publish the commit in the
// WAL index. Frames held before that belong to a transaction nobody else
// can see yet, and they are written before any other operation on the file
// that could see them (a read of the bytes held, a sync, a truncation, its
// size, a file control, its close) and before any write elsewhere, so the
// file SQLite reads is always the one it wrote. A process killed with
// frames held loses only frames of a transaction that had not committed.
//
// A transaction that overwrote frames it had spilled rewrites the
// checksums of every frame from the first it overwrote at its commit
// (walRewriteChecksums), reading each frame and writing its 24-byte header
// back: thousands of header-only writes after 10,000 random updates. With
// the WAL mapped (below), each rewritten header is held with its frame's
// page taken from the mapping (the bytes just read, unchanged on the file),
// so consecutive frames again go out in one write; the commit frame is the
// last rewritten, and its batch is written at once. Without the mapping
// each rewritten header is written alone, as SQLite writes it.
//
// Reads of a WAL from a mapping.
//
// SQLite maps the database file (mmap_size) but reads every page it takes
// from the WAL with a system call: a reader whose snapshot includes a
// large commit not yet copied into the database file, the writer reading
// back the pages a large transaction spilled, and the checkpoint copying
// frames into the database file read a page each so. A store opened with
// memory-mapped reads (Config.MmapSize) passes walMapParam, and walVFS
// maps each of its WAL files, read-only and shared, for MmapSize bytes
// whatever the file's size (walmap_linux.go): a read of bytes inside the
// mapping is a copy from it; past it, the file's own read.
//
// On Linux a shared mapping shows every write to the file at once, this
// process's or another's, and a truncated file's pages past its end are
// simply absent. SQLite never reads a WAL past its end (it reads frames
// below its snapshot's last, and a checkpoint truncates the file only when
// no reader reads those): a read that faults there all the same (a page
// past the end) is caught and left to the file's own read, which reports
// it short, as before. Nothing is written through the mapping.

// walFrameHeader is the size of a WAL frame header (WAL_FRAME_HDRSIZE) and
// walHeaderSize that of the WAL header, which precedes the first frame.
const (
	walFrameHeader = 24
	walHeaderSize  = 32
)

// walVFSName is the name walVFS registers under.
const walVFSName = "snkv-wal"

// walMapParam is the URI parameter of a store opened through walVFS
// that maps its WAL files for reads: the bytes mapped (see walRead).
const walMapParam = "snkv_walmap"

// walFile is the state walVFS keeps for a WAL file, in SQLite's memory
// right after the default VFS's own sqlite3_file.
type walFile struct {
	inner   uintptr // the default VFS's methods for this file
	buf     uintptr // frames held back: a header, its page, the next header, ...
	bufLen  int32   // bytes allocated at buf
	held    int32   // bytes held at buf (0: none), to be written at heldOff
	heldOff int64
	// commit is 1 when the last header held is a commit frame's: its page
	// goes out at once, with every frame held before it.
	commit  int32
	readOff int64   // the offset of the last operation, when it was a read
	read    int32   // 1: the last operation was a read (at readOff)
	readN   int32   // its length
	mapBase uintptr // the file mapped for reads (0: none; see walMapOpen)
	mapLen  int64
}

// walBatch is the most bytes of frames walVFS holds back (16 frames of
// 4 KiB pages); the buffer shrinks back to one frame at each commit.
const walBatch = 16 * (walFrameHeader + 4096)

var (
	walVFSOnce   sync.Once
	walVFSOK     bool
	walParent    uintptr // the default VFS
	walParSz     int32   // its szOsFile, rounded up to 8
	walMethods   uintptr // the io methods walVFS gives WAL files
	walInner     uintptr // the default VFS's io methods they wrap
	walMapParamC uintptr // walMapParam as a C string
)

// walVFS registers walVFS once and returns its name ("" if it could not
// be registered: stores then open with the default VFS, as before).
func walVFS() string {
	walVFSOnce.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		parent := sqlite3.Xsqlite3_vfs_find(tls, 0)
		if parent == 0 {
			return
		}
		pv := (*sqlite3.Tsqlite3_vfs)(cptr(parent))
		sz := unsafe.Sizeof(sqlite3.Tsqlite3_vfs{})
		v := sqlite3.Xsqlite3_malloc64(tls, uint64(sz))
		name := sqlite3.Xsqlite3_malloc64(tls, uint64(len(walVFSName)+1))
		m := sqlite3.Xsqlite3_malloc64(tls, uint64(unsafe.Sizeof(sqlite3.Tsqlite3_io_methods{})))
		param := sqlite3.Xsqlite3_malloc64(tls, uint64(len(walMapParam)+1))
		if v == 0 || name == 0 || m == 0 || param == 0 {
			sqlite3.Xsqlite3_free(tls, v)
			sqlite3.Xsqlite3_free(tls, name)
			sqlite3.Xsqlite3_free(tls, m)
			sqlite3.Xsqlite3_free(tls, param)
			return
		}
		copy(unsafe.Slice((*byte)(cptr(name)), len(walVFSName)+1), walVFSName+"\x00")
		copy(unsafe.Slice((*byte)(cptr(param)), len(walMapParam)+1), walMapParam+"\x00")
		walMapParamC = param
		walParent = parent
		walParSz = (pv.FszOsFile + 7) &^ 7
		vv := (*sqlite3.Tsqlite3_vfs)(cptr(v))
		*vv = *pv
		vv.FpNext = 0
		vv.FzName = name
		vv.FszOsFile = walParSz + int32(unsafe.Sizeof(walFile{}))
		vv.FxOpen = cfunc(walOpen)
		walMethods = m
		// The methods are filled in by the first WAL file's open, from the
		// default VFS's methods for it.
		if sqlite3.Xsqlite3_vfs_register(tls, v, 0) != sqlite3.SQLITE_OK {
			return // the VFS and its methods stay allocated: a few bytes, once
		}
		walVFSOK = true
	})
	if !walVFSOK {
		return ""
	}
	return walVFSName
}

var walMethodsMu sync.Mutex

// walWrites counts, for tests, the frames walVFS wrote in one write
// (merged) and the header-only writes that follow a read of the same
// frame, which it never holds (rewrites).
var walWrites struct{ merged, rewrites, mapped, batches, heldRewrites atomic.Uint64 }

// walOpen is walVFS's xOpen: the default VFS opens the file, and a WAL
// file gets walVFS's methods.
func walOpen(tls *libc.TLS, _ uintptr, zName uintptr, file uintptr, flags int32, pOutFlags uintptr) int32 {
	xOpen := *(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{(*sqlite3.Tsqlite3_vfs)(cptr(walParent)).FxOpen}))
	rc := xOpen(tls, walParent, zName, file, flags, pOutFlags)
	f := (*sqlite3.Tsqlite3_file)(cptr(file))
	if rc == sqlite3.SQLITE_OK && flags&sqlite3.SQLITE_OPEN_MAIN_DB != 0 && f.FpMethods != 0 {
		dbWrap(tls, zName, f)
		return rc
	}
	if rc != sqlite3.SQLITE_OK || flags&sqlite3.SQLITE_OPEN_WAL == 0 || f.FpMethods == 0 {
		return rc
	}
	walMethodsMu.Lock()
	if walInner == 0 {
		walInner = f.FpMethods
		m := (*sqlite3.Tsqlite3_io_methods)(cptr(walMethods))
		*m = *(*sqlite3.Tsqlite3_io_methods)(cptr(walInner))
		m.FxClose = cfunc(walClose)
		m.FxRead = cfunc(walRead)
		m.FxWrite = cfunc(walWrite)
		m.FxTruncate = cfunc(walTruncate)
		m.FxSync = cfunc(walSync)
		m.FxFileSize = cfunc(walFileSize)
		m.FxFileControl = cfunc(walFileControl)
	}
	same := walInner == f.FpMethods
	walMethodsMu.Unlock()
	if !same {
		return rc // methods this wrapper was not made for: left as they are
	}
	w := walState(file)
	*w = walFile{inner: f.FpMethods}
	if walMapSupported {
		if n := sqlite3.Xsqlite3_uri_int64(tls, zName, walMapParamC, 0); n > 0 {
			if w.mapBase = walMapOpen(file, n); w.mapBase != 0 {
				w.mapLen = n
			}
		}
	}
	f.FpMethods = walMethods
	return rc
}

// walState returns the walFile of an open WAL file.
func walState(file uintptr) *walFile { return (*walFile)(cptr(file + uintptr(walParSz))) }

func (w *walFile) methods() *sqlite3.Tsqlite3_io_methods {
	return (*sqlite3.Tsqlite3_io_methods)(cptr(w.inner))
}

func (w *walFile) write(tls *libc.TLS, file, buf uintptr, n int32, off int64) int32 {
	x := *(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&struct{ uintptr }{w.methods().FxWrite}))
	return x(tls, file, buf, n, off)
}

// flush writes the frames held, if any.
func (w *walFile) flush(tls *libc.TLS, file uintptr) int32 {
	w.read = 0
	if w.held == 0 {
		return sqlite3.SQLITE_OK
	}
	n := w.held
	w.held, w.commit = 0, 0
	if n > 2*(walFrameHeader+512) {
		walWrites.batches.Add(1) // more than one frame (of pages of 512 bytes or more)
	}
	return w.write(tls, file, w.buf, n, w.heldOff)
}

// room makes buf hold at least n bytes, keeping the bytes held; it reports
// false when memory is short.
func (w *walFile) room(tls *libc.TLS, n int32) bool {
	if n <= w.bufLen {
		return true
	}
	if w.bufLen == 0 {
		n = max(n, walFrameHeader+4096) // a header and the default page size
	} else {
		n = max(n, walBatch) // a second frame: room for a batch at once
	}
	p := sqlite3.Xsqlite3_realloc64(tls, w.buf, uint64(n))
	if p == 0 {
		return false
	}
	w.buf, w.bufLen = p, n
	return true
}

// shrink gives back what buf holds past one frame of n-byte pages, once
// nothing is held: a large transaction's batch does not outlive it.
func (w *walFile) shrink(tls *libc.TLS, n int32) {
	keep := walFrameHeader + max(n, 4096)
	if w.held != 0 || w.bufLen <= keep {
		return
	}
	if p := sqlite3.Xsqlite3_realloc64(tls, w.buf, uint64(keep)); p != 0 {
		w.buf, w.bufLen = p, keep
	}
}

func walWrite(tls *libc.TLS, file, buf uintptr, n int32, off int64) int32 {
	w := walState(file)
	rewrite := w.read != 0 && w.readOff == off // walRewriteChecksums
	if rewrite {
		walWrites.rewrites.Add(1)
		if n == walFrameHeader {
			if ok, rc := w.holdRewrite(tls, file, buf, off); ok || rc != sqlite3.SQLITE_OK {
				return rc
			}
		}
	} else if w.held != 0 && off == w.heldOff+int64(w.held) && n > 0 &&
		(w.held+n <= walBatch || w.held == walFrameHeader) && w.room(tls, w.held+n) {
		// The next bytes of the frames held: a page after its header, or
		// the next frame's header.
		libc.Xmemcpy(tls, w.buf+uintptr(w.held), buf, libc.Tsize_t(n))
		w.held, w.read = w.held+n, 0
		if n == walFrameHeader {
			w.commit = walCommitFrame(buf)
			return sqlite3.SQLITE_OK
		}
		walWrites.merged.Add(1)
		if w.commit == 0 && w.held+walFrameHeader+n <= walBatch {
			return sqlite3.SQLITE_OK // room for another frame
		}
		commit := w.commit != 0
		rc := w.flush(tls, file)
		if commit {
			w.shrink(tls, n)
		}
		return rc
	}
	commit := w.commit != 0 // a commit frame's page that did not fit the batch
	if rc := w.flush(tls, file); rc != sqlite3.SQLITE_OK {
		return rc
	}
	if n == walFrameHeader && off >= walHeaderSize && !rewrite && w.room(tls, walFrameHeader) {
		libc.Xmemcpy(tls, w.buf, buf, walFrameHeader)
		w.held, w.heldOff, w.commit = walFrameHeader, off, walCommitFrame(buf)
		return sqlite3.SQLITE_OK
	}
	rc := w.write(tls, file, buf, n, off)
	if commit {
		w.shrink(tls, n)
	}
	return rc
}

// holdRewrite holds the header hdr that walRewriteChecksums rewrites at
// off, with the frame's page from the mapping (the file's bytes, which it
// has just read): the rewritten frames of a commit go out in batches,
// contiguous with the frames held before them, and the batch that holds
// the commit frame (the last one rewritten) goes out at once. It reports
// false, holding nothing more, where it cannot (no mapping there, memory
// short): the header is then written alone; rc is the error of a batch
// it wrote.
func (w *walFile) holdRewrite(tls *libc.TLS, file, hdr uintptr, off int64) (ok bool, rc int32) {
	page := w.readN - walFrameHeader
	if w.mapBase == 0 || page <= 0 || off+int64(walFrameHeader+page) > w.mapLen {
		return false, sqlite3.SQLITE_OK
	}
	frame := walFrameHeader + page
	if w.held == 0 || off != w.heldOff+int64(w.held) || w.held+frame > walBatch {
		if rc := w.flush(tls, file); rc != sqlite3.SQLITE_OK {
			return false, rc
		}
		w.heldOff = off
	}
	if !w.room(tls, w.held+frame) || !walMapRead(w.mapBase, w.buf+uintptr(w.held+walFrameHeader), page, off+walFrameHeader) {
		return false, sqlite3.SQLITE_OK // the header is written after what is held
	}
	libc.Xmemcpy(tls, w.buf+uintptr(w.held), hdr, walFrameHeader)
	w.held, w.read = w.held+frame, 0
	walWrites.heldRewrites.Add(1)
	if commit := walCommitFrame(hdr) != 0; commit || w.held+frame > walBatch {
		rc := w.flush(tls, file)
		if commit {
			w.shrink(tls, page)
		}
		return true, rc
	}
	return true, sqlite3.SQLITE_OK
}

// walCommitFrame returns 1 if the frame header at h is a commit frame's
// (its second field, the database size after the commit, is not 0).
func walCommitFrame(h uintptr) int32 {
	if *(*uint32)(cptr(h + 4)) != 0 {
		return 1
	}
	return 0
}

func walRead(tls *libc.TLS, file, buf uintptr, n int32, off int64) int32 {
	w := walState(file)
	if w.held != 0 && off < w.heldOff+int64(w.held) && off+int64(n) > w.heldOff {
		// Bytes held: written first. A read elsewhere leaves them held
		// (walRewriteChecksums reads each frame before rewriting it).
		if rc := w.flush(tls, file); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	w.read, w.readOff, w.readN = 1, off, n
	if w.mapBase != 0 && off >= 0 && n > 0 && off+int64(n) <= w.mapLen && walMapRead(w.mapBase, buf, n, off) {
		walWrites.mapped.Add(1)
		return sqlite3.SQLITE_OK
	}
	x := *(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&struct{ uintptr }{w.methods().FxRead}))
	return x(tls, file, buf, n, off)
}

func walTruncate(tls *libc.TLS, file uintptr, size int64) int32 {
	w := walState(file)
	if rc := w.flush(tls, file); rc != sqlite3.SQLITE_OK {
		return rc
	}
	x := *(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&struct{ uintptr }{w.methods().FxTruncate}))
	return x(tls, file, size)
}

func walSync(tls *libc.TLS, file uintptr, flags int32) int32 {
	w := walState(file)
	if rc := w.flush(tls, file); rc != sqlite3.SQLITE_OK {
		return rc
	}
	x := *(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&struct{ uintptr }{w.methods().FxSync}))
	return x(tls, file, flags)
}

func walFileSize(tls *libc.TLS, file, pSize uintptr) int32 {
	w := walState(file)
	if rc := w.flush(tls, file); rc != sqlite3.SQLITE_OK {
		return rc
	}
	x := *(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{w.methods().FxFileSize}))
	return x(tls, file, pSize)
}

func walFileControl(tls *libc.TLS, file uintptr, op int32, arg uintptr) int32 {
	w := walState(file)
	if rc := w.flush(tls, file); rc != sqlite3.SQLITE_OK {
		return rc
	}
	x := *(*func(*libc.TLS, uintptr, int32, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{w.methods().FxFileControl}))
	return x(tls, file, op, arg)
}

func walClose(tls *libc.TLS, file uintptr) int32 {
	w := walState(file)
	rc := w.flush(tls, file)
	x := *(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{w.methods().FxClose}))
	if rc2 := x(tls, file); rc == sqlite3.SQLITE_OK {
		rc = rc2
	}
	if w.buf != 0 {
		sqlite3.Xsqlite3_free(tls, w.buf)
	}
	if w.mapBase != 0 {
		walMapClose(w.mapBase, w.mapLen)
	}
	*w = walFile{}
	return rc
}

// cfunc returns the Go function f as a C function pointer of
// modernc.org/libc (a pointer to the function value).
func cfunc[F any](f F) uintptr { return *(*uintptr)(unsafe.Pointer(&f)) }

// walMapDSN returns the URI parameter that maps a store's WAL files for
// reads, mmap bytes each ("" for none).
func walMapDSN(mmap int64) string {
	if !walMapSupported || mmap <= 0 {
		return ""
	}
	return "&" + walMapParam + "=" + strconv.FormatInt(mmap, 10)
}
