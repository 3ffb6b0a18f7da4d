package kvstore

import (
	"context"
	"iter"
	"time"

	"github.com/snkv-go/snkv/columnfamily"
)

// The default column family's methods on *Store, written out rather than
// promoted from an embedded *ColumnFamily so that a call on a nil *Store
// returns ErrInvalidArgument instead of panicking on the nil pointer. Each
// behaves exactly as the ColumnFamily method of the same name (see the
// columnfamily package) on the handle Default returns.

// handle is the default column family's handle; nil for a nil Store (its
// accessors then give zero values).
func (s *Store) handle() *ColumnFamily {
	if s == nil {
		return nil
	}
	return s.cf
}

// errSeq is an iteration that yields err once.
func errSeq(err error) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) { yield(Entry{}, err) }
}

// All is ColumnFamily.All on the default column family.
func (s *Store) All() iter.Seq2[Entry, error] {
	if s == nil {
		return errSeq(errNilStore)
	}
	return s.cf.All()
}

// Apply is ColumnFamily.Apply on the default column family.
func (s *Store) Apply(ctx context.Context, b *Batch) error {
	if s == nil {
		return errNilStore
	}
	return s.cf.Apply(ctx, b)
}

// Backward is ColumnFamily.Backward on the default column family.
func (s *Store) Backward() iter.Seq2[Entry, error] {
	if s == nil {
		return errSeq(errNilStore)
	}
	return s.cf.Backward()
}

// CheckTTL is ColumnFamily.CheckTTL on the default column family only;
// other column families are not checked. CheckIntegrity checks the TTL
// state of every column family (with the rest of the store).
func (s *Store) CheckTTL(ctx context.Context) ([]string, error) {
	if s == nil {
		return nil, errNilStore
	}
	return s.cf.CheckTTL(ctx)
}

// Clear is ColumnFamily.Clear on the default column family only: it
// removes the default column family's keys and leaves every other column
// family as it is (DropColumnFamily removes one of those whole).
func (s *Store) Clear() error {
	if s == nil {
		return errNilStore
	}
	return s.cf.Clear()
}

// Count is ColumnFamily.Count on the default column family only: the live
// keys of the default column family, not of the store. Count each column
// family through its handle, or use CountKeys for one by name (live, TTL
// and expired-not-yet-purged keys).
func (s *Store) Count() (int64, error) {
	if s == nil {
		return 0, errNilStore
	}
	return s.cf.Count()
}

// Cursor is ColumnFamily.Cursor on the default column family. The cursor
// takes its snapshot when it is first positioned (First, Last or Seek),
// not when Cursor returns, and keeps that snapshot until Close: writes
// committed between Cursor and the first positioning are seen, later ones
// are not, even after it is positioned again.
func (s *Store) Cursor(opts IterOptions) (*Cursor, error) {
	if s == nil {
		return nil, errNilStore
	}
	return s.cf.Cursor(opts)
}

// Delete is ColumnFamily.Delete on the default column family.
func (s *Store) Delete(key []byte) error {
	if s == nil {
		return errNilStore
	}
	return s.cf.Delete(key)
}

// DeleteRange is ColumnFamily.DeleteRange on the default column family.
func (s *Store) DeleteRange(ctx context.Context, start, end []byte) (int64, error) {
	if s == nil {
		return 0, errNilStore
	}
	return s.cf.DeleteRange(ctx, start, end)
}

// DeleteRangeInBatches is ColumnFamily.DeleteRangeInBatches on the default
// column family.
func (s *Store) DeleteRangeInBatches(ctx context.Context, start, end []byte, batch int) (int64, error) {
	if s == nil {
		return 0, errNilStore
	}
	return s.cf.DeleteRangeInBatches(ctx, start, end, batch)
}

// Exists is ColumnFamily.Exists on the default column family.
func (s *Store) Exists(key []byte) (bool, error) {
	if s == nil {
		return false, errNilStore
	}
	return s.cf.Exists(key)
}

// Expire is ColumnFamily.Expire on the default column family.
func (s *Store) Expire(key []byte, d time.Duration) error {
	if s == nil {
		return errNilStore
	}
	return s.cf.Expire(key, d)
}

// ExpireAt is ColumnFamily.ExpireAt on the default column family.
func (s *Store) ExpireAt(key []byte, at time.Time) error {
	if s == nil {
		return errNilStore
	}
	return s.cf.ExpireAt(key, at)
}

