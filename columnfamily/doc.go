// Package columnfamily implements snkv's column families: named, isolated,
// ordered key spaces, each stored as its own SQLite table
// (key BLOB PRIMARY KEY, value BLOB, WITHOUT ROWID), read through a view of
// its own and listed in the store's catalog table. A column family that uses
// TTL also has two hidden index tables, kept in step by triggers (see the
// ttl package).
//
// A *ColumnFamily carries every data operation: Put, Get, Delete, Exists,
// PutIfAbsent, Count, Clear, GetMany, batches (Apply), the TTL operations
// (PutTTL, GetTTL, Expire, Persist, PurgeExpired, …) and the iterators (Scan,
// All, Prefix, Range, Backward, Cursor). A handle from kvstore.Store runs
// each call in its own transaction and is safe for concurrent use; the same
// handle bound to a transaction (kvstore.Tx.CF) runs inside it. Users reach
// this package through kvstore; the Registry is kvstore's plumbing.
package columnfamily
