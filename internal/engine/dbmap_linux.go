package engine

import (
	"sync/atomic"
	"syscall"

	sqlite3 "modernc.org/sqlite/lib"
)

// dbKept counts the unmaps of a whole database file skipped because the
// mapping was current (tests).
var dbKept atomic.Uint64

// dbMappingCurrent reports whether the mapping of the database file (the
// default unix VFS's, in its unixFile at file) covers what mapping the
// file again would: mapped, no page of it fetched, and the file's size,
// capped at the mapping limit, what it was when mapped.
func dbMappingCurrent(file uintptr) bool {
	u := (*sqlite3.TunixFile)(cptr(file))
	if u.FpMapRegion == 0 || u.FnFetchOut != 0 || u.FmmapSize <= 0 {
		return false
	}
	var st syscall.Stat_t
	if syscall.Fstat(int(u.Fh), &st) != nil {
		return false
	}
	return min(st.Size, u.FmmapSizeMax) == u.FmmapSize
}
