package vector

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/snkv-go/snkv/internal/hnsw"
	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
)

// Index is an open vector index. It is safe for concurrent use: searches
// run in parallel; the in-memory graph follows every commit (of this
// process at once, through Tx.OnCommit; of others at the next search or
// read, from the change log).
type Index struct {
	store *kvstore.Store
	name  string
	cfg   config
	opts  Options
	t     tables

	mu sync.RWMutex // guards m; searches hold it shared, applying changes exclusively
	m  *mem
	// applyMu lets one goroutine at a time change m (apply.go).
	applyMu sync.Mutex
	// txs holds the changes of the write transactions in progress.
	txMu sync.Mutex
	txs  map[*kvstore.Tx]*txChanges

	closed    atomic.Bool
	stop      chan struct{}
	kick      chan struct{}
	wg        sync.WaitGroup
	persistMu sync.Mutex // one persistence step at a time
}

type tables struct{ meta, keys, vecs, graph, log, free *kvstore.ColumnFamily }

func (t tables) in(tx *kvstore.Tx) tables {
	return tables{tx.CF(t.meta), tx.CF(t.keys), tx.CF(t.vecs), tx.CF(t.graph), tx.CF(t.log), tx.CF(t.free)}
}

var suffixes = []string{suffixKeys, suffixVecs, suffixGph, suffixLog, suffixFree, suffixMeta}

func openTables(ctx context.Context, s *kvstore.Store, name string) (tables, error) {
	var t tables
	ptrs := []**kvstore.ColumnFamily{&t.keys, &t.vecs, &t.graph, &t.log, &t.free, &t.meta}
	for i, suf := range suffixes {
		cf, err := layer.OpenHiddenTable(ctx, s, kind, name+suf)
		if err != nil {
			return t, err
		}
		*ptrs[i] = cf
	}
	return t, nil
}

func checkName(name string) error {
	if name == "" || len(name) > 200 || strings.ContainsRune(name, 0) || strings.Contains(name, "/") {
		return fmt.Errorf("%w: vector index name %q (1 to 200 bytes, no NUL or '/')", kvstore.ErrInvalidName, name)
	}
	return nil
}

// Open opens the index name of store, creating it (which needs opts.Dim)
// if it does not exist, and loads it into memory: every vector, the graph
// as last saved, and the vectors whose links were not saved are linked
// again.
//
// It fails with kvstore.ErrInvalidName for a bad name, ErrMismatch when
// opts differ from what the index was created with, ErrNotFound when the
// index does not exist and opts.Dim is 0 or the store is read-only,
// ErrCorrupt for a row that does not decode, and the store's errors.
// Cost: one read of every row of the index (O(n · Dim)), plus an insert
// for each vector whose links were not saved (after a crash: at most what
// the background writer had not saved).
func Open(ctx context.Context, store *kvstore.Store, name string, opts Options) (*Index, error) {
	if store == nil || ctx == nil {
		return nil, fmt.Errorf("vector: open: %w: nil store or context", kvstore.ErrInvalidArgument)
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	if opts.Metric > Dot || opts.Storage > Int8 || opts.Dim < 0 || opts.Dim > 1<<16 || opts.M < 0 || opts.EfConstruction < 0 || opts.EfSearch < 0 || opts.PersistStep < 0 {
		return nil, fmt.Errorf("vector: open %q: %w: option out of range", name, kvstore.ErrInvalidOption)
	}
	t, err := openTables(ctx, store, name)
	if errors.Is(err, kvstore.ErrNotFound) && opts.Dim > 0 && !store.ReadOnly() {
		t, err = create(ctx, store, name, opts)
	}
	if errors.Is(err, kvstore.ErrNotFound) {
		return nil, fmt.Errorf("vector: open %q: %w: %w", name, ErrNoIndex, err)
	}
	if err != nil {
		return nil, fmt.Errorf("vector: open %q: %w", name, err)
	}
	raw, err := t.meta.Get(metaConfig)
	if err != nil {
		return nil, fmt.Errorf("vector: open %q: config: %w", name, err)
	}
	cfg, err := decodeConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("vector: open %q: %w", name, err)
	}
	if (opts.Dim != 0 && opts.Dim != cfg.Dim) || (opts.Metric != 0 && opts.Metric != cfg.Metric) ||
		(opts.Storage != 0 && opts.Storage != cfg.Storage) || (opts.M != 0 && opts.M != cfg.M) ||
		(opts.EfConstruction != 0 && opts.EfConstruction != cfg.EfC) {
		return nil, fmt.Errorf("vector: open %q: %w: created with dim %d, %s, %s, M %d, efConstruction %d",
			name, ErrMismatch, cfg.Dim, cfg.Metric, cfg.Storage, cfg.M, cfg.EfC)
	}
	if opts.EfSearch == 0 {
		opts.EfSearch = DefaultEfSearch
	}
	if opts.PersistInterval <= 0 {
		opts.PersistInterval = 250 * time.Millisecond
	}
	if opts.PersistStep == 0 {
		opts.PersistStep = 4096
	}
	if !store.ReadOnly() {
		if err := sealTables(ctx, store, name); err != nil {
			return nil, fmt.Errorf("vector: open %q: %w", name, err)
		}
	}
	ix := &Index{store: store, name: name, cfg: cfg, opts: opts, t: t, stop: make(chan struct{}), kick: make(chan struct{}, 1)}
	if err := ix.load(ctx); err != nil {
		return nil, fmt.Errorf("vector: open %q: %w", name, err)
	}
	if !store.ReadOnly() {
		ix.wg.Add(1)
		go ix.background()
	}
	register(ix)
	return ix, nil
}

