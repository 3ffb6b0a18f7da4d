// Package ttl holds what a user of snkv's per-key expiry meets: the Clock
// every expiry decision reads (SystemClock by default, set with
// kvstore.Options.Clock), ManualClock, which moves only when a test tells
// it to, and NoTTL, the time left of a key that never expires.
//
// The expiry operations are methods of a column family (PutTTL, GetTTL,
// Expire, Persist, PurgeExpired, …); kvstore re-exports these names
// (kvstore.Clock, kvstore.ManualClock, kvstore.NewManualClock,
// kvstore.NoTTL). The repository's docs/ttl.md describes the design and its
// guarantees.
package ttl
