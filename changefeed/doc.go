// Package changefeed reads the change feed of a store's column families:
// every committed put, delete, range delete, TTL set or cleared, expiry
// found by a TTL call, and the column family's creation and drop, in commit
// order, numbered by a sequence, kept in the store's own file and written
// in the same transaction as the change (docs/changes.md).
//
// A column family records nothing until Enable turns its feed on; the
// setting is stored in the file, so every process that writes the store
// records from its next transaction. A Reader reads from a Position (the
// store's epoch and a sequence), filtered by column family and key prefix,
// and tails: Next blocks until a commit of this process wakes it at once,
// or until another process's commit is seen (the reader looks at the WAL
// index's header, a memory read, every 2 ms, backing off to 8 ms while
// nothing commits). A named consumer keeps its
// position in the file: Commit saves it inside the consumer's own
// kvstore.Tx, so its writes and its position commit together.
//
// A position older than the retained history fails with ErrCompacted,
// whose *CompactedError names the oldest sequence still held; a position
// of another history of the store (a restore, a reset) fails with
// ErrEpoch, never a silent skip.
package changefeed
