package expiry

import (
	"bytes"
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/layout"
)

// PurgeOnce deletes up to limit expired keys (limit <= 0: all of them) of
// the column family inside the caller's transaction on c, as of nowMs. It
// reads only the expired head of the expiry index, so its cost is
// O(expired keys) whatever the number of live keys. n counts data rows
// removed; more reports that the limit stopped it before the index ran out
// of expired entries.
//
// The deletes are set-based: the key index first, then the data rows (whose
// trigger then has nothing left to do), then the expiry range in one sweep.
func PurgeOnce(ctx context.Context, c *engine.Conn, t *layout.Objects, nowMs int64, limit int) (n int, more bool, err error) {
	if t.V2 {
		return purgeOnceV2(ctx, c, t, nowMs, limit)
	}
	hi := PurgeBound(nowMs)
	if limit > 0 {
		rows, err := c.Query(ctx, `SELECT key FROM `+t.Quoted.Expiry+` WHERE key < ?1 ORDER BY key LIMIT 1 OFFSET ?2`, hi, int64(limit-1))
		if err != nil {
			return 0, false, err
		}
		if rows.Next() {
			// The limit-th expired entry: stop just after it.
			hi = append(rows.Bytes(0), 0)
			more = true
		}
		if err := rows.Close(); err != nil {
			return 0, false, err
		}
	}
	sel := `(SELECT substr(key, 9) FROM ` + t.Quoted.Expiry + ` WHERE key < ?1)`
	if _, err := c.Exec(ctx, `DELETE FROM `+t.Quoted.Keys+` WHERE key IN `+sel, hi); err != nil {
		return 0, false, err
	}
	deleted, err := c.Exec(ctx, `DELETE FROM `+t.Quoted.Data+` WHERE key IN `+sel, hi)
	if err != nil {
		return 0, false, err
	}
	if _, err := c.Exec(ctx, `DELETE FROM `+t.Quoted.Expiry+` WHERE key < ?1`, hi); err != nil {
		return 0, false, err
	}
	return int(deleted), more, nil
}

// purgeOnceV2 is PurgeOnce for the format-2 layout. A data row is deleted
// only when its key index row agrees with the expiry index row that names
// it, so a damaged index row never removes a live or permanent key: the
// DELETE trigger then removes both index rows. Index rows left over in the
// range (damaged ones) are removed last; IntegrityCheck reports the key
// index rows that lost their partner.
func purgeOnceV2(ctx context.Context, c *engine.Conn, t *layout.Objects, nowMs int64, limit int) (n int, more bool, err error) {
	hi := Encode(nowMs + 1)
	// The same deletes, straight in the B-trees (engine.Conn.Purge).
	if ok, n, more, err := c.Purge(t, hi, limit); ok || err != nil {
		return n, more, err
	}
	var lastExp, lastKey []byte // the limit-th expired entry, when there is one
	if limit > 0 {
		rows, err := c.Query(ctx, `SELECT expire_ms, key FROM `+t.Quoted.Expiry+` WHERE expire_ms < ?1 ORDER BY expire_ms, key LIMIT 1 OFFSET ?2`, hi, int64(limit-1))
		if err != nil {
			return 0, false, err
		}
		if rows.Next() {
			lastExp, lastKey = rows.Bytes(0), rows.Bytes(1)
			hi, more = lastExp, true
		}
		if err := rows.Close(); err != nil {
			return 0, false, err
		}
	}
	rng := `(e.expire_ms < ?1 OR (e.expire_ms = ?2 AND e.key <= ?3))`
	deleted, err := c.Exec(ctx, `DELETE FROM `+t.Quoted.Data+` WHERE key IN (SELECT e.key FROM `+t.Quoted.Expiry+` AS e JOIN `+t.Quoted.Keys+
		` AS k ON k.key = e.key AND k.expire_ms = e.expire_ms WHERE `+rng+`)`, hi, lastExp, lastKey)
	if err != nil {
		return 0, false, err
	}
	if _, err := c.Exec(ctx, `DELETE FROM `+t.Quoted.Expiry+` WHERE expire_ms < ?1 OR (expire_ms = ?2 AND key <= ?3)`, hi, lastExp, lastKey); err != nil {
		return 0, false, err
	}
	return int(deleted), more, nil
}

// Feed is what a purge records of the keys it deletes (the change feed's
// expiry events). Either function may be nil.
type Feed struct {
	// Limit is called in each transaction of a purge in expiry order
	// (the SQL purge) before its deletes, with the time and limit they use.
	Limit func(tx *engine.Tx, nowMs int64, limit int) error
	// Keys is called in each transaction of a purge in key order after its
	// deletes, with the entries whose keys it deleted, in the order it
	// deleted them.
	Keys func(tx *engine.Tx, gone []engine.Expired) error
}

// betweenBatches, when set, runs between two transactions of a purge
// (SetBetweenBatches).
var betweenBatches atomic.Pointer[func()]

