// Package expiry is snkv's per-key expiry machinery below the public API:
// the stored encoding of expiry times (milliseconds since the Unix epoch,
// 8 bytes big-endian) and the arithmetic of TTLs and deadlines against a
// Clock; the SQL that gives a column family its two hidden index tables
// (key → expiry, and (expiry, key) sorted by time), the triggers that keep
// them in step with the data table whoever writes it, and the read view
// that joins the expiry in; the checks of those tables; and the batched
// purge, which walks the expiry index from its oldest entry so that its
// cost is proportional to the number of expired keys.
//
// The public face of expiry is package ttl (the clocks, NoTTL) and the TTL
// methods of a column family. docs/ttl.md describes the design and
// docs/format.md the tables.
package expiry
