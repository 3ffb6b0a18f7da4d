package btree

import (
	"fmt"
	"runtime/debug"
	"sync"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The versions the fast path was written and tested against. Another
// version of modernc.org/sqlite (a program's go.mod may require a newer
// one than snkv's) may keep every signature and field name and still
// change what they mean: the fast path then stays off and every write and
// scan runs its SQL statement. docs/upgrading.md says how to move them.
const (
	PinnedSQLiteModule = "v1.61.1"
	PinnedLibcModule   = "v1.79.0"
	PinnedSQLite       = 3054001 // SQLITE_VERSION_NUMBER of the library
)

var (
	compatOnce sync.Once
	compatErr  error
)

// Compatible reports whether the SQLite this program is built with is the
// one the fast path was verified against (nil), or why not.
func Compatible() error {
	compatOnce.Do(func() { compatErr = checkVersions() })
	return compatErr
}

func checkVersions() error {
	tls := libc.NewTLS()
	v := sqlite3.Xsqlite3_libversion_number(tls)
	tls.Close()
	if v != PinnedSQLite {
		return fmt.Errorf("SQLite %d, not %d", v, PinnedSQLite)
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return nil // no module information (a test binary of some builds): the library's own version decides
	}
	for _, m := range info.Deps {
		got := m.Version
		if m.Replace != nil {
			got = m.Replace.Version
		}
		switch m.Path {
		case "modernc.org/sqlite":
			if got != PinnedSQLiteModule {
				return fmt.Errorf("modernc.org/sqlite %s, not %s", got, PinnedSQLiteModule)
			}
		case "modernc.org/libc":
			if got != PinnedLibcModule {
				return fmt.Errorf("modernc.org/libc %s, not %s", got, PinnedLibcModule)
			}
		}
	}
	return nil
}
