package kvstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/snkv-go/snkv/columnfamily"
	"github.com/snkv-go/snkv/internal/catalog"
	"github.com/snkv-go/snkv/internal/changelog"
	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/family"
	"github.com/snkv-go/snkv/iterator"
	"github.com/snkv-go/snkv/ttl"
)

// ColumnFamily is a handle to one column family: a named, ordered key
// space of its own (a SQLite table), with keys of 1 byte to MaxKeySize and
// values up to Options.MaxValueSize. Get one from Store.CreateColumnFamily,
// OpenColumnFamily, ColumnFamilyOrCreate or Default; inside a transaction,
// Tx.CF(cf) binds it to the transaction.
//
// A handle from the store runs each call in a transaction of its own and
// is safe for concurrent use by many goroutines; a handle bound to a
// transaction runs inside it and follows the transaction's rule of one
// goroutine. Once its column family is dropped (by any store or process)
// every call fails with ErrNotFound, also after a column family of the
// same name is created again.
//
// Its methods (each documented in full by go doc
// github.com/snkv-go/snkv/columnfamily.ColumnFamily; the Store offers
// every one of them for the default column family):
//
//   - read: Get (ErrNotFound when missing or expired), GetMany, Exists,
//     Count (live keys, O(n)), Name, HasTTL;
//   - write: Put, PutIfAbsent, Delete (ErrNotFound when missing), Apply (a
//     Batch in one transaction), DeleteRange (a key range in one
//     transaction) and DeleteRangeInBatches (in bounded transactions),
//     Clear (every key of this column family);
//   - iterate, in key order or reversed: All, Backward, Prefix, Range,
//     Scan (IterOptions), each a range-over-func sequence of (Entry, error);
//     Cursor for First, Last, Seek, Next and Prev;
//   - expire: PutTTL, PutExpireAt, PutIfAbsentTTL, Expire, ExpireAt,
//     Persist, TTL and GetTTL (NoTTL for a permanent key), PurgeExpired
//     and PurgeExpiredN (this column family only), CheckTTL.
//
// A write on a handle from the store commits before it returns; a failed
// call changes nothing.
type ColumnFamily = columnfamily.ColumnFamily

// Batch collects writes for ColumnFamily.Apply.
type Batch = columnfamily.Batch

// IterOptions selects the keys an iteration visits (prefix, range,
// direction).
type IterOptions = iterator.Options

// Entry is one key-value pair yielded by an iteration.
type Entry = iterator.Entry

// Cursor is an explicit iterator with First, Last, Seek, Next and Prev,
// made by ColumnFamily.Cursor (or Store.Cursor, Tx.Cursor). Outside a
// transaction it holds a read connection until Close and takes its
// snapshot when it is first positioned, not when it is made: writes
// committed between the two are seen, and none after. A Cursor is not safe
// for concurrent use; Close it to release its connection.
type Cursor = iterator.Cursor

// DefaultColumnFamily is the name of the column family every store has.
const DefaultColumnFamily = family.DefaultName

// Store is an open snkv store. Every ColumnFamily method (Put, Get,
// PutTTL, Scan, …) is also a Store method acting on the default column
// family: db.Put(k, v) is db.Default().Put(k, v). A Store is safe for
// concurrent use by many goroutines.
type Store struct {
	cf   *ColumnFamily // the default column family
	db   *engine.DB
	reg  *catalog.Registry
	path string
	opts Options

	stopPurge  context.CancelFunc
	purgeWG    sync.WaitGroup
	purgeEvery time.Duration // the background purge's interval; 0: none
	// purgeList is what the last PurgeExpiredAll listed (purgeAllList).
	purgeList atomic.Pointer[purgeList]

	// sealState is the encryption of the store while it is open
	// (encryption_convert.go).
	sealState
}

