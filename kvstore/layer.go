package kvstore

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/ttl"
)

// Layers: what a package built on hidden tables (see hidden.go) adds to the
// store's own maintenance. A layer registers, once per kind of hidden
// table, the checks of what its rows mean (a vector index's graph links,
// for one) and the repair of what those checks find; CheckIntegrity,
// IntegrityCheck and Repair then run them on every store that has hidden
// tables of that kind, after their own work, whichever code opened the
// store (but not RepairFile on an encrypted store, which it opens without
// the secret: the layers' rows may be sealed). The row-level checks (checksums, STRICT types, Upgrade) already
// cover hidden tables like column families.

// Layer is the maintenance a layer registers for its kind of hidden tables.
type Layer struct {
	// Check returns one line per problem found in the layer's tables of
	// store (none: nil). The error is for a check that could not run. It
	// must only read.
	Check func(ctx context.Context, store *Store) ([]string, error)
	// Repair mends what Check finds and returns one line per repair made.
	// Nil: the layer repairs nothing.
	Repair func(ctx context.Context, store *Store) ([]string, error)
}

var (
	layersMu sync.RWMutex
	layers   = map[string]Layer{}
)

// RegisterLayer registers the maintenance of the hidden tables of kind,
// typically from the layer package's init. A second registration of the
// same kind replaces the first. It panics for a kind that is not 1 to 32
// bytes of [a-z0-9_] or is "kv", or a Layer without Check: both are
// programming errors.
func RegisterLayer(kind string, l Layer) {
	if !validKind(kind) || l.Check == nil {
		panic(fmt.Sprintf("kvstore: RegisterLayer(%q): bad kind or nil Check", kind))
	}
	layersMu.Lock()
	defer layersMu.Unlock()
	layers[kind] = l
}

func validKind(kind string) bool {
	if kind == "" || len(kind) > 32 || kind == "kv" {
		return false
	}
	for i := 0; i < len(kind); i++ {
		c := kind[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// registeredLayers returns the registered kinds that store has hidden
// tables of, sorted, with their layers; none for an encrypted store opened
// without its secret (RepairFile), whose sealed rows layers cannot read.
func (s *Store) registeredLayers(ctx context.Context) ([]string, map[string]Layer, error) {
	if s.opts.keyless && s.reg.SealHeader() != nil {
		return nil, nil, nil
	}
	layersMu.RLock()
	all := make(map[string]Layer, len(layers))
	for k, l := range layers {
		all[k] = l
	}
	layersMu.RUnlock()
	var kinds []string
	for k := range all {
		names, err := s.ListHiddenTables(ctx, k)
		if err != nil {
			return nil, nil, err
		}
		if len(names) > 0 {
			kinds = append(kinds, k)
		}
	}
	sort.Strings(kinds)
	return kinds, all, nil
}

// checkLayers runs the Check of every layer the store has tables of.
func (s *Store) checkLayers(ctx context.Context) ([]string, error) {
	kinds, ls, err := s.registeredLayers(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range kinds {
		p, err := ls[k].Check(ctx, s)
		if err != nil {
			return out, fmt.Errorf("%s tables: %w", k, err)
		}
		out = append(out, p...)
	}
	return out, nil
}

// repairLayers runs the Repair of every layer the store has tables of.
func (s *Store) repairLayers(ctx context.Context) ([]string, error) {
	kinds, ls, err := s.registeredLayers(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range kinds {
		if ls[k].Repair == nil {
			continue
		}
		p, err := ls[k].Repair(ctx, s)
		out = append(out, p...)
		if err != nil {
			return out, fmt.Errorf("%s tables: %w", k, err)
		}
	}
	return out, nil
}

// Clock returns the time source of the store's expiry decisions:
// Options.Clock, or the system clock when that was nil (nil for a nil
// Store). Layers above use it so that their own expiries follow the same
// clock as the store's TTL.
func (s *Store) Clock() Clock {
	if s == nil {
		return nil
	}
	if s.opts.Clock == nil {
		return ttl.SystemClock
	}
	return s.opts.Clock
}

// ExpiryMs returns the expiry, in milliseconds since the Unix epoch, that
// the store's TTL writes give a key written at now: with time-to-live d
// when d is not 0 (PutTTL's rules: rounded up to the millisecond; a
// negative d, or one past the latest expiry possible, is ErrInvalidTTL),
// else at expiry time at when it is not zero (PutExpireAt's rules: in
// the future, rounded up), else 0, no expiry. An expiry that a clock
// before 1970 puts at or before the epoch is ErrClockRange. Layers that
// keep expiries of their own (package vector) use it, with Clock, so that
// they follow the store's rules.
func ExpiryMs(now time.Time, d time.Duration, at time.Time) (int64, error) {
	switch {
	case d != 0:
		return expiry.ExpiryFromTTL(expiry.Ms(now), d)
	case !at.IsZero():
		return expiry.ExpiryFromTime(expiry.Ms(now), at)
	}
	return 0, nil
}
