// Package columnfamily holds snkv's column family handle and its batches.
// A column family is a named, isolated, ordered key space, stored as its
// own SQLite table (key BLOB PRIMARY KEY, value BLOB, WITHOUT ROWID), read
// through a view of its own and listed in the store's catalog. One that
// uses TTL also has two hidden index tables, kept in step by triggers.
//
// A *ColumnFamily carries every data operation: Put, Get, Delete, Exists,
// PutIfAbsent, Count, Clear, GetMany, batches (Apply), the TTL operations
// (PutTTL, GetTTL, Expire, Persist, PurgeExpired, …) and the iterations
// (Scan, All, Prefix, Range, Backward, Cursor). A handle from kvstore.Store
// runs each call in its own transaction and is safe for concurrent use; the
// same handle bound to a transaction (kvstore.Tx.CF) runs inside it.
//
// Users reach this package through kvstore, whose ColumnFamily and Batch
// are aliases of these types: handles come from the store
// (kvstore.Store.CreateColumnFamily, OpenColumnFamily, Default), never from
// this package. The machinery behind them lives under internal/: the
// catalog (internal/catalog), the state handles share (internal/family),
// the row codec, the TTL tables and the scan plumbing; docs/architecture.md
// is the map.
package columnfamily