// Open opens the store at path, creating the file if it does not exist
// (unless ReadOnly). An empty path (or ":memory:") opens a private
// in-memory store that vanishes on Close, with a file store's concurrency
// rules: it is a WAL store whose files live in a private directory on a
// memory-backed file system (/dev/shm on Linux when it is a tmpfs with at
// least 1 GiB free, else os.TempDir()), never synced and removed at Close
// (docs/concurrency.md, "In-memory stores"; its memory in docs/memory.md).
// Any other path names a file, as written: SQLite's URIs are not read, so
// "file::memory:" is a file of that name in the working directory.
//
// Open fails with ErrInvalidOption for bad options, ErrCantOpen for a path
// that cannot be opened (a directory, a missing file opened read-only),
// ErrCorrupt for a file that is not a database or is damaged, ErrNotStore
// for another application's SQLite database (see Options.Adopt),
// ErrVersion for a store written by a newer format, ErrAuth for an
// encrypted store opened without its secret or with the wrong one (see
// Options.Encryption; with it, Open also costs the key derivation), and
// ErrNotEncrypted for an existing store in the clear opened with a secret.
// A refused open leaves every file of the store as it was.
//
// Cost: Open opens one SQLite connection (a file store in WAL mode also
// starts its checkpoint goroutine, whose connection opens at the first
// checkpoint), which parses the whole schema of
// the file: every column family is a SQLite table with its view and
// triggers (3 schema objects, 8 once it has used TTL), and the parse grows
// faster than linearly with their number. Measured on a 2-core machine
// with stores whose column families all have TTL state, Open+Close took
// about 3 ms at 10 column families, 10 ms at 100, 0.1-0.15 s at 1,000 and
// 0.7-0.9 s at 3,000. Each further read connection (opened on demand, up
// to Options.MaxReaders) pays the same parse on its first use (about
// 1 ms, 8 ms, 0.1 s and 0.5-0.65 s) and keeps the parsed schema while it
// is open (about 26 KiB per column family: 2.5 MiB at 100, 75 MiB at
// 3,000). Nothing else depends on the number of column families. See
// docs/benchmarks.md, "Decision: Open and reader connections".
func Open(path string, opts Options) (*Store, error) {
	if path == ":memory:" {
		path = ""
	}
	cfg, err := opts.config(path)
	if err != nil {
		return nil, err
	}
	db, reg, err := openRegistry(path, cfg, opts)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	s := &Store{db: db, reg: reg, path: path, opts: opts}
	// Refused (encryption): every file stays as it was, the -shm too.
	finishSeal, err := s.openSeal()
	if err != nil {
		s.closeSeal()
		_ = db.Discard()
		return nil, fmt.Errorf("snkv: open %q: %w", path, err)
	}
	if err := db.EndProbe(); err != nil {
		s.closeSeal()
		_ = db.Close()
		return nil, fmt.Errorf("snkv: open %q: %w", path, err)
	}
	if opts.Upgrade && !opts.ReadOnly {
		if err := reg.Upgrade(ctx, opts.UpgradeBatch); err != nil {
			s.closeSeal()
			_ = db.Close()
			return nil, fmt.Errorf("snkv: open %q: %w", path, err)
		}
	}
	if err := finishSeal(ctx); err != nil {
		s.closeSeal()
		_ = db.Close()
		return nil, fmt.Errorf("snkv: open %q: %w", path, err)
	}
	def, err := reg.OpenDefault(ctx)
	if err != nil {
		s.closeSeal()
		_ = db.Discard()
		return nil, fmt.Errorf("snkv: open %q: %w", path, err)
	}
	s.cf = handleOf(def)
	if every := opts.purgeInterval(); every > 0 {
		s.startPurger(every)
	}
	return s, nil
}

// openRegistry opens the file and checks its format (Registry.Init). A
// file Init refuses is closed without the checkpoint Close does, so that it
// and every file beside it stay as they were. A file that might be another
// application's database is first read without touching its -shm (see
// engine.DB.Probing); where another process holds it, that cannot be done,
// and it is opened again the ordinary way.
func openRegistry(path string, cfg engine.Config, opts Options) (*engine.DB, *catalog.Registry, error) {
	for {
		db, err := engine.Open(cfg)
		if err != nil {
			return nil, nil, err
		}
		env := &family.Env{DB: db, Clock: opts.Clock, MaxValueSize: opts.MaxValueSize}
		if env.Clock == nil {
			env.Clock = ttl.SystemClock
		}
		if env.MaxValueSize == 0 {
			env.MaxValueSize = family.DefaultMaxValueSize
		}
		env.Feeds = changelog.NewFeeds(func() int64 { return expiry.NowMs(env.Clock) })
		env.Feeds.Seal = env.Seal.Load // a feed's kept values are sealed as the rows' are
		env.Feeds.Followed = env.Followed
		reg := catalog.NewRegistry(env)
		err = reg.Init(context.Background(), opts.Adopt)
		if err == nil {
			return db, reg, nil
		}
		probing := db.Probing()
		_ = db.Discard()
		if !probing || !(errors.Is(err, ErrBusy) || errors.Is(err, ErrIO)) {
			return nil, nil, fmt.Errorf("snkv: open %q: %w", path, err)
		}
		cfg.NoProbe = true
	}
}

// errNilStore is the error of a call on a nil *Store.
var errNilStore = fmt.Errorf("%w: nil store", ErrInvalidArgument)

// usable rejects a call on a nil Store, and a nil context (every method
// that takes one treats nil as an error, never as context.Background).
func (s *Store) usable(ctx context.Context) error {
	if s == nil {
		return errNilStore
	}
	return family.CheckContext(ctx)
}

// MaxValueSize returns the largest value the store accepts, in bytes
// (Options.MaxValueSize, or its default when that was 0); 0 for a nil
// Store.
func (s *Store) MaxValueSize() int {
	if s == nil {
		return 0
	}
	if s.opts.MaxValueSize == 0 {
		return family.DefaultMaxValueSize
	}
	return s.opts.MaxValueSize
}

// Path returns the path the store was opened with ("" for in-memory).
func (s *Store) Path() string {
	if s == nil {
		return ""
	}
	return s.path
}

// FileMode returns the permission bits the store gives the files it
// creates (Options.FileMode, or DefaultFileMode when that was 0); 0 for a
// nil Store. Layers above use it for their own files beside the store
// (the time series' lock files).
func (s *Store) FileMode() os.FileMode {
	if s == nil {
		return 0
	}
	if s.opts.FileMode == 0 {
		return DefaultFileMode
	}
	return s.opts.FileMode
}

