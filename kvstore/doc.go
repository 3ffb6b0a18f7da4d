// Package kvstore is the front door of snkv, an embedded, ordered key-value
// store whose data lives in an ordinary SQLite database file, written by the
// pure-Go SQLite of modernc.org/sqlite (no cgo).
//
//	db, err := kvstore.Open("app.db", kvstore.Options{}) // "" opens one in memory
//	if err != nil { ... }
//	defer db.Close()
//	err = db.Put([]byte("k"), []byte("v"))    // the default column family
//	v, err := db.Get([]byte("k"))              // ErrNotFound if missing or expired
//	users, err := db.CreateColumnFamily("users")
//	err = db.Update(ctx, func(tx *kvstore.Tx) error {
//		return tx.CF(users).Put([]byte("alice"), []byte("..."))
//	})
//	for e, err := range users.Prefix([]byte("a")) {
//		if err != nil { ... } // an iteration reports its failure, never ends silently
//		use(e.Key, e.Value)
//	}
//
// Every ColumnFamily method (Put, Get, PutTTL, Scan, …) is also a Store
// method acting on the default column family, and a Tx method acting on
// the default column family bound to the transaction; Tx.CF binds any
// other column family to it. On a nil Store or Tx they return
// ErrInvalidArgument rather than panic.
//
// Keys are 1 byte to 64 KiB, ordered bytewise; values 0 bytes to
// Options.MaxValueSize. Every key can have a time-to-live (PutTTL, Expire,
// Persist): an expired key is never returned, and PurgeExpired removes
// expired keys at a cost proportional to their number. Errors are sentinels
// (ErrNotFound, ErrBusy, ErrInvalidTTL, …) to compare with errors.Is.
//
// Concurrency: a *Store is safe for concurrent use. Reads run in parallel on
// a pool of read connections, each seeing a consistent snapshot (WAL);
// writes are serialized on one writer connection in-process and by SQLite's
// file lock across processes, waiting up to Options.BusyTimeout before
// failing with ErrBusy. A Tx and a Cursor belong to one goroutine at a time;
// inside a write transaction, write through the Tx, never through the Store.
//
// Encryption at rest (Options.Encryption, with a password or a raw key)
// seals every value with XChaCha20-Poly1305, bound to its store, column
// family and key; keys stay in the clear, so ordering and iteration are
// unchanged. A wrong or missing secret is ErrAuth; a store in the clear
// opened with one is ErrNotEncrypted, never encrypted under it unless asked
// (Encryption.EncryptInPlace). Encrypt, Rekey and RemoveEncryption convert
// a store in place, resumably.
//
// Each column family is a table of the SQLite file, which the sqlite3 shell
// can read. The repository's API_SPECIFICATION.md and docs/ directory
// describe the API, the file format, TTL and the concurrency model in full.
package kvstore