// SetBetweenBatches makes every purge call f after each of its
// transactions but the last, with no transaction open, and returns what
// restores the previous setting. It is for tests that change keys between
// two batches of a purge.
func SetBetweenBatches(f func()) (restore func()) {
	var p *func()
	if f != nil {
		p = &f
	}
	old := betweenBatches.Swap(p)
	return func() { betweenBatches.Store(old) }
}

// Purge deletes up to max expired keys (max <= 0: all), one transaction per
// PurgeBatch keys, so that writers wait at most one batch. It checks ctx
// between batches and returns the number removed so far with any error.
// Each batch reads the clock anew. The batches are one run of commits for
// the automatic checkpoints (engine.DB.HoldCheckpoints): one pass copies
// their WAL after the last, instead of passes chasing them all along.
//
// Below SQL (format 2), the first batch takes a chunk of the expired
// entries off the head of the expiry index (engine.Conn.ExpiredHead: up to
// 65,536 of them, sorted by key), and the batches delete the keys of the
// chunk PurgeBatch at a time in key order (engine.Conn.PurgeKeys): each
// re-checks, at its own clock, that an entry's expiry index row is still
// there and expired, so that a key deleted, rewritten or given a new
// expiry by another writer between two batches is skipped. A batch of
// neighbouring keys changes a few leaves of the data table and the key
// index where one in expiry order changes a leaf of each per key. A chunk
// that ends at its bound is followed by the next.
//
// When a read finds nothing expired it returns 0 without taking the write
// lock, so the periodic purge of an idle store neither waits for a writer
// nor makes one wait.
//
// h, when not nil, is the column family's Horizon: a purge that found
// nothing expired remembers the earliest expiry it saw, and until a commit
// (from any process) or the clock passes it, the next purge returns 0 at
// once, without a read transaction.
//
// feed, when not nil, records the keys each transaction deletes.
func Purge(ctx context.Context, db *engine.DB, t *layout.Objects, clock Clock, max int, h *Horizon, feed *Feed) (int, error) {
	nowMs := NowMs(clock) // the first batch's time, read once for the check too
	if none, err := nothingExpired(ctx, db, t, nowMs, h); err != nil || none {
		return 0, err
	}
	defer db.HoldCheckpoints()()
	total, first := 0, true
	k := keyOrders.Get().(*keyOrder)
	defer keyOrders.Put(k)
	k.start(t.V2)
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		if !first {
			if f := betweenBatches.Load(); f != nil {
				(*f)()
			}
		}
		limit := PurgeBatch
		if max > 0 {
			limit = min(limit, max-total)
			if limit <= 0 {
				return total, nil
			}
		}
		tx, err := db.Begin(ctx, true)
		if err != nil {
			return total, err
		}
		// The tables may be gone: never committed (a first TTL write that
		// rolled back) or dropped by another handle or process.
		on, err := EnabledWhole(tx.Ctx(), tx.Conn(), t)
		if err != nil || !on {
			_ = tx.Rollback()
			return total, engine.Wrap(ctx, "purge expired", err)
		}
		if !first {
			nowMs = NowMs(clock)
		}
		first = false
		n, more := 0, false
		if k.on {
			// max-total bounds the chunk: the keys it names are all the
			// purge may delete.
			n, more, err = k.batch(tx, t, nowMs, max-total, max > 0, feed)
		}
		if !k.on && err == nil {
			if feed != nil && feed.Limit != nil {
				err = feed.Limit(tx, nowMs, limit)
			}
			if err == nil {
				n, more, err = PurgeOnce(tx.Ctx(), tx.Conn(), t, nowMs, limit)
			}
		}
		if err != nil {
			_ = tx.Rollback()
			return total, engine.Wrap(ctx, "purge expired", err)
		}
		if err := tx.Commit(); err != nil {
			return total, err
		}
		total += n
		db.Stats.Purged.Add(uint64(n))
		if !more {
			return total, nil
		}
	}
}

// keyOrder is the state of a purge in key order: the chunk of expired
// entries read from the expiry index and not yet handed to a batch.
type keyOrder struct {
	on        bool             // the purge goes in key order (off: the SQL purge, from then on)
	ents      []engine.Expired // the chunk, sorted by key
	next      int              // the first entry of ents not yet purged
	buf       []byte           // the bytes of ents
	gone      []engine.Expired
	chunkMore bool // entries below the chunk's bound were left in the index
}

// keyOrders keeps the buffers of purges in key order for the next.
var keyOrders = sync.Pool{New: func() any { return new(keyOrder) }}

// start readies k for a purge, in key order when on.
func (k *keyOrder) start(on bool) {
	k.on, k.ents, k.next, k.buf, k.gone, k.chunkMore = on, k.ents[:0], 0, k.buf[:0], k.gone[:0], false
}