func create(ctx context.Context, s *kvstore.Store, name string, opts Options) (tables, error) {
	m, efc := opts.M, opts.EfConstruction
	if m == 0 {
		m = 16
	}
	if efc == 0 {
		efc = 128
	}
	if m < 2 || m > 128 || efc < m || efc > 4096 {
		return tables{}, fmt.Errorf("%w: M %d (2..128), EfConstruction %d (M..4096)", kvstore.ErrInvalidOption, m, efc)
	}
	cfg := config{Dim: opts.Dim, M: m, EfC: efc, Metric: opts.Metric, Storage: opts.Storage, BlockVecs: blockVecsFor(opts.Dim)}
	// A version-1 store cannot record sealed tables (it cannot be
	// encrypted either): its tables are sealed by the first writable Open
	// after Upgrade.
	v, err := s.FormatVersion(ctx)
	if err != nil {
		return tables{}, err
	}
	var t tables
	err = s.Update(ctx, func(tx *kvstore.Tx) error {
		ptrs := []**kvstore.ColumnFamily{&t.keys, &t.vecs, &t.graph, &t.log, &t.free, &t.meta}
		for i, suf := range suffixes {
			var opt []layer.HiddenOption
			if suf != suffixMeta && suf != suffixFree && v >= 2 {
				opt = append(opt, layer.HiddenSealed)
			}
			cf, err := layer.CreateHiddenTable(tx, kind, name+suf, opt...)
			if err != nil {
				return err
			}
			*ptrs[i] = cf
		}
		meta := tx.CF(t.meta)
		if err := meta.Put(metaSeq, u64key(0)); err != nil {
			return err
		}
		if err := meta.Put(metaNext, u64key(0)); err != nil {
			return err
		}
		return meta.Put(metaConfig, cfg.encode()) // last: its presence marks the index
	})
	if errors.Is(err, kvstore.ErrExists) {
		return openTables(ctx, s, name)
	}
	return t, err
}

// sealTables marks the tables that hold vectors, values, metadata and links
// sealed in a store of the current format, for an index created in a
// version-1 store before Upgrade (a table already sealed is left alone).
func sealTables(ctx context.Context, s *kvstore.Store, name string) error {
	if v, err := s.FormatVersion(ctx); err != nil || v < 2 {
		return err
	}
	for _, suf := range suffixes {
		if suf == suffixMeta || suf == suffixFree {
			continue
		}
		if err := layer.SealHiddenTable(ctx, s, kind, name+suf); err != nil {
			return err
		}
	}
	return nil
}

func (ix *Index) newGraph() (*hnsw.Graph, error) {
	return hnsw.New(hnsw.Config{Dim: ix.cfg.Dim, Metric: hnsw.Metric(ix.cfg.Metric), Storage: hnsw.Storage(ix.cfg.Storage),
		M: ix.cfg.M, EfConstruction: ix.cfg.EfC, Seed: 1})
}

