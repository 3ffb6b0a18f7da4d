// Package bridge is where kvstore hands package layer the operations on
// hidden tables and where layer hands kvstore the registered layers'
// maintenance, without either package exporting them to applications:
// kvstore imports bridge and fills in Ops from its init; layer imports
// kvstore and bridge and gives the layers typed calls. Values cross as
// any; only kvstore and layer touch this package.
package bridge

import (
	"context"
	"fmt"
	"sort"
	"sync"
)

// Ops are kvstore's operations on hidden tables. The first argument is a
// *kvstore.Tx (Create, Drop) or a *kvstore.Store (the others); the
// handle returned is a *kvstore.ColumnFamily.
type Ops struct {
	Create func(tx any, kind, name string, sealed bool) (any, error)
	Drop   func(tx any, kind, name string) error
	Open   func(ctx context.Context, store any, kind, name string) (any, error)
	List   func(ctx context.Context, store any, kind string) ([]string, error)
	Seal   func(ctx context.Context, store any, kind, name string) error
	// Engine returns a usable *kvstore.Store's *engine.DB and its
	// *changelog.Feeds (the change feed's plumbing).
	Engine func(ctx context.Context, store any) (db, feeds any, err error)
	// EngineTx returns a *kvstore.Tx's *engine.Tx.
	EngineTx func(tx any) (any, error)
	// TxStore returns the *kvstore.Store of a *kvstore.Tx.
	TxStore func(tx any) any
}

// Store is filled in by kvstore's init.
var Store Ops

// Maintenance is a registered layer's check and repair, taking a
// *kvstore.Store.
type Maintenance struct {
	Check  func(ctx context.Context, store any) ([]string, error)
	Repair func(ctx context.Context, store any) ([]string, error)
}

var (
	mu     sync.RWMutex
	layers = map[string]Maintenance{}
)

// ValidKind reports whether kind can name a layer's hidden tables: 1 to 32
// bytes of [a-z0-9_], not "kv" (the kind of column families).
func ValidKind(kind string) bool {
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

// Register records the maintenance of kind, replacing an earlier one. It
// panics on a bad kind or a nil Check.
func Register(kind string, m Maintenance) {
	if !ValidKind(kind) || m.Check == nil {
		panic(fmt.Sprintf("layer: Register(%q): bad kind or nil Check", kind))
	}
	mu.Lock()
	defer mu.Unlock()
	layers[kind] = m
}

// Kind is one registered layer.
type Kind struct {
	Name string
	Maintenance
}

// Registered returns the registered layers, sorted by kind.
func Registered() []Kind {
	mu.RLock()
	out := make([]Kind, 0, len(layers))
	for k, m := range layers {
		out = append(out, Kind{k, m})
	}
	mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
