package columnfamily

import (
	"bytes"
	"context"
	"fmt"

	"github.com/snkv-go/snkv/internal/changelog"
	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/family"
	"github.com/snkv-go/snkv/internal/rowcodec"
)

// DeleteRange deletes every key in [start, end) in one transaction, with
// its TTL state, and returns how many live keys it deleted (expired keys
// in the range that no purge removed yet go too, uncounted). A nil start
// is the first key, a nil end the end of the column family (an empty,
// non-nil end, as IterOptions.End, bounds an empty range); for a prefix,
// end is iterator.PrefixEnd(prefix). start after end fails with
// ErrInvalidArgument; so does a nil ctx.
//
// Outside a transaction it is one write transaction, which holds the
// store's write lock while it deletes: other writers wait for all of it
// (about a million keys a second here; see DeleteRangeInBatches for
// ranges large enough to matter). On a handle bound to a write
// transaction it deletes inside it. Cost: one range DELETE of the data
// table, O(log n + k) for k keys deleted; for a column family with TTL
// state, a count of the expired keys of the range and two index lookups
// per key deleted (the triggers that keep the TTL tables in step). ctx
// cancels it (the transaction rolls back, nothing is deleted).
func (cf *ColumnFamily) DeleteRange(ctx context.Context, start, end []byte) (int64, error) {
	if err := cf.checkRange(ctx, start, end); err != nil {
		return 0, err
	}
	var n int64
	err := cf.m.Env.Update(ctx, cf.tx, cf.m.Name+": delete range", func(ctx context.Context, tx *engine.Tx) (err error) {
		if err := cf.verify(ctx, tx); err != nil {
			return err
		}
		n, err = cf.deleteRangeIn(ctx, tx.Conn(), start, end)
		return cf.feed(ctx, tx, err, changelog.OpDeleteRange, start, end, changelog.NoExpiry)
	})
	if err != nil {
		return 0, err
	}
	cf.db().Stats.Deletes.Add(uint64(n))
	return n, nil
}

// DeleteRangeInBatches is DeleteRange in transactions of at most batch
// keys, for a range too large for one transaction to hold the write lock
// through: writers wait at most one batch. It checks ctx between batches
// and, on an error or cancellation, returns the live keys deleted by the
// batches committed so far with the error: the range is then deleted in
// part, from start up to a key, and a second call finishes it. The range
// is not deleted atomically: a reader between two batches sees part of it
// gone, and a key written into the part not yet deleted meanwhile is
// deleted with it. batch < 1 fails with ErrInvalidArgument. On a handle
// bound to a transaction it deletes inside it, in one go. Cost: as
// DeleteRange, plus one read of batch keys per batch to find where it
// ends.
func (cf *ColumnFamily) DeleteRangeInBatches(ctx context.Context, start, end []byte, batch int) (int64, error) {
	if err := cf.checkRange(ctx, start, end); err != nil {
		return 0, err
	}
	if batch < 1 {
		return 0, fmt.Errorf("%w: batch of %d keys (at least 1)", engine.ErrInvalidArgument, batch)
	}
	if cf.tx != nil {
		return cf.DeleteRange(ctx, start, end)
	}
	lo := start
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, engine.Wrap(ctx, cf.m.Name+": delete range", err)
		}
		var n int64
		var next []byte
		err := cf.m.Env.Update(ctx, nil, cf.m.Name+": delete range", func(ctx context.Context, tx *engine.Tx) (err error) {
			if err := cf.verify(ctx, tx); err != nil {
				return err
			}
			c := tx.Conn()
			// The batch ends before its batch+1-th key, if the range has
			// one.
			if next, err = cf.nthKey(ctx, c, lo, end, batch); err != nil {
				return err
			}
			hi := end
			if next != nil {
				hi = next
			}
			n, err = cf.deleteRangeIn(ctx, c, lo, hi)
			return cf.feed(ctx, tx, err, changelog.OpDeleteRange, lo, hi, changelog.NoExpiry)
		})
		if err != nil {
			return total, err
		}
		total += n
		cf.db().Stats.Deletes.Add(uint64(n))
		if next == nil {
			return total, nil
		}
		lo = next
	}
}

// checkRange checks the handle and the arguments of a range delete.
func (cf *ColumnFamily) checkRange(ctx context.Context, start, end []byte) error {
	if err := cf.alive(); err != nil {
		return err
	}
	if err := family.CheckContext(ctx); err != nil {
		return err
	}
	if start != nil && end != nil && bytes.Compare(start, end) > 0 {
		return fmt.Errorf("%w: delete range: start %s is after end %s", engine.ErrInvalidArgument, rowcodec.ShowKey(start), rowcodec.ShowKey(end))
	}
	return nil
}

// rangeWhere is the condition on key of [?1, ?2), for the bounds given.
func rangeWhere(lo, hi []byte) string {
	switch {
	case lo != nil && hi != nil:
		return ` WHERE key >= ?1 AND key < ?2`
	case lo != nil:
		return ` WHERE key >= ?1`
	case hi != nil:
		return ` WHERE key < ?2`
	}
	return ``
}

// deleteRangeIn deletes the keys of [lo, hi) on c, inside a write
// transaction that has verified the column family, and returns how many
// were live. The DELETE triggers remove their TTL rows.
func (cf *ColumnFamily) deleteRangeIn(ctx context.Context, c *engine.Conn, lo, hi []byte) (int64, error) {
	if hi != nil && len(hi) == 0 {
		return 0, nil // below every key
	}
	sh := cf.m.Writing()
	where := rangeWhere(lo, hi)
	on, err := expiry.Enabled(ctx, c, &sh.Objects)
	if err != nil {
		return 0, err
	}
	var expired int64
	if on {
		cond := ` WHERE `
		if where != `` {
			cond = ` AND `
		}
		q := `SELECT count(*) FROM ` + sh.Objects.Quoted.View + where + cond + `expire_ms <= ?3`
		if expired, err = c.QueryInt(ctx, q, lo, hi, expiry.Encode(cf.nowMs())); err != nil {
			return 0, err
		}
	}
	n, err := c.Exec(ctx, `DELETE FROM `+sh.Objects.Quoted.Data+where, lo, hi)
	if err != nil {
		return 0, err
	}
	return n - expired, nil
}

// nthKey returns the key of [lo, hi) that n keys come before, nil when the
// range has no more than n keys.
func (cf *ColumnFamily) nthKey(ctx context.Context, c *engine.Conn, lo, hi []byte, n int) ([]byte, error) {
	if hi != nil && len(hi) == 0 {
		return nil, nil
	}
	q := `SELECT key FROM ` + cf.m.Writing().Objects.Quoted.Data + rangeWhere(lo, hi) + ` ORDER BY key LIMIT 1 OFFSET ?3`
	rows, err := c.Query(ctx, q, lo, hi, int64(n))
	if err != nil {
		return nil, err
	}
	var key []byte
	if rows.Next() {
		key = rows.Bytes(0)
	}
	return key, rows.Close()
}
