package main

import (
	"context"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) scanCommand() *cobra.Command {
	var (
		sel                        keyRange
		reverse, keysOnly, withTTL bool
		limit                      int
		format                     string
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
listed. --json prints one object per key (the export format, plus ttl_ms);
--format tsv prints the columns as tab-separated lines with export's
escapes and no header (with --with-ttl: TTL_MS and EXPIRE_MS, empty for a
permanent key); --no-header leaves out the table's header.
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
			tsv, err := a.listFormat(format)
			if err != nil {
				return err
			}
			ks.opts.Reverse = reverse
			return a.withCF(args[0], false, func(db *kvstore.Store, cf *kvstore.ColumnFamily) error {
				return readError(db, cf.Name(), a.scan(cmd.Context(), db, cf, ks, limit, keysOnly, withTTL, tsv))
			})
		},
	}
	sel.add(c)
	f := c.Flags()
	f.BoolVar(&reverse, "reverse", false, "descending key order")
	f.IntVar(&limit, "limit", 0, "stop after `N` keys (0: no limit)")
	f.BoolVar(&keysOnly, "keys-only", false, "list keys without values")
	f.BoolVar(&withTTL, "with-ttl", false, "show each key's remaining time and expiry")
	f.StringVar(&format, "format", "table", "`FORMAT`: table, or tsv (tab-separated lines with export's escapes, no header)")
	return c
}

func (a *app) scan(ctx context.Context, db *kvstore.Store, cf *kvstore.ColumnFamily, sel keySel, limit int, keysOnly, withTTL, tsv bool) error {
	var t *rowWriter
	if !a.json {
		headers := []string{"KEY"}
		if !keysOnly {
			headers = append(headers, "VALUE")
		}
		if withTTL {
			headers = append(headers, "TTL", "EXPIRES")
			if tsv {
				headers = append(headers[:len(headers)-2], "TTL_MS", "EXPIRE_MS")
			}
		}
		t = a.rows(tsv, headers...)
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
				row := []cell{bin(e.Key)}
				if !keysOnly {
					row = append(row, bin(e.Value))
				}
				switch {
				case !withTTL:
				case tsv && d == kvstore.NoTTL:
					row = append(row, txt(""), txt(""))
				case tsv:
					row = append(row, txt(itoa(d.Milliseconds())), txt(itoa(a.nowMs()+d.Milliseconds())))
				case d == kvstore.NoTTL:
					row = append(row, txt("permanent"), txt("-"))
				default:
					row = append(row, txt(formatTTL(d, false)), txt(formatExpiry(a.nowMs()+d.Milliseconds())))
				}
				if err := t.row(row...); err != nil {
					return err
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
		return interruptedf("interrupted after listing %s", countOf(n, "key"))
	}
	return err
}
