package columnfamily

import (
	"context"
	"time"

	"github.com/snkv-go/snkv/internal/changelog"
	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/family"
	"github.com/snkv-go/snkv/internal/rowcodec"
	"github.com/snkv-go/snkv/ttl"
)

// PutTTL stores value under key to expire after d. d must be positive
// (ErrInvalidTTL otherwise); it is rounded up to whole milliseconds. A new
// TTL replaces any earlier one. The data row and both index rows are written
// in one transaction.
func (cf *ColumnFamily) PutTTL(key, value []byte, d time.Duration) error {
	if err := cf.alive(); err != nil {
		return err
	}
	if err := rowcodec.CheckKV(key, value, cf.m.Env.MaxValueSize); err != nil {
		return err
	}
	exp, err := expiry.ExpiryFromTTL(cf.nowMs(), d)
	if err != nil {
		return err
	}
	return cf.putExpiring(key, value, exp)
}

// PutExpireAt stores value under key to expire at the instant at, which
// must be in the future (ErrInvalidTTL otherwise).
func (cf *ColumnFamily) PutExpireAt(key, value []byte, at time.Time) error {
	if err := cf.alive(); err != nil {
		return err
	}
	if err := rowcodec.CheckKV(key, value, cf.m.Env.MaxValueSize); err != nil {
		return err
	}
	exp, err := expiry.ExpiryFromTime(cf.nowMs(), at)
	if err != nil {
		return err
	}
	return cf.putExpiring(key, value, exp)
}

// putExpiring is PutTTL/PutExpireAt once key and value are checked.
func (cf *ColumnFamily) putExpiring(key, value []byte, expMs int64) error {
	var err error
	if tx := cf.tx; tx != nil {
		// In the caller's transaction: what update does, without the
		// closure and the operation's name built for every write.
		if err = tx.Check(true); err == nil {
			err = cf.putExpiringIn(tx.Ctx(), tx.Conn(), tx, key, value, expMs)
		}
		if err != nil {
			err = engine.Wrap(tx.Ctx(), cf.m.Name+": put with TTL", err)
		}
	} else {
		err = cf.update("put with TTL", func(ctx context.Context, c *engine.Conn, tx *engine.Tx) error {
			return cf.putExpiringIn(ctx, c, tx, key, value, expMs)
		})
	}
	if err == nil {
		st := &cf.db().Stats
		st.Puts.Add(1)
		st.BytesWritten.Add(uint64(len(key) + len(value)))
	}
	return err
}

// putExpiringIn writes key's row and TTL in the write transaction tx on c.
func (cf *ColumnFamily) putExpiringIn(ctx context.Context, c *engine.Conn, tx *engine.Tx, key, value []byte, expMs int64) error {
	if err := cf.verify(ctx, tx); err != nil {
		return err
	}
	// The tables (and the trigger that clears an old TTL when the data
	// row changes) must exist before the data row is written.
	if err := cf.m.EnsureTTL(ctx, c, tx); err != nil {
		return err
	}
	err := cf.m.PutExpiring(ctx, c, key, value, expMs)
	return cf.feed(ctx, tx, err, changelog.OpPut, key, value, expMs)
}

// GetTTL returns the value of key and the time it has left, NoTTL for a
// permanent key. A missing or expired key gives ErrNotFound.
func (cf *ColumnFamily) GetTTL(key []byte) ([]byte, time.Duration, error) {
	v, exp, err := cf.lookup(key, true)
	if err != nil {
		return nil, 0, err
	}
	return v, cf.remaining(exp), nil
}

// TTL returns the time key has left, NoTTL for a permanent key. A missing
// or expired key gives ErrNotFound.
func (cf *ColumnFamily) TTL(key []byte) (time.Duration, error) {
	// The value is read too: its checksum says whether the key has a TTL,
	// so that a key index row lost to damage is not taken for "permanent".
	_, exp, err := cf.lookup(key, true)
	if err != nil {
		return 0, err
	}
	return cf.remaining(exp), nil
}

