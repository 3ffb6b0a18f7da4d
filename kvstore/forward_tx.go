package kvstore

import (
	"context"
	"iter"
	"time"

	"github.com/snkv-go/snkv/columnfamily"
)

// The default column family's methods on *Tx, bound to the transaction:
// written out rather than promoted from an embedded *ColumnFamily so that
// a call on a nil *Tx returns ErrInvalidArgument instead of panicking on
// the nil pointer. Each behaves exactly as the ColumnFamily method of the
// same name on the handle Default returns.

// Default returns the default column family bound to the transaction: the
// handle the methods below act on (nil for a nil Tx). It is done with the
// transaction, like every handle Tx.CF returns.
func (tx *Tx) Default() *ColumnFamily { return tx.handle() }

func (tx *Tx) handle() *ColumnFamily {
	if tx == nil {
		return nil
	}
	return tx.cf
}

// All is ColumnFamily.All on the transaction's default column family.
func (tx *Tx) All() iter.Seq2[Entry, error] {
	if tx == nil {
		return errSeq(errNilTx)
	}
	return tx.cf.All()
}

// Apply is ColumnFamily.Apply on the transaction's default column family.
func (tx *Tx) Apply(ctx context.Context, b *Batch) error {
	if tx == nil {
		return errNilTx
	}
	return tx.cf.Apply(ctx, b)
}

// Backward is ColumnFamily.Backward on the transaction's default column family.
func (tx *Tx) Backward() iter.Seq2[Entry, error] {
	if tx == nil {
		return errSeq(errNilTx)
	}
	return tx.cf.Backward()
}

// CheckTTL is ColumnFamily.CheckTTL on the transaction's default column family.
func (tx *Tx) CheckTTL(ctx context.Context) ([]string, error) {
	if tx == nil {
		return nil, errNilTx
	}
	return tx.cf.CheckTTL(ctx)
}

// Clear is ColumnFamily.Clear on the transaction's default column family.
func (tx *Tx) Clear() error {
	if tx == nil {
		return errNilTx
	}
	return tx.cf.Clear()
}

// Count is ColumnFamily.Count on the transaction's default column family.
func (tx *Tx) Count() (int64, error) {
	if tx == nil {
		return 0, errNilTx
	}
	return tx.cf.Count()
}

// Cursor is ColumnFamily.Cursor on the transaction's default column
// family: it reads inside the transaction, from its snapshot (and, in a
// write transaction, its own writes; see ColumnFamily.Cursor).
func (tx *Tx) Cursor(opts IterOptions) (*Cursor, error) {
	if tx == nil {
		return nil, errNilTx
	}
	return tx.cf.Cursor(opts)
}

// Delete is ColumnFamily.Delete on the transaction's default column family.
func (tx *Tx) Delete(key []byte) error {
	if tx == nil {
		return errNilTx
	}
	return tx.cf.Delete(key)
}

// DeleteRange is ColumnFamily.DeleteRange on the transaction's default
// column family.
func (tx *Tx) DeleteRange(ctx context.Context, start, end []byte) (int64, error) {
	if tx == nil {
		return 0, errNilTx
	}
	return tx.cf.DeleteRange(ctx, start, end)
}

// DeleteRangeInBatches is ColumnFamily.DeleteRangeInBatches on the
// transaction's default column family: in the transaction, in one go.
func (tx *Tx) DeleteRangeInBatches(ctx context.Context, start, end []byte, batch int) (int64, error) {
	if tx == nil {
		return 0, errNilTx
	}
	return tx.cf.DeleteRangeInBatches(ctx, start, end, batch)
}

// Exists is ColumnFamily.Exists on the transaction's default column family.
func (tx *Tx) Exists(key []byte) (bool, error) {
	if tx == nil {
		return false, errNilTx
	}
	return tx.cf.Exists(key)
}

// Expire is ColumnFamily.Expire on the transaction's default column family.
func (tx *Tx) Expire(key []byte, d time.Duration) error {
	if tx == nil {
		return errNilTx
	}
	return tx.cf.Expire(key, d)
}

// ExpireAt is ColumnFamily.ExpireAt on the transaction's default column family.
func (tx *Tx) ExpireAt(key []byte, at time.Time) error {
	if tx == nil {
		return errNilTx
	}
	return tx.cf.ExpireAt(key, at)
}

// Get is ColumnFamily.Get on the transaction's default column family.
func (tx *Tx) Get(key []byte) ([]byte, error) {
	if tx == nil {
		return nil, errNilTx
	}
	return tx.cf.Get(key)
}

