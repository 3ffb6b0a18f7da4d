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
// what it found at the path, and a new reader checks, before and after it
// opens its file, that the path still names that file; where it does not,
// the reader is refused with ErrCantOpen (newReader). A reader open before
// the file was replaced keeps reading the store's file, as the writer does.
// The checkpointer's connection, opened at its first pass, and a writer
// opened to replace a broken one are checked the same way: the first
// would copy the store's WAL into the other file, the second would write
// to it.

// newReader opens a read connection on the file Open found at the path
// (openSame).
func (db *DB) newReader() (*Conn, error) {
	return db.openSame(func() (*Conn, error) { return db.newConn(false) })
}

// openSame opens a connection with open, on the file Open found at the
// path: it checks the path before opening the connection (a file deleted
// without another made in its place is then not created anew, empty, by
// the open) and again after, so that a replacement made before the open
// is seen. Every connection a store opens after Open goes through it:
// readers, the checkpointer's (which would otherwise copy the store's WAL
// into the other file), and a writer replacing a broken one.
func (db *DB) openSame(open func() (*Conn, error)) (*Conn, error) {
	if err := db.samePath(); err != nil {
		return nil, err
	}
	c, err := open()
	if err != nil {
		return nil, err
	}
	if err := db.samePath(); err != nil {
		_ = c.close()
		return nil, err
	}
	return c, nil
}

// samePath returns an error wrapping ErrCantOpen when the store's path no
// longer names the file Open found there.
func (db *DB) samePath() error {
	if db.file == nil {
		return nil
	}
	st, err := os.Stat(db.cfg.Path)
	switch {
	case err != nil:
		return fmt.Errorf("%q: %w: %w", db.cfg.Path, ErrCantOpen, err)
	case !os.SameFile(db.file, st):
		return fmt.Errorf("%q: %w: another file is at the path now (the store's file was deleted or renamed since Open)", db.cfg.Path, ErrCantOpen)
	}
	return nil
}
