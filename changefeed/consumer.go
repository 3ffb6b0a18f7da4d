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

// Consumer is a named consumer's saved position.
type Consumer struct {
	Name    string
	Pos     Position
	Updated time.Time // when it was last committed, by the store's clock
}

func checkName(name string) error {
	if name == "" || len(name) > 255 {
		return fmt.Errorf("%w: consumer name of %d bytes (1 to 255)", kvstore.ErrInvalidName, len(name))
	}
	return nil
}

// Commit saves consumer name's position inside tx, the consumer's own
// write transaction: what it wrote to the store for the changes before pos
// and pos itself commit together, or neither does, so a consumer that
// crashes resumes exactly after what it applied. A position of another
// history of the store fails with ErrEpoch.
func Commit(tx *kvstore.Tx, name string, pos Position) error {
	if err := checkName(name); err != nil {
		return wrap("commit", err)
	}
	etx, err := layer.EngineTx(tx)
	if err != nil {
		return wrap("commit", err)
	}
	if !etx.Writable() {
		return wrap("commit", kvstore.ErrReadOnlyTx)
	}
	ctx, c := tx.Context(), etx.Conn()
	if err := changelog.EnsureConsumers(ctx, c); err != nil {
		return wrap("commit "+name, err)
	}
	now := layer.NowMs(layer.TxStore(tx)) // the store's clock, as the changes' times
	return wrap("commit "+name, changelog.SaveConsumer(ctx, c, name, changelog.Position(pos), now))
}

// Load returns consumer name's saved position; ErrNotFound if it has none.
func Load(ctx context.Context, store *kvstore.Store, name string) (Position, error) {
	if err := checkName(name); err != nil {
		return Position{}, wrap("load", err)
	}
	var co changelog.Consumer
	err := read(ctx, store, func(c *engine.Conn) error {
		var err error
		co, err = changelog.LoadConsumer(ctx, c, name)
		if engine.NoSuchTable(err) {
			err = ErrNotFound
		}
		return err
	})
	if err != nil {
		return Position{}, fmt.Errorf("changefeed: load %q: %w", name, err)
	}
	return Position(co.Pos), nil
}

// Consumers returns every named consumer, by name.
func Consumers(ctx context.Context, store *kvstore.Store) ([]Consumer, error) {
	var out []Consumer
	err := read(ctx, store, func(c *engine.Conn) error {
		all, err := changelog.ListConsumers(ctx, c)
		if engine.NoSuchTable(err) {
			return nil
		}
		for _, co := range all {
			out = append(out, Consumer{Name: co.Name, Pos: Position(co.Pos), Updated: time.UnixMilli(co.UpdatedMs)})
		}
		return err
	})
	return out, wrap("consumers", err)
}

// Reset forgets consumer name: it starts again from wherever its
// application says. ErrNotFound if it has no saved position.
func Reset(ctx context.Context, store *kvstore.Store, name string) error {
	if err := checkCtx(ctx); err != nil {
		return wrap("reset", err)
	}
	if err := checkName(name); err != nil {
		return wrap("reset", err)
	}
	err := store.Update(ctx, func(tx *kvstore.Tx) error {
		etx, err := layer.EngineTx(tx)
		if err != nil {
			return err
		}
		ok, err := changelog.DeleteConsumer(tx.Context(), etx.Conn(), name)
		if engine.NoSuchTable(err) || err == nil && !ok {
			return ErrNotFound
		}
		return err
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return wrap("reset "+name, err)
	}
	return wrap("reset "+name, err)
}

// Trim applies every feed's retention (Options.MaxCount, MaxAge, MaxBytes) in
// transactions of at most step changes (0: 1,024), never past a named
// consumer's position unless force, and reports how many changes it
// deleted. The last change is always kept.
func Trim(ctx context.Context, store *kvstore.Store, step int, force bool) (int64, error) {
	if err := checkCtx(ctx); err != nil {
		return 0, wrap("trim", err)
	}
	if step < 0 {
		return 0, wrap("trim", fmt.Errorf("%w: negative step", ErrInvalidArgument))
	}
	if step == 0 {
		step = 1024
	}
	feeds, err := Feeds(ctx, store)
	if err != nil {
		return 0, err
	}
	// The log is one history for every feed: it keeps what the most
	// generous feed keeps.
	var r changelog.Retention
	for i, o := range valuesOf(feeds) {
		if i == 0 || o.MaxCount == 0 || r.MaxCount != 0 && o.MaxCount > r.MaxCount {
			r.MaxCount = o.MaxCount
		}
		age := o.MaxAge.Milliseconds()
		if i == 0 || age == 0 || r.MaxAgeMs != 0 && age > r.MaxAgeMs {
			r.MaxAgeMs = age
		}
		if i == 0 || o.MaxBytes == 0 || r.MaxBytes != 0 && o.MaxBytes > r.MaxBytes {
			r.MaxBytes = o.MaxBytes
		}
	}
	if r.MaxCount == 0 && r.MaxAgeMs == 0 && r.MaxBytes == 0 {
		return 0, nil
	}
	r.Force = force
	var total int64
	for {
		var n int64
		err := store.Update(ctx, func(tx *kvstore.Tx) error {
			etx, err := layer.EngineTx(tx)
			if err != nil {
				return err
			}
			n, err = changelog.RetainStep(tx.Context(), etx.Conn(), r, layer.NowMs(store), step)
			return err
		})
		total += n
		if err != nil {
			return total, wrap("trim", err)
		}
		if n < int64(step) {
			return total, nil
		}
	}
}

func valuesOf(m map[string]Options) []Options {
	out := make([]Options, 0, len(m))
	for _, o := range m {
		out = append(out, o)
	}
	return out
}