func (cf *ColumnFamily) remaining(expMs int64) time.Duration {
	if expMs < 0 {
		return ttl.NoTTL
	}
	return expiry.Remaining(expMs, cf.nowMs())
}

// Expire sets (or changes) the TTL of an existing key without rewriting its
// value. A missing or expired key gives ErrNotFound; d <= 0 gives
// ErrInvalidTTL.
func (cf *ColumnFamily) Expire(key []byte, d time.Duration) error {
	if err := cf.alive(); err != nil {
		return err
	}
	if err := rowcodec.CheckKey(key); err != nil {
		return err
	}
	exp, err := expiry.ExpiryFromTTL(cf.nowMs(), d)
	if err != nil {
		return err
	}
	return cf.changeExpiry("expire", key, exp)
}

// ExpireAt sets (or changes) the expiry of an existing key to the instant
// at, which must be in the future.
func (cf *ColumnFamily) ExpireAt(key []byte, at time.Time) error {
	if err := cf.alive(); err != nil {
		return err
	}
	if err := rowcodec.CheckKey(key); err != nil {
		return err
	}
	exp, err := expiry.ExpiryFromTime(cf.nowMs(), at)
	if err != nil {
		return err
	}
	return cf.changeExpiry("expire at", key, exp)
}

// Persist removes the TTL of an existing key, making it permanent. A
// missing or expired key gives ErrNotFound; a key without TTL is left as is.
func (cf *ColumnFamily) Persist(key []byte) error {
	if err := cf.alive(); err != nil {
		return err
	}
	if err := rowcodec.CheckKey(key); err != nil {
		return err
	}
	return cf.changeExpiry("persist", key, -1)
}

// changeExpiry sets key's expiry to newMs (-1: none) if the key is live
// (key already checked). An expired key is deleted, in the same
// transaction, which commits, and the call reports ErrNotFound.
func (cf *ColumnFamily) changeExpiry(op string, key []byte, newMs int64) error {
	missing := false
	err := cf.update(op, func(ctx context.Context, c *engine.Conn, tx *engine.Tx) error {
		_, oldMs, found, err := cf.readRow(ctx, c, key, false)
		switch {
		case err != nil:
			return err
		case !found:
			missing = true
			return nil
		}
		if now := cf.nowMs(); oldMs >= 0 && expiry.Expired(oldMs, now) {
			missing = true
			_, err := c.Exec(ctx, cf.m.Writing().SQL.LazyDel, key, expiry.Encode(now))
			return cf.feed(ctx, tx, err, changelog.OpExpired, key, nil, oldMs)
		}
		if newMs >= 0 {
			if err := cf.m.EnsureTTL(ctx, c, tx); err != nil {
				return err
			}
		}
		// Below SQL, the data row's expiry copy is kept (SQL's triggers
		// would clear it).
		if done, err := cf.m.ChangeExpiryFast(c, key, oldMs, newMs); done || err != nil {
			if err != nil {
				return err
			}
			return cf.feedExpiry(ctx, tx, key, oldMs, newMs)
		}
		if (oldMs >= 0) != (newMs >= 0) {
			// The row's checksum records whether the key has a TTL.
			if _, err := c.Exec(ctx, cf.m.Writing().SQL.FlipTTL, key, int64(rowcodec.TTLFlag)); err != nil {
				return err
			}
		}
		if err := cf.feedExpiry(ctx, tx, key, oldMs, newMs); err != nil {
			return err
		}
		switch {
		case newMs >= 0:
			return cf.m.SetExpiry(ctx, c, tx, key, oldMs, newMs)
		case oldMs >= 0:
			sh := cf.m.Writing()
			if _, err := c.Exec(ctx, sh.SQL.DelIndex, expiry.IndexArgs(&sh.Objects, oldMs, key)...); err != nil {
				return err
			}
			_, err := c.Exec(ctx, sh.SQL.DelKey, key)
			return err
		}
		return nil
	})
	if err == nil && missing {
		return engine.ErrNotFound
	}
	return err
}

