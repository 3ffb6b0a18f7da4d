//go:build !snkv_nofast

package btree

import (
	_ "unsafe" // go:linkname

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite's internal functions this package calls, as modernc.org/sqlite/lib
// defines them. Each signature must match the pinned version exactly: a
// function that is gone fails to link, but go:linkname binds by name, so a
// changed signature is caught only by the version check (Compatible),
// which keeps the fast path off on any other version (docs/upgrading.md).

//go:linkname btreeCursorSize modernc.org/sqlite/lib._sqlite3BtreeCursorSize
func btreeCursorSize(tls *libc.TLS) int32

//go:linkname btreeCursorZero modernc.org/sqlite/lib._sqlite3BtreeCursorZero
func btreeCursorZero(tls *libc.TLS, p uintptr)

//go:linkname btreeCursor modernc.org/sqlite/lib._sqlite3BtreeCursor
func btreeCursor(tls *libc.TLS, p uintptr, iTable sqlite3.TPgno, wrFlag int32, pKeyInfo uintptr, pCur uintptr) int32

//go:linkname btreeCloseCursor modernc.org/sqlite/lib._sqlite3BtreeCloseCursor
func btreeCloseCursor(tls *libc.TLS, pCur uintptr) int32

//go:linkname btreeInsert modernc.org/sqlite/lib._sqlite3BtreeInsert
func btreeInsert(tls *libc.TLS, pCur uintptr, pX uintptr, flags int32, seekResult int32) int32

//go:linkname btreeGetMeta modernc.org/sqlite/lib._sqlite3BtreeGetMeta
func btreeGetMeta(tls *libc.TLS, p uintptr, idx int32, pMeta uintptr)

//go:linkname btreeTxnState modernc.org/sqlite/lib._sqlite3BtreeTxnState
func btreeTxnState(tls *libc.TLS, p uintptr) int32

//go:linkname findTable modernc.org/sqlite/lib._sqlite3FindTable
func findTable(tls *libc.TLS, db uintptr, zName uintptr, zDatabase uintptr) uintptr

//go:linkname keyInfoAlloc modernc.org/sqlite/lib._sqlite3KeyInfoAlloc
func keyInfoAlloc(tls *libc.TLS, db uintptr, N int32, X int32) uintptr

//go:linkname keyInfoUnref modernc.org/sqlite/lib._sqlite3KeyInfoUnref
func keyInfoUnref(tls *libc.TLS, p uintptr)

//go:linkname btreeIndexMoveto modernc.org/sqlite/lib._sqlite3BtreeIndexMoveto
func btreeIndexMoveto(tls *libc.TLS, pCur uintptr, pIdxKey uintptr, pRes uintptr) int32

//go:linkname btreeDelete modernc.org/sqlite/lib._sqlite3BtreeDelete
func btreeDelete(tls *libc.TLS, pCur uintptr, flags sqlite3.Tu8) int32

//go:linkname btreeFirst modernc.org/sqlite/lib._sqlite3BtreeFirst
func btreeFirst(tls *libc.TLS, pCur uintptr, pRes uintptr) int32

//go:linkname btreeLast modernc.org/sqlite/lib._sqlite3BtreeLast
func btreeLast(tls *libc.TLS, pCur uintptr, pRes uintptr) int32

//go:linkname btreeNext modernc.org/sqlite/lib._sqlite3BtreeNext
func btreeNext(tls *libc.TLS, pCur uintptr, flags int32) int32

//go:linkname btreePrevious modernc.org/sqlite/lib._sqlite3BtreePrevious
func btreePrevious(tls *libc.TLS, pCur uintptr, flags int32) int32

//go:linkname btreeEof modernc.org/sqlite/lib._sqlite3BtreeEof
func btreeEof(tls *libc.TLS, pCur uintptr) int32

//go:linkname btreePayloadSize modernc.org/sqlite/lib._sqlite3BtreePayloadSize
func btreePayloadSize(tls *libc.TLS, pCur uintptr) sqlite3.Tu32

//go:linkname btreePayloadFetch modernc.org/sqlite/lib._sqlite3BtreePayloadFetch
func btreePayloadFetch(tls *libc.TLS, pCur uintptr, pAmt uintptr) uintptr

//go:linkname btreePayload modernc.org/sqlite/lib._sqlite3BtreePayload
func btreePayload(tls *libc.TLS, pCur uintptr, offset sqlite3.Tu32, amt sqlite3.Tu32, pBuf uintptr) int32

// The descent of sqlite3BtreeIndexMoveto, which seekIndex repeats.

//go:linkname moveToRoot modernc.org/sqlite/lib._moveToRoot
func moveToRoot(tls *libc.TLS, pCur uintptr) int32

//go:linkname moveToChild modernc.org/sqlite/lib._moveToChild
func moveToChild(tls *libc.TLS, pCur uintptr, newPgno sqlite3.Tu32) int32

//go:linkname cursorOnLastPage modernc.org/sqlite/lib._cursorOnLastPage
func cursorOnLastPage(tls *libc.TLS, pCur uintptr) int32

// The page fetch of a descent, which seekHeld makes to keep interior pages
// for a read transaction (interior.go).

//go:linkname getAndInitPage modernc.org/sqlite/lib._getAndInitPage
func getAndInitPage(tls *libc.TLS, pBt uintptr, pgno sqlite3.TPgno, ppPage uintptr, bReadOnly int32) int32

//go:linkname releasePage modernc.org/sqlite/lib._releasePage
func releasePage(tls *libc.TLS, pPage uintptr)