// List returns the names of the vector indexes of store, sorted.
func List(ctx context.Context, store *kvstore.Store) ([]string, error) {
	names, err := layer.ListHiddenTables(ctx, store, kind)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if base, ok := strings.CutSuffix(n, suffixMeta); ok {
			out = append(out, base)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Drop deletes the index name of store, all its tables, in one
// transaction. An Index open on it must be closed first: every later call
// of it fails with ErrNoIndex (also once an index of that name is created
// again; open that one anew). A missing index gives ErrNoIndex (which
// matches ErrNotFound).
func Drop(ctx context.Context, store *kvstore.Store, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	err := store.Update(ctx, func(tx *kvstore.Tx) error {
		for _, suf := range suffixes {
			if err := layer.DropHiddenTable(tx, kind, name+suf); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, kvstore.ErrNotFound) {
		return fmt.Errorf("vector: drop %q: %w: %w", name, ErrNoIndex, err)
	}
	if err != nil {
		return fmt.Errorf("vector: drop %q: %w", name, err)
	}
	return nil
}

// Name returns the index's name.
func (ix *Index) Name() string { return ix.name }

// Dim returns the index's dimension.
func (ix *Index) Dim() int { return ix.cfg.Dim }

// Close stops the background work, saves the graph links not yet saved
// (so that the next Open links nothing again) and releases the memory.
// A second Close returns ErrClosed. It does not close the store.
func (ix *Index) Close() error {
	if ix == nil || !ix.closed.CompareAndSwap(false, true) {
		return ErrClosed
	}
	close(ix.stop)
	ix.wg.Wait()
	unregister(ix)
	// Wait for a commit being applied: later ones see the index closed.
	ix.applyMu.Lock()
	//lint:ignore SA2001 an empty critical section: a barrier
	ix.applyMu.Unlock()

	var err error
	if !ix.store.ReadOnly() {
		err = ix.persistAll(context.Background())
	}
	ix.mu.Lock()
	ix.m = nil
	ix.mu.Unlock()
	return err
}

func (ix *Index) usable(ctx context.Context) error {
	if ix == nil || ctx == nil {
		return fmt.Errorf("vector: %w: nil index or context", kvstore.ErrInvalidArgument)
	}
	if ix.closed.Load() {
		return ErrClosed
	}
	return ctx.Err()
}

// noIndex makes the ErrNotFound of one of the index's tables (every call
// on a table of a dropped index fails with it, also once an index of the
// same name is created again) ErrNoIndex, which still matches ErrNotFound.
func (ix *Index) noIndex(err error) error {
	if errors.Is(err, kvstore.ErrNotFound) && !errors.Is(err, ErrNoIndex) {
		return fmt.Errorf("vector: %q: %w: %w", ix.name, ErrNoIndex, err)
	}
	return err
}

// missing is the error of a key whose row is not found in the
// transaction: ErrNoIndex when the index itself is gone (its meta table
// fails too), else err.
func (w *Tx) missing(err error) error {
	if !errors.Is(err, kvstore.ErrNotFound) {
		return err
	}
	if _, merr := w.t.meta.Get(metaSeq); merr != nil {
		return w.ix.noIndex(merr)
	}
	return err
}

func (ix *Index) report(err error) {
	if err != nil && ix.opts.OnError != nil {
		ix.opts.OnError(err)
	}
}

// Stats returns the index's figures, after applying what other processes
// committed.
func (ix *Index) Stats(ctx context.Context) (Stats, error) {
	if err := ix.sync(ctx); err != nil {
		return Stats{}, err
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	m := ix.m
	if m == nil {
		return Stats{}, ErrClosed
	}
	return Stats{Dim: ix.cfg.Dim, Metric: ix.cfg.Metric, Storage: ix.cfg.Storage, M: ix.cfg.M, EfConstruction: ix.cfg.EfC,
		EfSearch: ix.opts.EfSearch, Count: len(m.byKey), Tombstones: m.g.Tombstones(), Slots: m.g.Len(),
		MemoryBytes: m.g.MemoryBytes() + m.bytes(), Unpersisted: m.g.Dirty(), Seq: m.applied}, nil
}