// Default returns the handle of the default column family (nil for a nil
// Store; every call on that nil handle fails with ErrInvalidArgument).
func (s *Store) Default() *ColumnFamily { return s.handle() }

// Close stops the background purge, waits for a running write transaction
// to end, and closes the store. Cursors still open keep their connection
// until they are closed. Calls after Close fail with ErrClosed; a second
// Close returns ErrClosed.
func (s *Store) Close() error {
	if s == nil {
		return errNilStore
	}
	if s.stopPurge != nil && !s.db.Closed() {
		s.stopPurge()
		s.purgeWG.Wait()
	}
	err := s.db.Close()
	if err == nil {
		s.closeSeal()
	}
	return err
}

// CreateColumnFamily creates the column family name and returns its handle.
// It fails with ErrExists if it exists (names compare without regard to
// ASCII case, as SQLite's table names do), ErrInvalidName or
// ErrReservedName for a bad name.
func (s *Store) CreateColumnFamily(name string) (*ColumnFamily, error) {
	if s == nil {
		return nil, errNilStore
	}
	return handle2(s.reg.Create(context.Background(), name))
}

// OpenColumnFamily returns the handle of an existing column family, or
// ErrNotFound.
func (s *Store) OpenColumnFamily(name string) (*ColumnFamily, error) {
	if s == nil {
		return nil, errNilStore
	}
	return handle2(s.reg.Open(context.Background(), name))
}

// ColumnFamilyOrCreate opens the column family name, creating it if it does
// not exist. A concurrent CreateColumnFamily or DropColumnFamily of the same
// name never makes it fail: when the column family is missing, the look-up
// and the creation run in one write transaction. Like any handle, the one it
// returns reports ErrNotFound once its column family is dropped. On a
// read-only store a missing column family gives ErrReadOnly.
func (s *Store) ColumnFamilyOrCreate(name string) (*ColumnFamily, error) {
	if s == nil {
		return nil, errNilStore
	}
	return handle2(s.reg.OpenOrCreate(context.Background(), name))
}

// DropColumnFamily deletes a column family with all its keys and TTL state.
// The default column family cannot be dropped (ErrDropDefault); a missing
// one gives ErrNotFound. Existing handles to it fail with ErrNotFound.
func (s *Store) DropColumnFamily(name string) error {
	if s == nil {
		return errNilStore
	}
	return s.reg.Drop(context.Background(), name)
}

// ListColumnFamilies returns the names of all column families, default
// included, sorted bytewise. Hidden tables and tables other tools keep in
// the file are never listed.
func (s *Store) ListColumnFamilies() ([]string, error) {
	if s == nil {
		return nil, errNilStore
	}
	return s.reg.List(context.Background())
}

// PurgeExpiredAll runs PurgeExpired on every column family and returns the
// total removed.
func (s *Store) PurgeExpiredAll(ctx context.Context) (int, error) {
	if err := s.usable(ctx); err != nil {
		return 0, err
	}
	cfs, err := s.purgeAllList()
	if err != nil {
		return 0, err
	}
	total := 0
	for _, cf := range cfs {
		n, err := cf.PurgeExpired(ctx)
		total += n
		if err != nil && !errors.Is(err, ErrNotFound) {
			return total, err
		}
	}
	return total, nil
}

// purgeList is the column families one PurgeExpiredAll listed, with the
// commit mark read before it listed them.
type purgeList struct {
	mark engine.CommitMark
	cfs  []*ColumnFamily
}

// purgeAllList returns a handle to every column family. While nothing has
// committed since the last call listed them (the commit mark, which every
// commit of any process changes, is the same), it returns the same
// handles without reading the catalog, so that an idle background purge
// costs a look at each column family's horizon and nothing more.
func (s *Store) purgeAllList() ([]*ColumnFamily, error) {
	if pl := s.purgeList.Load(); pl != nil {
		if m, ok := s.db.CommitMark(); ok && m == pl.mark {
			return pl.cfs, nil
		}
	}
	mark, marked := s.db.CommitMark()
	names, err := s.ListColumnFamilies()
	if err != nil {
		return nil, err
	}
	cfs := make([]*ColumnFamily, 0, len(names))
	for _, name := range names {
		cf, err := s.OpenColumnFamily(name)
		if errors.Is(err, ErrNotFound) {
			continue // dropped meanwhile
		}
		if err != nil {
			return nil, err
		}
		cfs = append(cfs, cf)
	}
	if marked {
		s.purgeList.Store(&purgeList{mark: mark, cfs: cfs})
	}
	return cfs, nil
}

func (s *Store) startPurger(every time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	s.stopPurge, s.purgeEvery = cancel, every
	s.purgeWG.Add(1)
	go func() {
		defer s.purgeWG.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := s.PurgeExpiredAll(ctx); err != nil && ctx.Err() == nil && s.opts.OnPurgeError != nil {
					s.opts.OnPurgeError(err)
				}
			}
		}
	}()
}
