package engine

import (
	"context"
	"errors"
	"fmt"
	"os"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// companionSuffixes are the files SQLite keeps beside a database.
var companionSuffixes = []string{"-wal", "-shm", "-journal"}

// existingCompanions records which companion files of path exist now.
func existingCompanions(path string) map[string]bool {
	m := make(map[string]bool, len(companionSuffixes))
	for _, s := range companionSuffixes {
		_, err := os.Lstat(path + s)
		m[s] = err == nil
	}
	return m
}

// createFile creates the file at path, which must not exist, with the
// permission bits mode (less the umask, as for any file a process
// creates). The file is new, so no connection of this process has it open:
// closing the descriptor drops no lock SQLite holds.
func createFile(path string, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, mode)
	if errors.Is(err, os.ErrExist) {
		return nil // made meanwhile by another process or connection
	}
	if err != nil {
		return fmt.Errorf("snkv: open %q: %w: %w", path, ErrCantOpen, err)
	}
	return f.Close()
}

// ownerWritableCompanions gives the owner write permission on the -wal and
// -shm files this DB's first connection created, when SQLite gave them
// none. SQLite creates them with the store file's mode, so opening a store
// whose file is read-only (mode 0444; read-only opens are the common case)
// leaves a read-only -wal and -shm behind; once the store file is writable
// again, the next writer would open them read-only and fail every write
// with "attempt to write a readonly database". The files are changed by
// path, never opened: closing a descriptor of the -shm would drop the
// locks SQLite holds on it. A file owned by another user is left alone.
func (db *DB) ownerWritableCompanions() {
	if db.immutable || db.companions == nil {
		return
	}
	for _, s := range []string{"-wal", "-shm"} {
		if db.companions[s] {
			continue // not ours
		}
		st, err := os.Lstat(db.cfg.Path + s)
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o200 != 0 || !ownedByUs(st) {
			continue
		}
		_ = os.Chmod(db.cfg.Path+s, st.Mode().Perm()|0o200)
	}
}

// staleCompanions refuses to open a writer on a store whose -wal, -shm or
// -journal file exists but cannot be written by this process: SQLite would
// open it read-only and fail every write with "attempt to write a readonly
// database", without naming the file. Such files are left by a read-only
// open of a read-only store file by older versions, or by other tools.
func staleCompanions(path string) error {
	if !writable(path) {
		return nil // the store file itself: SQLite reports that as it is
	}
	for _, s := range companionSuffixes {
		// Another process may remove the file between the two looks (a
		// -journal at the end of its commit): only a file that is there
		// and refuses writing is reported.
		st, err := os.Lstat(path + s)
		if err != nil || !writeDenied(path+s) {
			continue
		}
		// Only an index (-shm) or an empty WAL may go: a -wal with frames
		// holds commits, a -journal the rollback of an interrupted one.
		fix := "make it writable (chmod u+w); do not remove it: it holds data"
		if s == "-shm" || (s == "-wal" && st.Size() == 0) {
			fix = "when no process has the store open, remove it (SQLite makes it again), or make it writable (chmod u+w)"
		}
		return fmt.Errorf("snkv: open %q: %w: %s cannot be written by this process (mode %v), so no write could commit; it is left over from a read-only open (by an older version or another tool): %s",
			path, ErrReadOnly, path+s, st.Mode().Perm(), fix)
	}
	return nil
}

// removeNewCompanions removes the companion files that did not exist when
// Open began, so that a refused or failed open leaves the directory as it
// found it, but only where that cannot harm another connection: another
// process (or another store of this one) may have opened the file since
// and be using a -wal and -shm of its own making. So the files are removed
// only under an EXCLUSIVE lock on the database file (lockAlone: the proof
// SQLite itself asks for before deleting a WAL), and only those that hold
// nothing: the -shm (an index SQLite rebuilds from the -wal), and a -wal or
// -journal without a byte in it. A -wal with frames holds commits and a
// -journal the rollback of an interrupted transaction: whoever wrote them,
// they stay, for the next open to replay. Where the lock is not granted,
// every file stays.
func (db *DB) removeNewCompanions() {
	if db.memDir != "" || db.companions == nil {
		return // an in-memory store's directory goes whole
	}
	lockAlone(db.cfg.Path, func() {
		for _, s := range companionSuffixes {
			if db.companions[s] {
				continue
			}
			name := db.cfg.Path + s
			st, err := os.Lstat(name)
			if err != nil || !st.Mode().IsRegular() || (s != "-shm" && st.Size() != 0) {
				continue
			}
			_ = os.Remove(name)
		}
	})
}

