package kvstore

import (
	"context"
	"fmt"

	"github.com/snkv-go/snkv/internal/layer/bridge"
	"github.com/snkv-go/snkv/ttl"
)

// Layers: what a package built on hidden tables (see hidden.go) adds to the
// store's own maintenance. A layer registers, through internal/layer, the
// checks of what its rows mean (a vector index's graph links, for one) and
// the repair of what those checks find; CheckIntegrity, IntegrityCheck and
// Repair then run them on every store that has hidden tables of that kind,
// after their own work (but not RepairFile on an encrypted store, which it
// opens without the secret: the layers' rows may be sealed). The row-level
// checks (checksums, STRICT types, Upgrade) already cover hidden tables
// like column families.

// registeredLayers returns the registered layers that store has hidden
// tables of, sorted by kind; none for an encrypted store opened without its
// secret (RepairFile), whose sealed rows layers cannot read.
func (s *Store) registeredLayers(ctx context.Context) ([]bridge.Kind, error) {
	if s.opts.keyless && s.reg.SealHeader() != nil {
		return nil, nil
	}
	var out []bridge.Kind
	for _, k := range bridge.Registered() {
		names, err := s.reg.ListHidden(ctx, k.Name)
		if err != nil {
			return nil, err
		}
		if len(names) > 0 {
			out = append(out, k)
		}
	}
	return out, nil
}

// checkLayers runs the Check of every layer the store has tables of.
func (s *Store) checkLayers(ctx context.Context) ([]string, error) {
	return s.eachLayer(ctx, func(l bridge.Kind) ([]string, error) {
		p, err := l.Check(ctx, s)
		if err != nil {
			return nil, err // what a failed check found is not reported
		}
		return p, nil
	})
}

// repairLayers runs the Repair of every layer the store has tables of.
func (s *Store) repairLayers(ctx context.Context) ([]string, error) {
	return s.eachLayer(ctx, func(l bridge.Kind) ([]string, error) {
		if l.Repair == nil {
			return nil, nil
		}
		return l.Repair(ctx, s)
	})
}

// eachLayer runs fn on every layer the store has tables of and returns the
// lines fn returned, up to and with fn's first error.
func (s *Store) eachLayer(ctx context.Context, fn func(bridge.Kind) ([]string, error)) ([]string, error) {
	ls, err := s.registeredLayers(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range ls {
		p, err := fn(l)
		out = append(out, p...)
		if err != nil {
			return out, fmt.Errorf("%s tables: %w", l.Name, err)
		}
	}
	return out, nil
}

// Clock returns the time source of the store's expiry decisions:
// Options.Clock, or the system clock when that was nil (nil for a nil
// Store). An application that computes expiry times (PutExpireAt) uses it
// to follow the same clock as the store's TTL; so do the layers.
func (s *Store) Clock() Clock {
	if s == nil {
		return nil
	}
	if s.opts.Clock == nil {
		return ttl.SystemClock
	}
	return s.opts.Clock
}
