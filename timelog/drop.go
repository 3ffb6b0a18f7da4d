package timelog

import (
	"context"
	"errors"
	"fmt"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
)

// Dropping a log: Log.Drop (announces the dropped records), Drop (a log
// not open for writing) and ForceDrop (a log too damaged to read).

// Drop deletes the log name and all its records in one transaction. It
// fails with ErrLocked if the log is open for writing (drop it through
// Log.Drop then, which also announces the dropped records), ErrNotFound if
// it does not exist. Records dropped this way are announced to nobody. It
// reads every page; a log with a damaged page fails with ErrCorrupt (see
// ForceDrop). A name no log can have fails with kvstore.ErrInvalidName, as
// in Open.
func Drop(ctx context.Context, store *kvstore.Store, name string) error {
	if err := validateName(name); err != nil {
		return err
	}
	if _, err := openTables(ctx, store, name); err != nil {
		if errors.Is(err, kvstore.ErrNotFound) {
			return fmt.Errorf("timelog: drop %q: %w: %w", name, ErrNotFound, err)
		}
		return fromStore(fmt.Errorf("timelog: drop %q: %w", name, err))
	}
	l, err := Open(ctx, store, name, Options{Maintenance: Manual})
	if err != nil {
		return err
	}
	if err := l.Drop(ctx); err != nil {
		_ = l.Close() // a failed Drop leaves the log open: let its lock go
		return err
	}
	return nil
}

// ForceDrop deletes every table of the log name (records, deletes, meta
// and values) in one transaction without reading them: for a log that Drop
// cannot drop because a page or its meta is damaged (ErrCorrupt), or that
// lost one of its tables. Nothing is announced to OnDrop, so handles held
// by the log's records are not retired. It fails with ErrLocked if the log
// is open for writing, ErrNotFound if the log has no table at all,
// kvstore.ErrInvalidName for a name no log can have.
func ForceDrop(ctx context.Context, store *kvstore.Store, name string) error {
	if err := validateName(name); err != nil {
		return err
	}
	lock, err := acquireLock(store, name)
	if err != nil {
		return err
	}
	defer lock.release()
	err = store.Update(ctx, func(tx *kvstore.Tx) error {
		dropped := 0
		for _, suffix := range []string{suffixMeta, suffixPages, suffixTombs, suffixValues} {
			err := layer.DropHiddenTable(tx, kind, name+suffix)
			switch {
			case err == nil:
				dropped++
			case !errors.Is(err, kvstore.ErrNotFound):
				return err
			}
		}
		if dropped == 0 {
			return fmt.Errorf("%w: no table of the log exists", ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return fromStore(fmt.Errorf("timelog: force drop %q: %w", name, err))
	}
	return nil
}

// Drop deletes the log with all its records, buffered ones included, in one
// transaction, then closes the log. Every record it held is announced to
// OnDrop after the commit (and released, no snapshot being open). It fails
// with ErrSnapshotsOpen while snapshots are open.
func (l *Log) Drop(ctx context.Context) error {
	l.pubMu.Lock()
	l.mu.Lock()
	if err := l.checkWrite(); err != nil {
		l.mu.Unlock()
		l.pubMu.Unlock()
		return err
	}
	if n := l.ret.openSnapshots(); n > 0 {
		l.mu.Unlock()
		l.pubMu.Unlock()
		return fmt.Errorf("timelog: drop %q: %w (%d)", l.name, ErrSnapshotsOpen, n)
	}
	l.closed = true
	l.mu.Unlock()
	l.pubMu.Unlock()
	l.maint.stop()
	reopen := func() {
		l.mu.Lock()
		l.closed = false
		l.mu.Unlock()
		if l.cfg.Maintenance == Background {
			l.maint.start()
		}
	}
	l.workMu.Lock()
	err := l.dropTx(ctx)
	l.workMu.Unlock()
	if err != nil {
		reopen()
		return fromStore(fmt.Errorf("timelog: drop %q: %w", l.name, err))
	}
	l.ret.deliver(0)
	l.lock.release()
	return nil
}

func (l *Log) dropTx(ctx context.Context) error {
	tx, err := l.store.Begin(ctx, true)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var all []rec
	for e, err := range tx.CF(l.t.pages).All() {
		if err != nil {
			return err
		}
		if all, err = decodePage(all, e.Value, -1, l.name, e.Key); err != nil {
			return err
		}
	}
	l.mu.Lock()
	for _, r := range l.sealed {
		all = append(all, r.recs...)
	}
	all = append(append(all, l.mem.recs...), l.mem.late...)
	l.mu.Unlock()
	suffixes := []string{suffixMeta, suffixPages, suffixTombs}
	if l.t.values != nil {
		suffixes = append(suffixes, suffixValues)
	}
	for _, suffix := range suffixes {
		if err := layer.DropHiddenTable(tx, kind, l.name+suffix); err != nil {
			return err
		}
	}
	tx.OnCommit(func() { l.ret.queue(all, 0) })
	l.pubMu.Lock()
	defer l.pubMu.Unlock()
	if err := tx.Commit(); err != nil {
		return err
	}
	l.mu.Lock()
	l.sealed, l.mem, l.spare = nil, newMemtable(0, arrays{}), nil
	l.mu.Unlock()
	return nil
}