// Discard closes a DB that Open's caller refused (a file that is not a
// store, a newer format): unlike Close, it never checkpoints, so a WAL that
// another application left pending stays in its -wal file, and it removes
// the companion files this DB created where no other connection may be
// using them (see removeNewCompanions). The file and its companions are
// left as they were found, unless another connection has meanwhile made
// them its own.
func (db *DB) Discard() error {
	if !db.closed.CompareAndSwap(false, true) {
		return ErrClosed
	}
	close(db.closing)
	var err error
	if db.writer != nil {
		db.ckpt.interrupt()
		w := <-db.writer
		db.ckpt.stop(true)
		w.noCheckpointOnClose()
		err = w.close()
	}
	for {
		select {
		case c := <-db.readers:
			c.noCheckpointOnClose()
			_ = c.close()
			db.readerClosed()
			continue
		default:
		}
		break
	}
	db.removeNewCompanions()
	db.writerEnded()
	return err
}

// noCheckpointOnClose tells SQLite not to checkpoint (and so not to delete
// the -wal file) when this connection, the last on the file, closes.
func (c *Conn) noCheckpointOnClose() {
	const vaSlot = 8 // libc.VaList stride per argument
	bp := sqlite3.Xsqlite3_malloc64(c.tls, 2*vaSlot)
	if bp == 0 {
		return
	}
	defer sqlite3.Xsqlite3_free(c.tls, bp)
	sqlite3.Xsqlite3_db_config(c.tls, c.db, sqlite3.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, libc.VaList(bp, int32(1), uintptr(0)))
}

// Immutable reports whether a read-only store was opened with SQLite's
// immutable flag because its file system is read-only (see readOnlyFS).
func (db *DB) Immutable() bool { return db.immutable }

// readOnlyFS reports whether a read-only open of path must use SQLite's
// immutable mode: the file lives on a read-only file system, where SQLite
// cannot create the -shm file a WAL reader needs, and it has no WAL
// content that immutable mode would ignore (no -wal file, or an empty one,
// as Close leaves it). A file whose -wal holds frames stays a plain
// read-only open, which SQLite refuses if it cannot make the -shm; the
// store must then be checkpointed (or opened read-write once) somewhere
// writable first.
func readOnlyFS(path string) bool {
	if !dirReadOnly(path) {
		return false
	}
	st, err := os.Stat(path + "-wal")
	return err != nil || st.Size() == 0
}

// Backup writes a consistent copy of the database to dest (which must not
// exist) with VACUUM INTO, from one read snapshot, on a connection of its
// own so that writers go on meanwhile. dest is always a file-system path:
// it reaches SQLite as an escaped file: URI, so that no prefix ("file:") or
// suffix ("?vfs=memdb") of it is ever read as an instruction. A nil return
// means a complete store file is at dest.
func (db *DB) Backup(ctx context.Context, dest string) error {
	if db.closed.Load() {
		return ErrClosed
	}
	if err := checkPath(dest); err != nil {
		return fmt.Errorf("snkv: backup: %w", err)
	}
	if _, err := os.Lstat(dest); err == nil {
		return fmt.Errorf("snkv: backup to %q: %w: destination exists", dest, ErrExists)
	}
	// Made empty with the store's file mode first (VACUUM INTO fills an
	// empty file), so that SQLite never creates it with its own default.
	if f, err := os.OpenFile(dest, os.O_RDWR|os.O_CREATE|os.O_EXCL, db.fileMode()); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("snkv: backup to %q: %w: destination exists", dest, ErrExists)
		}
		return fmt.Errorf("snkv: backup to %q: %w: %w", dest, ErrCantOpen, err)
	} else if err := f.Close(); err != nil {
		_ = os.Remove(dest)
		return fmt.Errorf("snkv: backup to %q: %w: %w", dest, ErrIO, err)
	}
	target, err := fileURI(dest)
	if err != nil {
		return err
	}
	c, err := openConn(db.dsn)
	if err != nil {
		_ = os.Remove(dest)
		return Wrap(ctx, "backup", err)
	}
	defer c.close()
	c.setBusyTimeout(db.cfg.BusyTimeout)
	if _, err = c.Exec(ctx, "VACUUM INTO ?1", target); err != nil {
		_ = os.Remove(dest) // a partial copy is no backup
		return Wrap(ctx, "backup", err)
	}
	// VACUUM INTO reported success: the file must be there now.
	if st, err := os.Stat(dest); err != nil || st.Size() == 0 {
		return fmt.Errorf("snkv: backup to %q: %w: no database was written there", dest, ErrCantOpen)
	}
	return nil
}

// DefaultFileMode is the permission bits of the files snkv creates when
// the configuration names none.
const DefaultFileMode os.FileMode = 0o600

func (db *DB) fileMode() os.FileMode {
	if db.cfg.FileMode == 0 {
		return DefaultFileMode
	}
	return db.cfg.FileMode
}
