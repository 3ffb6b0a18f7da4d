package expiry

import (
	"context"
	"math"
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

// Purge deletes up to max expired keys (max <= 0: all), one transaction per
// PurgeBatch keys, so that writers wait at most one batch. It checks ctx
// between batches and returns the number removed so far with any error.
// Each batch reads the clock anew. The batches are one run of commits for
// the automatic checkpoints (engine.DB.HoldCheckpoints): one pass copies
// their WAL after the last, instead of passes chasing them all along.
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
// rec, when not nil, is called in each transaction before its deletes,
// with the time and limit they use (the change feed's record of expired
// keys).
func Purge(ctx context.Context, db *engine.DB, t *layout.Objects, clock Clock, max int, h *Horizon, rec func(tx *engine.Tx, nowMs int64, limit int) error) (int, error) {
	nowMs := NowMs(clock) // the first batch's time, read once for the check too
	if none, err := nothingExpired(ctx, db, t, nowMs, h); err != nil || none {
		return 0, err
	}
	defer db.HoldCheckpoints()()
	total, first := 0, true
	for {
		if err := ctx.Err(); err != nil {
			return total, err
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
		if rec != nil {
			err = rec(tx, nowMs, limit)
		}
		n, more := 0, false
		if err == nil {
			n, more, err = PurgeOnce(tx.Ctx(), tx.Conn(), t, nowMs, limit)
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
