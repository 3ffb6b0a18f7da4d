package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
	"github.com/spf13/cobra"
)

func (a *app) lsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "ls FILE",
		Short: "List column families with their key counts (read-only)",
		Long: `List the column families of the store with, for each, the number of live
keys, of keys with a TTL (expired or not), and of keys that have expired but
are still stored until a purge ('snkv purge' removes them). Then the
time-series logs, if there are any, with their record counts ('snkv timelog
ls' shows more of them).

An encrypted store is listed without its password or key when none is
given (its names and counts are stored in the clear; only values are
sealed): the column families and their counts, then a note on stderr that
the time-series logs need the secret. Given the secret, ls opens the store
with it and lists everything.`,
		Example: `  snkv ls app.db
  snkv ls app.db --json`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			path := args[0]
			keyless := false
			a.onEncrypted = func() error {
				if flag, err := a.secret.given(); err != nil || flag != "" || a.secret.fromEnv() {
					return err // a secret was given: open with it
				}
				// No secret: list what is in the clear.
				keyless = true
				counts, err := kvstore.CountKeysFile(ctx, path, a.options(true))
				if err != nil {
					return err
				}
				if err := a.lsCounts(counts); err != nil {
					return err
				}
				fmt.Fprintf(a.err, "snkv: note: %s is encrypted and no password or key was given: column families and counts only (the time-series logs need the secret)\n", path)
				return errListedKeyless
			}
			err := a.withStore(path, false, func(db *kvstore.Store) error {
				names, err := db.ListColumnFamilies()
				if err != nil {
					return err
				}
				var counts []kvstore.KeyCounts
				var damaged []error
				for _, name := range names {
					kc, err := db.CountKeys(ctx, name)
					if err != nil {
						return err
					}
					if err := probe(ctx, db, name); err != nil {
						if exitCode(err) != exitDamaged {
							return err
						}
						damaged = append(damaged, err)
					}
					counts = append(counts, kc)
				}
				if err := a.lsCounts(counts); err != nil {
					return err
				}
				if err := a.lsLogs(ctx, db); err != nil {
					return err
				}
				return errors.Join(damaged...)
			})
			if keyless && errors.Is(err, errListedKeyless) {
				return nil
			}
			return err
		},
	}
}

// errListedKeyless ends the open of an encrypted store that ls listed
// without its secret.
var errListedKeyless = errors.New("listed without the secret")

// lsCounts prints the column families' counts: a table, or a JSON line
// each.
func (a *app) lsCounts(counts []kvstore.KeyCounts) error {
	if a.json {
		for _, kc := range counts {
			if err := a.emit(lsRecord{kc.Name, kc.Live, kc.Stored, kc.TTL, kc.Expired}); err != nil {
				return err
			}
		}
		return nil
	}
	t := a.table("COLUMN FAMILY", "KEYS", "TTL KEYS", "EXPIRED")
	for _, kc := range counts {
		t.row(a.showCell([]byte(kc.Name), false), itoa(kc.Live), itoa(kc.TTL), itoa(kc.Expired))
	}
	return t.flush()
}

// probe reads the first key of column family name through the path every
// read takes (its view, and its TTL tables when it has them), so that ls
// reports a column family whose counts are there but whose keys cannot be
// read, instead of showing it as healthy.
func probe(ctx context.Context, db *kvstore.Store, name string) error {
	cf, err := db.OpenColumnFamily(name)
	if err != nil {
		return err
	}
	err = db.View(ctx, func(tx *kvstore.Tx) error {
		for _, err := range tx.CF(cf).Scan(kvstore.IterOptions{}) {
			return err
		}
		return nil
	})
	return readError(db, name, err)
}

// lsRecord is one line of ls --json.
type lsRecord struct {
	CF      string `json:"cf"`
	Keys    int64  `json:"keys"`     // live keys
	Stored  int64  `json:"stored"`   // rows stored: live plus expired not yet purged
	TTLKeys int64  `json:"ttl_keys"` // keys with a TTL, expired or not
	Expired int64  `json:"expired"`  // expired, not yet purged
}

// lsLogs ends snkv ls: the time-series logs of the store with their record
// counts, as a second table after a blank line (none without logs), or as
// {"log":...,"records":N} lines after the column families' ones.
func (a *app) lsLogs(ctx context.Context, db *kvstore.Store) error {
	names, err := timelog.List(ctx, db)
	if err != nil || len(names) == 0 {
		return err
	}
	var t *table
	if !a.json {
		fmt.Fprintln(a.out)
		t = a.table("TIME-SERIES LOG", "RECORDS")
	}
	err = withEachLogIn(ctx, db, names, func(name string, l *timelog.Log, s *timelog.Snapshot) error {
		n, err := s.Count()
		if err != nil {
			return err
		}
		if a.json {
			return a.emit(map[string]any{"log": name, "records": n})
		}
		t.row(a.showCell([]byte(name), false), itoa(n))
		return nil
	})
	if err != nil || a.json {
		return err
	}
	return t.flush()
}
