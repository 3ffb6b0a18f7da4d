package engine

import (
	"context"
	"os"
)

// probeNeeded reports whether Open must first read the file on
// connections that keep the WAL index in their own memory: the file has
// WAL content (a non-empty -wal). Open may refuse it (another application's
// database, a newer format, an encrypted store opened without its secret
// or with the wrong one), and a refusal must leave every file as it was. A
// plain connection would not: the first connection to a WAL file that no
// process has open rebuilds the WAL index in the -shm file from the -wal
// (WAL recovery), rewriting it. In SQLite's exclusive locking mode a
// connection keeps the WAL index in its own memory and never opens the
// -shm. The cost, for a store a crash left with WAL content, is one more
// connection; where another process has the file open, the probe fails at
// once and the file is opened the ordinary way (the -shm is live then).
func probeNeeded(path string) bool {
	st, err := os.Stat(path + "-wal")
	return err == nil && st.Size() > 0
}

// EndProbe turns a DB that Open is still probing (see probeNeeded) into an
// ordinary one, once its caller has accepted the file: the connections
// opened in exclusive locking mode are closed (the writer checkpoints as
// usual) and a plain writer takes the writer's place; readers open plainly
// from now on. It does nothing for a DB that is not probing.
func (db *DB) EndProbe() error {
	if !db.probe {
		return nil
	}
	db.probe = false
	db.drainReaders()
	if db.writer == nil {
		return nil
	}
	old := <-db.writer
	err := old.close()
	w, werr := db.newConn(true)
	if werr != nil {
		db.writer <- old // closed: the next use fails, as after a lost connection
		old.broke = true
		return Wrap(context.Background(), "open", werr)
	}
	db.writer <- w
	if err != nil {
		return Wrap(context.Background(), "open", err)
	}
	return db.SetJournalMode(context.Background(), w)
}

// Probing reports whether the DB is still probing (see probeNeeded). A
// caller whose check of the file failed with ErrBusy or ErrIO while
// probing should Discard the DB and open it again with Config.NoProbe:
// exclusive locking mode fails where another process holds the file, and
// then the -shm file is live and SQLite's ordinary reading of it is all
// that can be done.
func (db *DB) Probing() bool { return db.probe }
