package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

// keyRange holds the flags that select keys: --prefix, --start, --end and
// --match (scan, count and export share them).
type keyRange struct {
	prefix, start, end, match string
}

// add declares the flags on c.
func (r *keyRange) add(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&r.prefix, "prefix", "", "only keys starting with `PREFIX`")
	f.StringVar(&r.start, "start", "", "first `KEY` of the range (inclusive)")
	f.StringVar(&r.end, "end", "", "end `KEY` of the range (exclusive)")
	f.StringVar(&r.match, "match", "", "only keys matching the glob `PATTERN` (* ? [a-z] [^a] \\x)")
}

// keySel is a decoded keyRange: the iteration bounds, and the pattern
// every key must match (nil: all).
type keySel struct {
	opts    kvstore.IterOptions
	pattern []byte
}

// any reports whether the selection narrows the keys at all.
func (s keySel) any() bool {
	return s.opts.Prefix != nil || s.opts.Start != nil || s.opts.End != nil || s.pattern != nil
}

// keeps reports whether key passes the pattern.
func (s keySel) keeps(key []byte) bool { return s.pattern == nil || matchGlob(s.pattern, key) }

// selection decodes the flags given on cmd (bounds with --hex/--base64
// like keys; the pattern is always text). The pattern's literal start
// narrows the scan when it extends the prefix.
func (a *app) selection(cmd *cobra.Command, r keyRange) (keySel, error) {
	var sel keySel
	for _, b := range []struct {
		flag, val string
		dst       *[]byte
	}{{"--prefix", r.prefix, &sel.opts.Prefix}, {"--start", r.start, &sel.opts.Start}, {"--end", r.end, &sel.opts.End}} {
		if !cmd.Flags().Changed(b.flag[2:]) {
			continue
		}
		v, err := a.decode(b.flag, b.val)
		if err != nil {
			return sel, err
		}
		*b.dst = v
		if v == nil {
			*b.dst = []byte{}
		}
	}
	if len(sel.opts.Prefix) == 0 {
		sel.opts.Prefix = nil
	}
	if cmd.Flags().Changed("match") {
		sel.pattern = []byte(r.match)
		if lit := globPrefix(sel.pattern); len(lit) > len(sel.opts.Prefix) && bytes.HasPrefix(lit, sel.opts.Prefix) {
			sel.opts.Prefix = lit
		}
	}
	return sel, nil
}

func (a *app) scanCommand() *cobra.Command {
	var (
		sel                        keyRange
		reverse, keysOnly, withTTL bool
		limit                      int
	)
	c := &cobra.Command{
		Use:   "scan FILE",
		Short: "List keys and values in key order (read-only)",
		Long: `List the keys (and values) of the column family of --cf in key order, from
one consistent snapshot. --prefix keeps keys starting with a prefix;
--start and --end bound a half-open range [start, end); --match keeps keys
matching a glob pattern (* any characters, ? one, [a-z] [^a] a class, \x a
literal x), as redis' SCAN MATCH does; --reverse walks backwards; --limit
stops after N keys; --keys-only leaves the values out; --with-ttl adds each
key's remaining time and absolute expiry. Bounds are decoded with
--hex/--base64 like keys; a pattern is always text. Expired keys are never
listed. --json prints one object per key (the export format, plus ttl_ms).
Output streams: memory stays bounded however many keys are listed.`,
		Example: `  snkv scan app.db --prefix user: --limit 20
  snkv scan app.db --match 'user:*:email'
  snkv scan app.db --cf sessions --with-ttl --json
  snkv scan app.db --start a --end m --reverse --keys-only`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 0 {
				return usagef("--limit must not be negative")
			}
			ks, err := a.selection(cmd, sel)
			if err != nil {
				return err
			}
			ks.opts.Reverse = reverse
			return a.withCF(args[0], false, func(db *kvstore.Store, cf *kvstore.ColumnFamily) error {
				return readError(db, cf.Name(), a.scan(cmd.Context(), db, cf, ks, limit, keysOnly, withTTL))
			})
		},
	}
	sel.add(c)
	f := c.Flags()
	f.BoolVar(&reverse, "reverse", false, "descending key order")
	f.IntVar(&limit, "limit", 0, "stop after `N` keys (0: no limit)")
	f.BoolVar(&keysOnly, "keys-only", false, "list keys without values")
	f.BoolVar(&withTTL, "with-ttl", false, "show each key's remaining time and expiry")
	return c
}

