package changefeed

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/snkv-go/snkv/internal/changelog"
	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
)

// Errors. ErrNotFound, ErrClosed and ErrInvalidArgument are kvstore's.
var (
	// ErrCompacted is matched by a *CompactedError: the position is older
	// than the oldest change the store still holds.
	ErrCompacted = changelog.ErrCompacted
	// ErrEpoch reports a position taken in another history of the store
	// (before a restore from a backup or a reset of the feed).
	ErrEpoch = changelog.ErrEpoch
	// ErrNotFound: a column family, consumer or feed that does not exist.
	ErrNotFound = kvstore.ErrNotFound
	// ErrInvalidArgument: a nil store, transaction or context, a bad name.
	ErrInvalidArgument = kvstore.ErrInvalidArgument
	// ErrClosed: the store is closed.
	ErrClosed = kvstore.ErrClosed
)

// CompactedError is the error of a read from a trimmed position (it
// matches ErrCompacted): Oldest is the oldest sequence the store still
// holds, where a consumer that accepts the gap starts again (or from a
// Snapshot).
type CompactedError struct {
	From, Oldest int64
}

func (e *CompactedError) Error() string {
	return fmt.Sprintf("changefeed: position %d is older than the oldest change held, %d", e.From, e.Oldest)
}

// Is makes a *CompactedError match ErrCompacted.
func (e *CompactedError) Is(target error) bool { return target == ErrCompacted }

// Op is the kind of a change. Its String is the name the CLI's JSON lines
// use.
type Op int

// The kinds of change (their numbers are the file's, docs/format.md).
const (
	OpPut         = Op(changelog.OpPut)         // "put": Key, Value (nil unless the feed keeps values), Expiry if it has a TTL
	OpDelete      = Op(changelog.OpDelete)      // "delete": Key
	OpDeleteRange = Op(changelog.OpDeleteRange) // "delete_range": Key is the start, Value the end (exclusive; nil: no end)
	OpSetTTL      = Op(changelog.OpSetTTL)      // "set_ttl": Key, Expiry
	OpClearTTL    = Op(changelog.OpClearTTL)    // "clear_ttl": Key
	OpExpired     = Op(changelog.OpExpired)     // "expired": Key, Expiry (its deadline); At is when it was removed
	OpCreateCF    = Op(changelog.OpCreateCF)    // "create_cf": no key
	OpDropCF      = Op(changelog.OpDropCF)      // "drop_cf": no key
)

// String names the op: "put", "delete", "delete_range", "set_ttl",
// "clear_ttl", "expired", "create_cf", "drop_cf".
func (o Op) String() string { return changelog.Op(o).String() }

// Change is one committed change. The caller owns the Key and Value a
// Reader returns: no other reader and no later call shares or writes them.
type Change struct {
	Seq    int64     // its position in the feed, from 1, in commit order, no gap
	Tx     int64     // its transaction's id: the Seq of the transaction's first change
	At     time.Time // when its transaction recorded its first change (the store's clock)
	CF     string    // the column family
	Op     Op
	Key    []byte
	Value  []byte
	Expiry time.Time // the deadline of a put with TTL, set_ttl or expired; zero otherwise
}

// toChange sets ch to c, whose time is at (c.AtMs as a time.Time), every
// field written.
func toChange(c *changelog.Change, at time.Time, ch *Change) {
	ch.Seq, ch.Tx, ch.At, ch.CF, ch.Op, ch.Key, ch.Value = c.Seq, c.Tx, at, c.CF, Op(c.Op), c.Key, c.Value
	ch.Expiry = time.Time{}
	if c.ExpiryMs != changelog.NoExpiry {
		ch.Expiry = time.UnixMilli(c.ExpiryMs)
	}
}

// Position is a place in a store's feed: the next sequence to read, in the
// history named by Epoch. The zero Position reads from the oldest change
// held, in whatever history the store has.
type Position struct {
	Epoch []byte
	Seq   int64
}

// Options configure a column family's feed. The zero value keeps no values
// and the whole history.
type Options struct {
	// KeepValues records a put's value with its change; without it a
	// consumer reads the current value from the store. In an encrypted
	// store each kept value is sealed as the store seals a row's value,
	// bound to the column family and the key, and a Reader opens it.
	KeepValues bool
	// MaxCount, MaxAge and MaxBytes are the retention Trim applies: keep
	// at most MaxCount of the latest changes, the changes younger than
	// MaxAge, and the latest changes whose approximate sizes add up to at
	// most MaxBytes (a change counts its key, its value and 48 bytes for
	// the rest of its row). Zero: no limit on that count.
	MaxCount int64
	MaxAge   time.Duration
	MaxBytes int64
}

// Filter selects changes. The zero Filter selects every change.
type Filter struct {
	CF     string // "": every column family
	Prefix []byte // only keys with this prefix; column family events pass only without one
}

func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var ce *changelog.CompactedError
	if errors.As(err, &ce) {
		return &CompactedError{From: ce.From, Oldest: ce.Oldest}
	}
	return fmt.Errorf("changefeed: %s: %w", op, err)
}

func checkCtx(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	return nil
}

