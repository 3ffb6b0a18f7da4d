// Package ttl holds snkv's per-key expiry machinery: the on-disk encoding of
// expiry times (milliseconds since the Unix epoch, 8 bytes big-endian), the
// clock every expiry decision reads, the SQL that creates a column family's
// two hidden index tables, and the batched purge loop.
//
// Users meet it through kvstore and columnfamily (PutTTL, GetTTL, Expire,
// PurgeExpired, Options.Clock); a test can use ManualClock to move time
// without sleeping.
package ttl
