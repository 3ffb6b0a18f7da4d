package engine

import (
	"context"
	"os"
)

// storeAppID is the application_id an snkv store carries in its header
// (bytes 68-71, big-endian "snkv"; columnfamily.ApplicationID).
const storeAppID = "snkv"

// probeNeeded reports whether Open must first read the file on
// connections that keep the WAL index in their own memory: the file has
// WAL content (a non-empty -wal) and its header does not say it is a store.
// It may then be another application's database, which Open refuses, and
// a refusal must leave every file as it was. A plain connection would not:
// the first connection to a WAL file that no process has open rebuilds the
// WAL index in the -shm file from the -wal (WAL recovery), rewriting it.
// In SQLite's exclusive locking mode a connection keeps the WAL index in
// its own memory and never opens the -shm. A store whose header page is
// still in its WAL (a new store not yet checkpointed when its process
// died) is probed too, at the cost of one more connection.
func probeNeeded(path string) bool {
	st, err := os.Stat(path + "-wal")
	if err != nil || st.Size() == 0 {
		return false
	}
	head, err := readHead(path, 72)
	return err == nil && string(head[68:72]) != storeAppID
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
