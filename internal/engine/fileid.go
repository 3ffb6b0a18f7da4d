package engine

import (
	"fmt"
	"os"
)

// The file a store's readers open.
//
// A store opens its read connections by path, when a read first needs one
// and again after closing one, while its writer keeps the file it opened
// at Open. Once another program has deleted or renamed the file and made
// another at the same path (a script that reuses a directory, a restore
// from a backup), a new reader opened that other file: reads answered from
// another store, and a column family whose creation stamp the other
// store's catalog did not hold was reported dropped, for good. Open keeps
// what it found at the path, and a new reader checks, once it has its file
// open, that the path still names that file; one that does not is closed
// and refused with ErrCantOpen. (A reader open before the file was
// replaced keeps reading the store's file, as the writer does.)

// sameFile closes the new reader c and returns an error wrapping
// ErrCantOpen when the store's path no longer names the file Open found
// there. The path is read after c opened its file: a replacement made
// before that is seen.
func (db *DB) sameFile(c *Conn) error {
	if db.file == nil {
		return nil
	}
	st, err := os.Stat(db.cfg.Path)
	if err == nil && os.SameFile(db.file, st) {
		return nil
	}
	_ = c.close()
	if err != nil {
		return fmt.Errorf("%q: %w: %w", db.cfg.Path, ErrCantOpen, err)
	}
	return fmt.Errorf("%q: %w: another file is at the path now (the store's file was deleted or renamed since Open)", db.cfg.Path, ErrCantOpen)
}
