package kvstore

import (
	"context"
	"fmt"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/ttl"
)

// KeyCounts is what CountKeys reports about one column family, all read
// from one snapshot.
type KeyCounts struct {
	// Name is the column family's name as stored in the catalog.
	Name string
	// Stored is the number of rows in the data table: the live keys plus
	// the expired keys that no purge or lazy delete has removed yet.
	Stored int64
	// Live is the number of keys a read can see: Stored - Expired. It is
	// what ColumnFamily.Count returns.
	Live int64
	// TTL is the number of stored keys that carry an expiry, expired or not.
	TTL int64
	// Expired is the number of keys whose expiry has passed (as of
	// Options.Clock) and that are still stored, waiting for PurgeExpired.
	Expired int64
}

// CountKeys counts the keys of the column family name: stored, live, with
// a TTL, and expired but not yet purged, in one read transaction. It reads
// the hidden TTL tables directly, so it sees expired keys that every other
// read hides, and never deletes anything (it works on a read-only store).
//
// Errors: ErrNotFound if there is no such column family; ErrInvalidName,
// ErrReservedName for a bad name. Safe for concurrent use. Cost: SQLite's
// count of the data table and of the key index (a walk of their leaf pages,
// without decoding values), O(n); the expired keys are counted on the head
// of the expiry index, O(log n + e).
func (s *Store) CountKeys(ctx context.Context, name string) (KeyCounts, error) {
	cf, err := s.OpenColumnFamily(name)
	if err != nil {
		return KeyCounts{}, err
	}
	kc := KeyCounts{Name: cf.Name()}
	clock := s.opts.Clock
	if clock == nil {
		clock = ttl.SystemClock
	}
	t := layout.For(kc.Name, false, false) // the names only
	tx, err := s.db.Begin(ctx, false)
	if err != nil {
		return kc, err
	}
	defer func() { _ = tx.Rollback() }()
	c := tx.Conn()
	count := func(dst *int64, query string, args ...any) error {
		rows, err := c.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		if rows.Next() {
			*dst = rows.Int(0)
		}
		return rows.Close()
	}
	if err := count(&kc.Stored, "SELECT count(*) FROM "+t.Quoted.Data); err != nil {
		return kc, engine.Wrap(ctx, fmt.Sprintf("%s: count keys", kc.Name), err)
	}
	enabled, err := expiry.Enabled(ctx, c, &t)
	if err != nil {
		return kc, engine.Wrap(ctx, fmt.Sprintf("%s: count keys", kc.Name), err)
	}
	if enabled {
		if err := count(&kc.TTL, "SELECT count(*) FROM "+t.Quoted.Keys); err != nil {
			return kc, engine.Wrap(ctx, fmt.Sprintf("%s: count keys", kc.Name), err)
		}
		if kc.Expired, err = expiry.CountExpired(ctx, c, &t, expiry.NowMs(clock)); err != nil {
			return kc, engine.Wrap(ctx, fmt.Sprintf("%s: count keys", kc.Name), err)
		}
	}
	kc.Live = kc.Stored - kc.Expired
	return kc, nil
}
