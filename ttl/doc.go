// Package ttl holds snkv's per-key expiry machinery: the on-disk encoding of
// expiry times (milliseconds since the Unix epoch, 8 bytes big-endian), the
// clock every expiry decision reads, the SQL that creates a column family's
// two hidden index tables (key → expiry, and expiry ‖ key sorted by time),
// the triggers and read view that go with them, and the batched purge that
// walks the expiry index from its oldest entry, so that its cost is
// proportional to the number of expired keys.
//
// Users meet it through kvstore and columnfamily (PutTTL, GetTTL, Expire,
// PurgeExpired, Options.Clock); a test can use ManualClock to move time
// without sleeping. The repository's docs/ttl.md describes the design and
// its guarantees.
package ttl
