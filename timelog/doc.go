// Package timelog is a durable time series on a kvstore.Store: a log of
// records (timestamp, handle), kept in the same SQLite file as the store's
// column families.
//
// A Log buffers appends in memory, seals full buffers onto a bounded queue
// and flushes each sealed buffer to SQLite in one transaction, as pages of
// records sorted by time, each a few varint columns of differences (about
// 3.5 bytes a record for a regular series). Deletes are range tombstones with sequence
// numbers: a delete hides exactly the records written before it. Reads go
// through snapshots, which see the flushed pages and the buffers at one
// instant. Compaction rewrites overlapping pages into non-overlapping ones
// and removes deleted records physically; every physical removal is
// announced through Options.OnDrop after its transaction commits, and
// Options.OnRelease tells when no open snapshot can return the record any
// more.
//
// A log opened with Options.Values stores a byte payload with each record
// (AppendValue, Snapshot.Value, RangeValues), packed many to a row in
// checksummed blocks and removed in the transaction that removes the
// record; Objects[T] stores Go values through a Codec and
// caches decoded values until OnRelease lets them go.
//
// The design, its guarantees and what a crash can lose are in
// docs/timelog.md; the tables and the page encoding in docs/format.md.
package timelog