// GetMany is ColumnFamily.GetMany on the transaction's default column family.
func (tx *Tx) GetMany(keys [][]byte) ([][]byte, error) {
	if tx == nil {
		return nil, errNilTx
	}
	return tx.cf.GetMany(keys)
}

// GetTTL is ColumnFamily.GetTTL on the transaction's default column family.
func (tx *Tx) GetTTL(key []byte) ([]byte, time.Duration, error) {
	if tx == nil {
		return nil, 0, errNilTx
	}
	return tx.cf.GetTTL(key)
}

// HasTTL is ColumnFamily.HasTTL on the transaction's default column family.
func (tx *Tx) HasTTL() bool {
	return tx.handle().HasTTL()
}

// Name is ColumnFamily.Name on the transaction's default column family.
func (tx *Tx) Name() string {
	return tx.handle().Name()
}

// Persist is ColumnFamily.Persist on the transaction's default column family.
func (tx *Tx) Persist(key []byte) error {
	if tx == nil {
		return errNilTx
	}
	return tx.cf.Persist(key)
}

// Prefix is ColumnFamily.Prefix on the transaction's default column family.
func (tx *Tx) Prefix(prefix []byte) iter.Seq2[Entry, error] {
	if tx == nil {
		return errSeq(errNilTx)
	}
	return tx.cf.Prefix(prefix)
}

// PurgeExpired is ColumnFamily.PurgeExpired on the transaction's default column family.
func (tx *Tx) PurgeExpired(ctx context.Context) (int, error) {
	if tx == nil {
		return 0, errNilTx
	}
	return tx.cf.PurgeExpired(ctx)
}

// PurgeExpiredN is ColumnFamily.PurgeExpiredN on the transaction's default column family.
func (tx *Tx) PurgeExpiredN(ctx context.Context, max int) (int, error) {
	if tx == nil {
		return 0, errNilTx
	}
	return tx.cf.PurgeExpiredN(ctx, max)
}

// Put is ColumnFamily.Put on the transaction's default column family.
func (tx *Tx) Put(key, value []byte) error {
	if tx == nil {
		return errNilTx
	}
	return tx.cf.Put(key, value)
}

// PutExpireAt is ColumnFamily.PutExpireAt on the transaction's default column family.
func (tx *Tx) PutExpireAt(key, value []byte, at time.Time) error {
	if tx == nil {
		return errNilTx
	}
	return tx.cf.PutExpireAt(key, value, at)
}

// PutIfAbsent is ColumnFamily.PutIfAbsent on the transaction's default column family.
func (tx *Tx) PutIfAbsent(key, value []byte) (bool, error) {
	if tx == nil {
		return false, errNilTx
	}
	return tx.cf.PutIfAbsent(key, value)
}

// PutIfAbsentTTL is ColumnFamily.PutIfAbsentTTL on the transaction's default column family.
func (tx *Tx) PutIfAbsentTTL(key, value []byte, d time.Duration) (bool, error) {
	if tx == nil {
		return false, errNilTx
	}
	return tx.cf.PutIfAbsentTTL(key, value, d)
}

// PutTTL is ColumnFamily.PutTTL on the transaction's default column family.
func (tx *Tx) PutTTL(key, value []byte, d time.Duration) error {
	if tx == nil {
		return errNilTx
	}
	return tx.cf.PutTTL(key, value, d)
}

// Range is ColumnFamily.Range on the transaction's default column family.
func (tx *Tx) Range(start, end []byte) iter.Seq2[Entry, error] {
	if tx == nil {
		return errSeq(errNilTx)
	}
	return tx.cf.Range(start, end)
}

// Registry is ColumnFamily.Registry on the transaction's default column family, for
// internal use.
func (tx *Tx) Registry() *columnfamily.Registry {
	return tx.handle().Registry()
}

// Scan is ColumnFamily.Scan on the transaction's default column family.
func (tx *Tx) Scan(opts IterOptions) iter.Seq2[Entry, error] {
	if tx == nil {
		return errSeq(errNilTx)
	}
	return tx.cf.Scan(opts)
}

// String is ColumnFamily.String on the transaction's default column family.
func (tx *Tx) String() string {
	return tx.handle().String()
}

// TTL is ColumnFamily.TTL on the transaction's default column family.
func (tx *Tx) TTL(key []byte) (time.Duration, error) {
	if tx == nil {
		return 0, errNilTx
	}
	return tx.cf.TTL(key)
}
