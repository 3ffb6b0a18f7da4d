// Package columnfamily implements snkv's column families: named, isolated,
// ordered key spaces, each stored as its own SQLite table
// (key BLOB PRIMARY KEY, value BLOB, WITHOUT ROWID) and listed in the store's
// catalog table.
//
// A *ColumnFamily carries every data operation: Put, Get, Delete, Exists,
// PutIfAbsent, Count, Clear, GetMany, batches, the TTL operations and the
// iterators. A handle from kvstore.Store runs each call in its own
// transaction; the same handle bound to a transaction (kvstore.Tx.CF) runs
// inside it. Users reach this package through kvstore.
package columnfamily