// PurgeExpired deletes every expired key and returns how many it removed.
// See PurgeExpiredN.
func (cf *ColumnFamily) PurgeExpired(ctx context.Context) (int, error) {
	return cf.PurgeExpiredN(ctx, 0)
}

// PurgeExpiredN deletes up to max expired keys (max <= 0: no limit), oldest
// expiry first. It reads only the expired part of the expiry index, so it
// costs O(expired keys) whatever the number of live keys. Outside a
// transaction it commits every 256 keys, so writers never wait long, and
// checks ctx between batches; on error or cancellation it returns the count
// removed so far with the error. On a handle bound to a write transaction it
// deletes inside that transaction, in one go.
func (cf *ColumnFamily) PurgeExpiredN(ctx context.Context, max int) (int, error) {
	if err := cf.alive(); err != nil {
		return 0, err
	}
	if err := family.CheckContext(ctx); err != nil {
		return 0, err
	}
	if cf.tx != nil {
		if err := cf.tx.Check(true); err != nil {
			return 0, err
		}
		c := cf.tx.Conn()
		t := &cf.m.Writing().Objects
		on, err := expiry.EnabledWhole(cf.tx.Ctx(), c, t)
		if err != nil || !on {
			return 0, cf.errf(ctx, "purge expired", err)
		}
		now := cf.nowMs()
		if err := cf.recordExpiredIn(cf.tx, t, now, max); err != nil {
			return 0, cf.errf(ctx, "purge expired", err)
		}
		n, _, err := expiry.PurgeOnce(cf.tx.Ctx(), c, t, now, max)
		if err != nil {
			return 0, cf.errf(ctx, "purge expired", err)
		}
		cf.tx.OnCommit(func() { cf.db().Stats.Purged.Add(uint64(n)) })
		return n, nil
	}
	if cf.db().Config().ReadOnly {
		// Refused whether or not anything has expired (the checks below
		// may find nothing to delete and begin no write).
		return 0, cf.errf(ctx, "purge expired", engine.ErrReadOnly)
	}
	if !cf.m.TTL.Load() {
		// Another process may have given the column family a TTL since:
		// unless nothing has committed since the last look.
		if cf.m.Horizon.Quiet(cf.db(), cf.nowMs()) {
			return 0, nil
		}
		mark, marked := cf.db().CommitMark()
		c, err := cf.db().AcquireReader(ctx)
		if err != nil {
			return 0, err
		}
		on, err := expiry.EnabledWhole(ctx, c, &cf.m.Reading().Objects)
		cf.db().ReleaseReader(c)
		if err != nil || !on {
			if err == nil && marked {
				cf.m.Horizon.NoTTL(mark)
			}
			return 0, cf.errf(ctx, "purge expired", err)
		}
		cf.m.TTL.Store(true)
	}
	n, err := expiry.Purge(ctx, cf.db(), &cf.m.Writing().Objects, cf.m.Env.Clock, max, &cf.m.Horizon, cf.purgeFeed())
	return n, cf.errf(ctx, "purge expired", err)
}

// CheckTTL verifies that the column family's data, key index and expiry
// index agree, and returns a line per disagreement (none: nil).
func (cf *ColumnFamily) CheckTTL(ctx context.Context) ([]string, error) {
	if err := family.CheckContext(ctx); err != nil {
		return nil, err
	}
	c, _, err := cf.readConn()
	if err != nil {
		return nil, err
	}
	defer cf.doneRead(c)
	t := &cf.m.Reading().Objects
	on, err := expiry.Enabled(ctx, c, t)
	if err != nil || !on {
		return nil, cf.errf(ctx, "check", err)
	}
	p, err := expiry.Check(ctx, c, t)
	return p, cf.errf(ctx, "check", err)
}
