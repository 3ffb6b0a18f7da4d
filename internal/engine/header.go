package engine

import "fmt"

// checkHeader refuses an existing, non-empty file that does not start with
// SQLite's header: SQLite itself takes a file shorter than one page for an
// empty database and would write over it.
//
// The file is read through SQLite's default VFS, not with os.Open (see
// vfsFile).
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
