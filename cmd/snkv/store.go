package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
)

// withStore opens the store at path (read-only unless write), runs fn and
// closes the store, reporting an error of closing it when fn succeeded.
func (a *app) withStore(path string, write bool, fn func(db *kvstore.Store) error) (err error) {
	if a.session != nil {
		// In the shell: the store it opened, which stays open.
		a.storePath = a.sessionPath
		if write && a.session.ReadOnly() {
			return fmt.Errorf("%s: the shell opened the store read-only (the file is not writable): write commands cannot run", a.sessionPath)
		}
		return fn(a.session)
	}
	db, err := a.open(path, write)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("%s: closing the store: %w", path, cerr)
		}
		if write && errors.Is(err, kvstore.ErrReadOnly) {
			// The file is writable (open checked it): SQLite refused
			// because of a file beside it.
			if cerr := readOnlyCompanions(path); cerr != nil {
				err = cerr
			}
		}
	}()
	return fn(db)
}

// withCF is withStore for a command that works on the column family of
// --cf: it opens the store and the column family, then runs fn.
func (a *app) withCF(path string, write bool, fn func(db *kvstore.Store, cf *kvstore.ColumnFamily) error) error {
	return a.withNamedCF(path, a.cf, write, fn)
}

// withNamedCF is withCF for the column family name (an argument of the
// command, not --cf).
func (a *app) withNamedCF(path, name string, write bool, fn func(db *kvstore.Store, cf *kvstore.ColumnFamily) error) error {
	return a.withStore(path, write, func(db *kvstore.Store) error {
		cf, err := openCF(db, name)
		if err != nil {
			return err
		}
		return fn(db, cf)
	})
}

func openCF(db *kvstore.Store, name string) (*kvstore.ColumnFamily, error) {
	cf, err := db.OpenColumnFamily(name)
	if errors.Is(err, kvstore.ErrNotFound) {
		return nil, notFound{fmt.Sprintf("column family %q does not exist (see 'snkv cf list', 'snkv cf create')", name)}
	}
	if errors.Is(err, kvstore.ErrInvalidName) || errors.Is(err, kvstore.ErrReservedName) {
		return nil, usageError{fmt.Errorf("bad column family name %q: %s", name, strip(err))}
	}
	return cf, err
}

// openCounted opens the column families names and counts their keys (each
// from one snapshot), for commands that size a progress bar before work.
func openCounted(ctx context.Context, db *kvstore.Store, names []string) ([]*kvstore.ColumnFamily, []kvstore.KeyCounts, error) {
	cfs := make([]*kvstore.ColumnFamily, 0, len(names))
	counts := make([]kvstore.KeyCounts, 0, len(names))
	for _, name := range names {
		cf, err := openCF(db, name)
		if err != nil {
			return nil, nil, err
		}
		kc, err := db.CountKeys(ctx, cf.Name())
		if err != nil {
			return nil, nil, err
		}
		cfs = append(cfs, cf)
		counts = append(counts, kc)
	}
	return cfs, counts, nil
}

// onKey runs fn on the key of args[1] in the column family of --cf of the
// store args[0], opened writable when write is set: the shape of every
// single-key command.
func (a *app) onKey(args []string, write bool, fn func(cf *kvstore.ColumnFamily, key []byte) error) error {
	key, err := a.inputs().arg("KEY", args[1])
	if err != nil {
		return err
	}
	return a.withCF(args[0], write, func(db *kvstore.Store, cf *kvstore.ColumnFamily) error {
		return fn(cf, key)
	})
}