// Enable turns on the feed of column family cf (it must exist), or changes
// its options, and makes every writer of the store, in this process or
// another, record cf's changes from its next transaction. It creates the
// feed's hidden tables on first use.
func Enable(ctx context.Context, store *kvstore.Store, cf string, opts Options) error {
	if err := checkCtx(ctx); err != nil {
		return wrap("enable", err)
	}
	if opts.MaxCount < 0 || opts.MaxAge < 0 || opts.MaxBytes < 0 {
		return wrap("enable", fmt.Errorf("%w: negative retention", kvstore.ErrInvalidOption))
	}
	_, fs, err := layer.Engine(ctx, store)
	if err != nil {
		return wrap("enable", err)
	}
	h, err := store.OpenColumnFamily(cf)
	if err != nil {
		return wrap("enable", err)
	}
	err = store.Update(ctx, func(tx *kvstore.Tx) error {
		etx, err := layer.EngineTx(tx)
		if err != nil {
			return err
		}
		conf := changelog.Config{CF: h.Name(), KeepValues: opts.KeepValues,
			Retention: changelog.Retention{MaxCount: opts.MaxCount, MaxAgeMs: opts.MaxAge.Milliseconds(), MaxBytes: opts.MaxBytes}}
		return fs.SetFeed(tx.Context(), etx, conf, layer.NowMs(store))
	})
	return wrap("enable "+cf, err)
}

// Disable turns off the feed of cf; the history already recorded stays
// until it is trimmed. It fails with ErrNotFound if cf has no feed.
func Disable(ctx context.Context, store *kvstore.Store, cf string) error {
	if err := checkCtx(ctx); err != nil {
		return wrap("disable", err)
	}
	_, fs, err := layer.Engine(ctx, store)
	if err != nil {
		return wrap("disable", err)
	}
	name := cf
	if h, err := store.OpenColumnFamily(cf); err == nil {
		name = h.Name()
	}
	err = store.Update(ctx, func(tx *kvstore.Tx) error {
		etx, err := layer.EngineTx(tx)
		if err != nil {
			return err
		}
		on, err := fs.DeleteFeed(tx.Context(), etx, name)
		if err == nil && !on {
			err = ErrNotFound
		}
		return err
	})
	return wrap("disable "+cf, err)
}

// Feeds returns the column families whose feed is on, with their options.
func Feeds(ctx context.Context, store *kvstore.Store) (map[string]Options, error) {
	out := map[string]Options{}
	err := read(ctx, store, func(c *engine.Conn) error {
		all, err := changelog.ListFeeds(ctx, c)
		for _, f := range all {
			out[f.CF] = Options{KeepValues: f.KeepValues, MaxCount: f.Retention.MaxCount, MaxAge: time.Duration(f.Retention.MaxAgeMs) * time.Millisecond, MaxBytes: f.Retention.MaxBytes}
		}
		return err
	})
	if err != nil {
		return nil, wrap("feeds", err)
	}
	return out, nil
}

// Now returns the position after the last committed change: a Reader from
// it sees only what commits later.
func Now(ctx context.Context, store *kvstore.Store) (Position, error) {
	var p changelog.Position
	err := read(ctx, store, func(c *engine.Conn) error {
		var err error
		p, err = snapshotPosition(ctx, c)
		return err
	})
	return Position(p), wrap("now", err)
}

// read runs fn in a read transaction of store, once ctx and store are
// checked: the reads of Feeds, Now, Load and Consumers.
func read(ctx context.Context, store *kvstore.Store, fn func(c *engine.Conn) error) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	db, _, err := layer.Engine(ctx, store)
	if err != nil {
		return err
	}
	return db.WithReader(ctx, fn)
}

// snapshotPosition is changelog.SnapshotPosition, with a store that has no
// feed yet at sequence 1 of no epoch.
func snapshotPosition(ctx context.Context, c *engine.Conn) (changelog.Position, error) {
	p, err := changelog.SnapshotPosition(ctx, c)
	if errors.Is(err, engine.ErrNotFound) || engine.NoSuchTable(err) {
		return changelog.Position{Seq: 1}, nil
	}
	return p, err
}

// Snapshot calls fn with every live row of cf under prefix, read in one
// read transaction, and returns the position the changes after that
// snapshot start from: no change is in both, and none is in neither.
func Snapshot(ctx context.Context, store *kvstore.Store, cf string, prefix []byte, fn func(key, value []byte) error) (Position, error) {
	if err := checkCtx(ctx); err != nil {
		return Position{}, wrap("snapshot", err)
	}
	if fn == nil {
		return Position{}, wrap("snapshot", fmt.Errorf("%w: nil callback", ErrInvalidArgument))
	}
	h, err := store.OpenColumnFamily(cf)
	if err != nil {
		return Position{}, wrap("snapshot", err)
	}
	var p changelog.Position
	err = store.View(ctx, func(tx *kvstore.Tx) error {
		etx, err := layer.EngineTx(tx)
		if err != nil {
			return err
		}
		if p, err = snapshotPosition(ctx, etx.Conn()); err != nil {
			return err
		}
		for e, err := range tx.CF(h).Prefix(prefix) {
			if err != nil {
				return err
			}
			if err := fn(e.Key, e.Value); err != nil {
				return err
			}
		}
		return nil
	})
	return Position(p), wrap("snapshot "+cf, err)
}
