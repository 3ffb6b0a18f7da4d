// Package kvstore is the front door of snkv, an embedded, ordered key-value
// store whose data lives in an ordinary SQLite database file (through the
// pure-Go driver modernc.org/sqlite, no cgo).
//
//	db, err := kvstore.Open("app.db", kvstore.Options{})
//	if err != nil { ... }
//	defer db.Close()
//	err = db.Put([]byte("k"), []byte("v"))    // the default column family
//	users, err := db.CreateColumnFamily("users")
//	err = db.Update(ctx, func(tx *kvstore.Tx) error {
//		return tx.CF(users).Put([]byte("alice"), []byte("..."))
//	})
//
// A Store embeds the handle of its default column family, so every
// ColumnFamily method (Put, Get, PutTTL, Scan, …) is also a Store method. A
// Tx embeds the default column family bound to the transaction in the same
// way, and Tx.CF binds any other column family to it.
//
// Concurrency: a *Store is safe for concurrent use. Reads run in parallel on
// a pool of read connections, each seeing a consistent snapshot (WAL);
// writes are serialized on one writer connection in-process and by SQLite's
// file lock across processes, waiting up to Options.BusyTimeout before
// failing with ErrBusy. A Tx and a Cursor belong to one goroutine at a time.
package kvstore
