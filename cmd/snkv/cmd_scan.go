package main

import (
	"context"
	"strconv"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) scanCommand() *cobra.Command {
	var (
		prefix, start, end         string
		reverse, keysOnly, withTTL bool
		limit                      int
	)
	c := &cobra.Command{
		Use:   "scan FILE",
		Short: "List keys and values in key order (read-only)",
		Long: `List the keys (and values) of the column family of --cf in key order, from
one consistent snapshot. --prefix keeps keys starting with a prefix;
--start and --end bound a half-open range [start, end); --reverse walks
backwards; --limit stops after N keys; --keys-only leaves the values out;
--with-ttl adds each key's remaining time and absolute expiry. Bounds are
decoded with --hex/--base64 like keys. Expired keys are never listed.
--json prints one object per key (the export format, plus ttl_ms).`,
		Example: `  snkv scan app.db --prefix user: --limit 20
  snkv scan app.db --cf sessions --with-ttl --json
  snkv scan app.db --start a --end m --reverse --keys-only`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 0 {
				return usagef("--limit must not be negative")
			}
			var opts kvstore.IterOptions
			var err error
			for _, b := range []struct {
				flag, val string
				dst       *[]byte
			}{{"--prefix", prefix, &opts.Prefix}, {"--start", start, &opts.Start}, {"--end", end, &opts.End}} {
				if !cmd.Flags().Changed(b.flag[2:]) {
					continue
				}
				if *b.dst, err = a.decode(b.flag, b.val); err != nil {
					return err
				}
			}
			opts.Reverse = reverse
			return a.withStore(args[0], false, func(db *kvstore.Store) error {
				cf, err := a.columnFamily(db)
				if err != nil {
					return err
				}
				return a.scan(cmd.Context(), db, cf, opts, limit, keysOnly, withTTL)
			})
		},
	}
	f := c.Flags()
	f.StringVar(&prefix, "prefix", "", "only keys starting with `PREFIX`")
	f.StringVar(&start, "start", "", "first `KEY` of the range (inclusive)")
	f.StringVar(&end, "end", "", "end `KEY` of the range (exclusive)")
	f.BoolVar(&reverse, "reverse", false, "descending key order")
	f.IntVar(&limit, "limit", 0, "stop after `N` keys (0: no limit)")
	f.BoolVar(&keysOnly, "keys-only", false, "list keys without values")
	f.BoolVar(&withTTL, "with-ttl", false, "show each key's remaining time and expiry")
	return c
}

func (a *app) scan(ctx context.Context, db *kvstore.Store, cf *kvstore.ColumnFamily, opts kvstore.IterOptions, limit int, keysOnly, withTTL bool) error {
	var t *table
	if !a.json {
		headers := []string{"KEY"}
		if !keysOnly {
			headers = append(headers, "VALUE")
		}
		if withTTL {
			headers = append(headers, "TTL", "EXPIRES")
		}
		t = a.table(headers...)
	}
	n := 0
	err := db.View(ctx, func(tx *kvstore.Tx) error {
		h := tx.CF(cf)
		ttlOn := withTTL && cf.HasTTL()
		for e, err := range h.Scan(opts) {
			if err != nil {
				return err
			}
			d := kvstore.NoTTL
			if ttlOn {
				if d, err = h.TTL(e.Key); err != nil {
					return err
				}
			}
			if a.json {
				value := e.Value
				if keysOnly {
					value = nil
				}
				r := newRecord(cf.Name(), e.Key, value)
				if withTTL {
					a.setTTL(&r, d)
				}
				if err := a.emit(r); err != nil {
					return err
				}
			} else {
				row := []string{escape(e.Key)}
				if !keysOnly {
					row = append(row, escape(e.Value))
				}
				if withTTL {
					if d == kvstore.NoTTL {
						row = append(row, "permanent", "-")
					} else {
						row = append(row, d.String(), formatExpiry(a.nowMs()+d.Milliseconds()))
					}
				}
				t.row(row...)
			}
			n++
			if limit > 0 && n >= limit {
				break
			}
		}
		return nil
	})
	if t != nil {
		if ferr := t.flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (a *app) lsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "ls FILE",
		Short: "List column families with their key counts (read-only)",
		Long: `List the column families of the store with, for each, the number of live
keys, of keys with a TTL (expired or not), and of keys that have expired but
are still stored until a purge ('snkv purge' removes them). Then the
time-series logs, if there are any, with their record counts ('snkv timelog
ls' shows more of them).`,
		Example: `  snkv ls app.db
  snkv ls app.db --json`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(args[0], false, func(db *kvstore.Store) error {
				names, err := db.ListColumnFamilies()
				if err != nil {
					return err
				}
				t := a.table("COLUMN FAMILY", "KEYS", "TTL KEYS", "EXPIRED")
				for _, name := range names {
					kc, err := db.CountKeys(cmd.Context(), name)
					if err != nil {
						return err
					}
					if a.json {
						if err := a.emit(lsRecord{kc.Name, kc.Live, kc.Stored, kc.TTL, kc.Expired}); err != nil {
							return err
						}
						continue
					}
					t.row(escape([]byte(kc.Name)), itoa(kc.Live), itoa(kc.TTL), itoa(kc.Expired))
				}
				if !a.json {
					if err := t.flush(); err != nil {
						return err
					}
				}
				return a.lsLogs(cmd.Context(), db)
			})
		},
	}
}

// lsRecord is one line of ls --json.
type lsRecord struct {
	CF      string `json:"cf"`
	Keys    int64  `json:"keys"`     // live keys
	Stored  int64  `json:"stored"`   // rows stored: live plus expired not yet purged
	TTLKeys int64  `json:"ttl_keys"` // keys with a TTL, expired or not
	Expired int64  `json:"expired"`  // expired, not yet purged
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
