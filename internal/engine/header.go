package engine

import (
	"fmt"
	"time"
)

// checkHeader refuses an existing, non-empty file that does not start with
// SQLite's header: SQLite itself takes a file shorter than one page for an
// empty database and would write over it.
//
// The file is read through SQLite's default VFS, not with os.Open (see
// vfsFile). A file whose first bytes are all zeros may be one another
// process is creating this instant: SQLite's unix VFS grows a new file
// (ftruncate, with memory mapping on) just before it writes the first
// page, and a header read in between finds zeros. Such a file is read
// again for up to headerWait before it is refused.
func checkHeader(path string, size int64) error {
	if size == 0 {
		return nil
	}
	deadline := time.Now().Add(headerWait)
	for pause := time.Millisecond; ; pause = min(2*pause, 20*time.Millisecond) {
		head, err := readHead(path, len(sqliteMagic))
		if err != nil {
			return fmt.Errorf("snkv: open %q: %w: %w", path, ErrCantOpen, err)
		}
		if size >= int64(len(sqliteMagic)) && string(head) == sqliteMagic {
			return nil
		}
		if !allZero(head) || time.Now().After(deadline) {
			return fmt.Errorf("snkv: open %q: %w: %d-byte file without a SQLite header", path, ErrCorrupt, size)
		}
		time.Sleep(pause)
	}
}

// headerWait is how long checkHeader reads again a file whose header is
// still zeros.
const headerWait = 250 * time.Millisecond

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
