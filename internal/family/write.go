package family

import (
	"context"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/rowcodec"
)

// The TTL writes the handles of a column family and the catalog's
// conversions share: the TTL tables, a key's expiry, a row with one (a row
// without one is rowcodec.Codec.Put's). Each runs inside a write
// transaction on c.

// EnsureTTL creates the column family's TTL tables inside the write
// transaction tx if they do not exist yet. If tx does not commit, the
// process forgets it made them, so the next TTL write creates them again.
func (f *Family) EnsureTTL(ctx context.Context, c *engine.Conn, tx *engine.Tx) error {
	// Asked once per write transaction, inside it: the process-wide flag
	// may be stale (another process may have dropped and recreated the
	// column family), and only this transaction can change the answer
	// until it ends.
	if tx.Verified(ttlOn{f}) {
		return nil
	}
	t := &f.Writing().Objects
	on, err := expiry.EnabledWhole(ctx, c, t)
	if err != nil {
		return err
	}
	if !on {
		for _, q := range t.EnableSQL() {
			if err := c.ExecScript(ctx, q); err != nil {
				return err
			}
		}
		if t.V2 && t.Crc {
			// The data rows get a column for a copy of their key index
			// row, which point reads use instead of descending the key
			// index (layout.CopyColumn).
			if err := expiry.EnableCopy(ctx, c, t); err != nil {
				return err
			}
		}
		tx.OnRollback(func() { f.TTL.Store(false) })
	}
	f.TTL.Store(true)
	tx.MarkVerified(ttlOn{f})
	return nil
}

// ttlOn is the engine.Tx.Verified key of "the column family's TTL tables
// exist": asked once per write transaction.
type ttlOn struct{ f *Family }

// SetExpiry gives key (whose data row exists) the expiry newMs, replacing
// oldMs (-1: none known), creating the TTL tables if needed.
func (f *Family) SetExpiry(ctx context.Context, c *engine.Conn, tx *engine.Tx, key []byte, oldMs, newMs int64) error {
	if err := f.EnsureTTL(ctx, c, tx); err != nil {
		return err
	}
	return f.WriteExpiry(ctx, c, key, oldMs, newMs)
}

// WriteExpiry is SetExpiry once the TTL tables are known to exist.
func (f *Family) WriteExpiry(ctx context.Context, c *engine.Conn, key []byte, oldMs, newMs int64) error {
	sh := f.Writing()
	if oldMs >= 0 {
		if _, err := c.Exec(ctx, sh.SQL.DelIndex, expiry.IndexArgs(&sh.Objects, oldMs, key)...); err != nil {
			return err
		}
	}
	exp, esum := rowcodec.EncodeExpiry(&sh.Objects, key, newMs)
	if _, err := c.Exec(ctx, sh.SQL.SetKey, key, exp, esum); err != nil {
		return err
	}
	_, err := c.Exec(ctx, sh.SQL.SetIndex, expiry.IndexArgs(&sh.Objects, newMs, key)...)
	return err
}

// PutExpiring writes the data row of key and its expiry expMs, inside a
// write transaction that has already made sure the TTL tables exist.
func (f *Family) PutExpiring(ctx context.Context, c *engine.Conn, key, value []byte, expMs int64) error {
	sh := f.Writing()
	cd := f.Codec(sh)
	stored, sum := cd.Encode(c, key, value, true)
	return f.WriteRowTTL(ctx, c, sh, key, stored, sum, expMs)
}

// WriteRowTTL writes a data row of stored value (rowcodec.Codec.Encode's,
// with hasTTL) and checksum sum, and its expiry expMs.
func (f *Family) WriteRowTTL(ctx context.Context, c *engine.Conn, sh *Shape, key, stored []byte, sum any, expMs int64) error {
	if crc, ok := sum.(int64); ok && sh.Objects.V2 && engine.FastPath {
		// EncodeExpiry's row, made without allocating (a format-2 table).
		var eb [8]byte
		exp := expiry.EncodeTo(&eb, expMs)
		if ok, err := c.PutTTL(&sh.Objects, key, stored, crc, exp, rowcodec.RowSum(key, exp)); ok || err != nil {
			return err
		}
	}
	if _, err := c.Exec(ctx, sh.SQL.Upsert, key, stored, nil, nil, sum); err != nil {
		return err
	}
	return f.WriteExpiry(ctx, c, key, -1, expMs)
}

// ChangeExpiryFast gives key, whose data row exists with the expiry oldMs
// (-1: none), the expiry newMs (-1: none) below SQL, keeping the data
// row's expiry copy true (btree.Conn.SetExpiry), when the engine can; done
// is false when the caller must run its SQL statements (nothing written).
// With newMs >= 0 the TTL tables must exist (EnsureTTL).
func (f *Family) ChangeExpiryFast(c *engine.Conn, key []byte, oldMs, newMs int64) (done bool, err error) {
	sh := f.Writing()
	if !sh.Objects.V2 || !sh.Objects.Crc || !engine.FastPath {
		return false, nil
	}
	var exp []byte
	var keyCrc, flip int64
	if newMs >= 0 {
		var sum any
		exp, sum = rowcodec.EncodeExpiry(&sh.Objects, key, newMs)
		keyCrc = sum.(int64) // a table of format 2 (V2 above)
	}
	if (oldMs >= 0) != (newMs >= 0) {
		flip = rowcodec.TTLFlag
	}
	ok, found, err := c.SetExpiry(&sh.Objects, key, exp, keyCrc, flip)
	return ok && found, err
}