// batch runs one batch of the purge in key order in tx as of nowMs,
// reading a chunk first when the last one is spent; left bounds the chunk
// when bounded. It turns k.on off (nothing done) when the fast path
// cannot take it, and reports whether another batch follows.
func (k *keyOrder) batch(tx *engine.Tx, t *layout.Objects, nowMs int64, left int, bounded bool, feed *Feed) (n int, more bool, err error) {
	c, hi := tx.Conn(), Encode(nowMs+1)
	if k.next == len(k.ents) {
		limit := 0
		if bounded {
			limit = left
		}
		var ok bool
		ok, k.ents, k.buf, k.chunkMore, err = c.ExpiredHead(t, hi, limit, k.ents, k.buf)
		k.next = 0
		if err != nil || !ok {
			k.on = false
			return 0, false, err
		}
		// O(c log c) for a chunk of c entries; O(c) when the index's order
		// is the keys' already (one expiry, or keys that grow with it).
		slices.SortFunc(k.ents, func(a, b engine.Expired) int { return bytes.Compare(a.Key, b.Key) })
	}
	end := min(k.next+PurgeBatch, len(k.ents))
	ok := false
	ok, n, k.gone, err = c.PurgeKeys(t, hi, k.ents[k.next:end], k.gone)
	if err != nil || !ok {
		k.on, k.ents, k.next = false, k.ents[:0], 0
		return 0, false, err
	}
	k.next = end
	if feed != nil && feed.Keys != nil && len(k.gone) > 0 {
		if err := feed.Keys(tx, k.gone); err != nil {
			return 0, false, err
		}
	}
	return n, k.next < len(k.ents) || k.chunkMore, nil
}

// Horizon is what one column family's last purge that found nothing
// expired learnt: the earliest expiry in its expiry index, as of a commit
// mark. Safe for concurrent use; the zero value knows nothing.
type Horizon struct{ p atomic.Pointer[horizon] }

type horizon struct {
	mark     engine.CommitMark // read before the snapshot the expiry was read in
	earliest int64             // the earliest expiry; math.MaxInt64: none
}

// Quiet reports whether the last record still holds: nothing has
// committed since it was made and nowMs is before the earliest expiry it
// saw, so that nothing in the column family can have expired.
func (h *Horizon) Quiet(db *engine.DB, nowMs int64) bool {
	if r := h.p.Load(); r != nil && nowMs < r.earliest {
		if m, ok := db.CommitMark(); ok && m == r.mark {
			return true
		}
	}
	return false
}

// NoTTL records that, as of mark (read before the look), the column
// family had no TTL tables: nothing in it can expire until a commit.
func (h *Horizon) NoTTL(mark engine.CommitMark) {
	h.p.Store(&horizon{mark: mark, earliest: math.MaxInt64})
}

// nothingExpired reports, from a read snapshot, that the column family's
// expiry index holds no entry expired at nowMs. It reports false when it
// cannot tell (the tables are missing: the write transaction's checks then
// say why).
//
// With a Horizon (format 2 only), a call that finds nothing expired
// records the earliest expiry with the commit mark read before its
// snapshot; a later call whose clock is before that expiry and whose
// commit mark is the same knows the index has not changed and answers
// without reading it. A commit after the mark was read (even one in
// progress while the snapshot began) changes the mark, so the record is
// never newer than the file state it claims.
func nothingExpired(ctx context.Context, db *engine.DB, t *layout.Objects, nowMs int64, h *Horizon) (bool, error) {
	if !t.V2 {
		h = nil
	}
	if h != nil && h.Quiet(db, nowMs) {
		return true, nil
	}
	mark, marked := db.CommitMark()
	c, err := db.AcquireSnapshot(ctx, engine.ReadMulti)
	if err != nil {
		return false, err
	}
	defer db.ReleaseSnapshot(c)
	if on, err := EnabledWhole(ctx, c, t); err != nil || !on {
		return false, nil
	}
	if !t.V2 {
		// The data table is named too, so that a missing one fails here as
		// the purge's deletes would (a damaged store is reported, not
		// skipped).
		rows, err := c.Query(ctx, `SELECT 1 FROM `+t.Quoted.Expiry+` WHERE key < ?1 AND NOT EXISTS (SELECT 1 FROM `+t.Quoted.Data+` WHERE 0) LIMIT 1`, PurgeBound(nowMs))
		if err != nil {
			return false, engine.Wrap(ctx, "purge expired", err)
		}
		found := rows.Next()
		if err := rows.Close(); err != nil {
			return false, engine.Wrap(ctx, "purge expired", err)
		}
		return !found, nil
	}
	rows, err := c.Query(ctx, `SELECT expire_ms FROM `+t.Quoted.Expiry+` WHERE NOT EXISTS (SELECT 1 FROM `+t.Quoted.Data+` WHERE 0) ORDER BY expire_ms LIMIT 1`)
	if err != nil {
		return false, engine.Wrap(ctx, "purge expired", err)
	}
	earliest, found := int64(math.MaxInt64), rows.Next()
	if found {
		// A damaged entry (not 8 bytes) counts as expired: the purge's
		// write transaction meets it and says what is wrong.
		if e, derr := Decode(rows.RawBytes(0)); derr == nil {
			earliest = e
		} else {
			earliest = math.MinInt64
		}
	}
	if err := rows.Close(); err != nil {
		return false, engine.Wrap(ctx, "purge expired", err)
	}
	if earliest <= nowMs {
		return false, nil
	}
	if h != nil && marked {
		h.p.Store(&horizon{mark: mark, earliest: earliest})
	}
	return true, nil
}