func (a *app) scan(ctx context.Context, db *kvstore.Store, cf *kvstore.ColumnFamily, sel keySel, limit int, keysOnly, withTTL bool) error {
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
		for e, err := range h.Scan(sel.opts) {
			if err != nil {
				return err
			}
			if !sel.keeps(e.Key) {
				continue
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
				row := []string{a.show(e.Key)}
				if !keysOnly {
					row = append(row, a.show(e.Value))
				}
				if withTTL {
					if d == kvstore.NoTTL {
						row = append(row, "permanent", "-")
					} else {
						row = append(row, formatTTL(d, false), formatExpiry(a.nowMs()+d.Milliseconds()))
					}
				}
				t.row(row...)
				if t.err != nil {
					return t.err
				}
			}
			n++
			if limit > 0 && n >= limit {
				break
			}
			if n%ctxCheckEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if t != nil {
		if ferr := t.flush(); err == nil {
			err = ferr
		}
	}
	if interrupted(ctx, err) {
		return interruptedf("interrupted after listing %d keys", n)
	}
	return err
}

func (a *app) countCommand() *cobra.Command {
	var sel keyRange
	c := &cobra.Command{
		Use:   "count FILE",
		Short: "Count the live keys, all or those selected (read-only)",
		Long: `Print the number of live keys of the column family of --cf: all of them,
or those selected by --prefix, --start/--end and --match (as scan selects
them). Without a selection the count comes from the store's counters;
with one, the keys are read (not their values) from one snapshot.`,
		Example: `  snkv count app.db
  snkv count app.db --prefix user:
  snkv count app.db --cf sessions --match 'tok-*' --json`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ks, err := a.selection(cmd, sel)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			return a.withCF(args[0], false, func(db *kvstore.Store, cf *kvstore.ColumnFamily) error {
				var n int64
				if !ks.any() {
					kc, err := db.CountKeys(ctx, cf.Name())
					if err != nil {
						return err
					}
					n = kc.Live
				} else {
					ks.opts.Borrow = true
					err = db.View(ctx, func(tx *kvstore.Tx) error {
						for e, err := range tx.CF(cf).Scan(ks.opts) {
							if err != nil {
								return err
							}
							if ks.keeps(e.Key) {
								n++
							}
							if n%ctxCheckEvery == 0 {
								if err := ctx.Err(); err != nil {
									return err
								}
							}
						}
						return nil
					})
					if err = readError(db, cf.Name(), err); err != nil {
						return err
					}
				}
				if a.json {
					return a.emit(map[string]any{"cf": cf.Name(), "keys": n})
				}
				_, err = fmt.Fprintln(a.out, n)
				return err
			})
		},
	}
	sel.add(c)
	return c
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
			ctx := cmd.Context()
			return a.withStore(args[0], false, func(db *kvstore.Store) error {
				names, err := db.ListColumnFamilies()
				if err != nil {
					return err
				}
				t := a.table("COLUMN FAMILY", "KEYS", "TTL KEYS", "EXPIRED")
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
					if a.json {
						if err := a.emit(lsRecord{kc.Name, kc.Live, kc.Stored, kc.TTL, kc.Expired}); err != nil {
							return err
						}
						continue
					}
					t.row(a.show([]byte(kc.Name)), itoa(kc.Live), itoa(kc.TTL), itoa(kc.Expired))
				}
				if !a.json {
					if err := t.flush(); err != nil {
						return err
					}
				}
				if err := a.lsLogs(ctx, db); err != nil {
					return err
				}
				return errors.Join(damaged...)
			})
		},
	}
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

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
