package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/snkv-go/snkv/kvstore"
)

// notFound is an error with its own message that counts as
// kvstore.ErrNotFound (exit code 3).
type notFound struct{ msg string }

func (e notFound) Error() string        { return e.msg }
func (e notFound) Is(target error) bool { return target == kvstore.ErrNotFound }

// withStore opens the store at path (read-only unless write), runs fn and
// closes the store, reporting an error of closing it when fn succeeded.
func (a *app) withStore(path string, write bool, fn func(db *kvstore.Store) error) (err error) {
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

// readError turns an error met while reading column family cf (a scan, a
// count) into what it means. Such a read cannot miss a key, so ErrNotFound
// there means a table or view of cf is gone: cf was dropped meanwhile, or,
// if the catalog still lists it, its hidden objects are damaged (exit code
// 4, with what to run).
func readError(db *kvstore.Store, cf string, err error) error {
	if err == nil || !errors.Is(err, kvstore.ErrNotFound) || errors.Is(err, kvstore.ErrCorrupt) {
		return err
	}
	if _, oerr := db.OpenColumnFamily(cf); oerr != nil {
		return err // dropped meanwhile: the library's own message says so
	}
	return damagedError{err: fmt.Errorf("column family %q is listed in the catalog but cannot be read: %s", cf, stripPrefixes(err.Error()))}
}

// columnFamily returns the handle of the column family named by --cf.
func (a *app) columnFamily(db *kvstore.Store) (*kvstore.ColumnFamily, error) {
	return openCF(db, a.cf)
}

// withCF is withStore for a command that works on the column family of
// --cf: it opens the store and the column family, then runs fn.
func (a *app) withCF(path string, write bool, fn func(db *kvstore.Store, cf *kvstore.ColumnFamily) error) error {
	return a.withStore(path, write, func(db *kvstore.Store) error {
		cf, err := a.columnFamily(db)
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

// keyError turns the library's ErrNotFound for a key into a message that
// names the key and the column family; other errors pass unchanged.
func keyError(cf *kvstore.ColumnFamily, key []byte, err error) error {
	if errors.Is(err, kvstore.ErrNotFound) {
		return notFound{fmt.Sprintf("key %q not found in column family %q", showText(key), cf.Name())}
	}
	if errors.Is(err, kvstore.ErrInvalidKey) || errors.Is(err, kvstore.ErrKeyTooLarge) || errors.Is(err, kvstore.ErrInvalidTTL) {
		return usageError{err}
	}
	return err
}

// parseDuration reads a TTL: a Go duration ("90s", "1h30m") or a number
// of days ("7d").
func parseDuration(s string) (time.Duration, error) {
	orig := s
	var days time.Duration
	if ds, rest, ok := strings.Cut(s, "d"); ok {
		n, err := strconv.ParseFloat(ds, 64)
		if err != nil || n <= 0 || n >= 100000 {
			return 0, usagef("bad duration %q: want for example 90s, 30m, 2h45m, 7d or 1d12h", orig)
		}
		days = time.Duration(n * float64(24*time.Hour))
		if rest == "" {
			return days, nil
		}
		s = rest
	}
	d, err := time.ParseDuration(s)
	if err != nil || (days > 0 && d < 0) {
		return 0, usagef("bad duration %q: want for example 90s, 30m, 2h45m, 7d or 1d12h", orig)
	}
	if d += days; d <= 0 {
		return 0, usagef("bad duration %q: a TTL must be positive", orig)
	}
	return d, nil
}

// parseExpireAt reads an absolute expiry time in RFC 3339.
func parseExpireAt(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, usagef("bad --expire-at %q: want RFC 3339, for example 2030-01-02T15:04:05Z", s)
	}
	return t, nil
}

// expiry is when a command should make a key expire: after a TTL or at an
// instant (neither: no expiry).
type expiry struct {
	ttl time.Duration
	at  time.Time
}

// expiryFlags reads --ttl and --expire-at (at most one of them). An
// --expire-at that is not after the command's clock is a usage error: the
// key would be gone at once.
func (a *app) expiryFlags(ttlFlag, atFlag string) (expiry, error) {
	var e expiry
	var err error
	switch {
	case ttlFlag != "" && atFlag != "":
		return e, usagef("--ttl and --expire-at exclude each other")
	case ttlFlag != "":
		e.ttl, err = parseDuration(ttlFlag)
	case atFlag != "":
		e.at, err = parseExpireAt(atFlag)
		if err == nil && !e.at.After(a.clock.Now()) {
			err = usagef("--expire-at %s is not in the future (now is %s): the key would expire at once; 'snkv del' deletes a key", atFlag, a.clock.Now().UTC().Format(time.RFC3339))
		}
	}
	return e, err
}

func (e expiry) none() bool { return e.ttl == 0 && e.at.IsZero() }

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