// Get is ColumnFamily.Get on the default column family.
func (s *Store) Get(key []byte) ([]byte, error) {
	if s == nil {
		return nil, errNilStore
	}
	return s.cf.Get(key)
}

// GetMany is ColumnFamily.GetMany on the default column family.
func (s *Store) GetMany(keys [][]byte) ([][]byte, error) {
	if s == nil {
		return nil, errNilStore
	}
	return s.cf.GetMany(keys)
}

// GetTTL is ColumnFamily.GetTTL on the default column family.
func (s *Store) GetTTL(key []byte) ([]byte, time.Duration, error) {
	if s == nil {
		return nil, 0, errNilStore
	}
	return s.cf.GetTTL(key)
}

// HasTTL is ColumnFamily.HasTTL on the default column family.
func (s *Store) HasTTL() bool {
	return s.handle().HasTTL()
}

// Name is ColumnFamily.Name on the default column family.
func (s *Store) Name() string {
	return s.handle().Name()
}

// Persist is ColumnFamily.Persist on the default column family.
func (s *Store) Persist(key []byte) error {
	if s == nil {
		return errNilStore
	}
	return s.cf.Persist(key)
}

// Prefix is ColumnFamily.Prefix on the default column family.
func (s *Store) Prefix(prefix []byte) iter.Seq2[Entry, error] {
	if s == nil {
		return errSeq(errNilStore)
	}
	return s.cf.Prefix(prefix)
}

// PurgeExpired is ColumnFamily.PurgeExpired on the default column family
// only; the expired keys of other column families stay until their own
// purge. PurgeExpiredAll purges every column family, and the store runs it
// by itself every Options.PurgeInterval (one minute by default on the
// system clock; off with an injected Clock or PurgeInterval -1).
func (s *Store) PurgeExpired(ctx context.Context) (int, error) {
	if s == nil {
		return 0, errNilStore
	}
	return s.cf.PurgeExpired(ctx)
}

// PurgeExpiredN is ColumnFamily.PurgeExpiredN on the default column
// family only (see PurgeExpired).
func (s *Store) PurgeExpiredN(ctx context.Context, max int) (int, error) {
	if s == nil {
		return 0, errNilStore
	}
	return s.cf.PurgeExpiredN(ctx, max)
}

// Put is ColumnFamily.Put on the default column family.
func (s *Store) Put(key, value []byte) error {
	if s == nil {
		return errNilStore
	}
	return s.cf.Put(key, value)
}

// PutExpireAt is ColumnFamily.PutExpireAt on the default column family.
func (s *Store) PutExpireAt(key, value []byte, at time.Time) error {
	if s == nil {
		return errNilStore
	}
	return s.cf.PutExpireAt(key, value, at)
}

// PutIfAbsent is ColumnFamily.PutIfAbsent on the default column family.
func (s *Store) PutIfAbsent(key, value []byte) (bool, error) {
	if s == nil {
		return false, errNilStore
	}
	return s.cf.PutIfAbsent(key, value)
}

// PutIfAbsentTTL is ColumnFamily.PutIfAbsentTTL on the default column family.
func (s *Store) PutIfAbsentTTL(key, value []byte, d time.Duration) (bool, error) {
	if s == nil {
		return false, errNilStore
	}
	return s.cf.PutIfAbsentTTL(key, value, d)
}

// PutTTL is ColumnFamily.PutTTL on the default column family.
func (s *Store) PutTTL(key, value []byte, d time.Duration) error {
	if s == nil {
		return errNilStore
	}
	return s.cf.PutTTL(key, value, d)
}

// Range is ColumnFamily.Range on the default column family.
func (s *Store) Range(start, end []byte) iter.Seq2[Entry, error] {
	if s == nil {
		return errSeq(errNilStore)
	}
	return s.cf.Range(start, end)
}

// Registry is ColumnFamily.Registry on the default column family, for
// internal use.
func (s *Store) Registry() *columnfamily.Registry {
	return s.handle().Registry()
}

// Scan is ColumnFamily.Scan on the default column family.
func (s *Store) Scan(opts IterOptions) iter.Seq2[Entry, error] {
	if s == nil {
		return errSeq(errNilStore)
	}
	return s.cf.Scan(opts)
}

// String is ColumnFamily.String on the default column family.
func (s *Store) String() string {
	return s.handle().String()
}

// TTL is ColumnFamily.TTL on the default column family.
func (s *Store) TTL(key []byte) (time.Duration, error) {
	if s == nil {
		return 0, errNilStore
	}
	return s.cf.TTL(key)
}
