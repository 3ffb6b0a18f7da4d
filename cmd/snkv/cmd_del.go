package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/snkv-go/snkv/iterator"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) delCommand() *cobra.Command {
	var sel keyRange
	var batch int
	c := &cobra.Command{
		Use:     "del FILE KEY...",
		Aliases: []string{"delete", "rm"},
		Short:   "Delete one or more keys, or a range of keys",
		Long: `Delete the KEYs from the column family of --cf, all in one transaction.
Exit code 3 if a key does not exist: the others are deleted all the same,
and the message names the missing ones.

With --prefix, or --start and --end (a half-open range [start, end), either
bound left out is open; with both, the keys of the prefix within the
bounds, as scan selects them), delete every key of the range instead, with its
TTL state, in one transaction (Store.DeleteRange), and print how many keys
were deleted. Other writers wait for the whole range: --batch N deletes it
in transactions of N keys (DeleteRangeInBatches), so that they wait one
batch at most; the range is then not deleted atomically, and Ctrl-C stops
at a batch boundary, saying how many keys were deleted. A range that
selects every key (an empty --prefix, --start with an empty value and no
--end) is refused: 'snkv cf clear' deletes every key.`,
		Example: `  snkv del app.db user:1
  snkv del app.db --cf sessions tok1 tok2 tok3
  snkv del app.db --prefix tmp:
  snkv del app.db --cf events --start 2030-01 --end 2031-01 --batch 10000`,
		Args: nargs(1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ranged := cmd.Flags().Changed("prefix") || cmd.Flags().Changed("start") || cmd.Flags().Changed("end")
			switch {
			case ranged && len(args) > 1:
				return usagef("give KEYs or a range (--prefix, --start, --end), not both")
			case !ranged && len(args) == 1:
				return usagef("del: missing KEY (or --prefix, --start, --end for a range)")
			case !ranged && cmd.Flags().Changed("batch"):
				return usagef("--batch applies to a range (--prefix, --start, --end)")
			case batch < 0 || (cmd.Flags().Changed("batch") && batch == 0):
				return usagef("--batch must be at least 1")
			}
			if ranged {
				ks, err := a.selection(cmd, sel)
				if err != nil {
					return err
				}
				return a.delRange(cmd.Context(), args[0], ks, batch)
			}
			keys, err := a.keyArgs(args[1:])
			if err != nil {
				return err
			}
			return a.withCF(args[0], true, func(db *kvstore.Store, cf *kvstore.ColumnFamily) error {
				var missing []string
				var deleted [][]byte
				err = db.Update(cmd.Context(), func(tx *kvstore.Tx) error {
					missing, deleted = nil, nil
					h := tx.CF(cf)
					for _, key := range keys {
						err := h.Delete(key)
						switch {
						case errors.Is(err, kvstore.ErrNotFound):
							missing = append(missing, fmt.Sprintf("%q", showText(key)))
						case err != nil:
							return keyError(cf, key, err)
						default:
							deleted = append(deleted, key)
						}
					}
					return nil
				})
				if err != nil {
					return err
				}
				if a.json {
					for _, key := range deleted {
						if err := a.emit(newRecord(cf.Name(), key, nil)); err != nil {
							return err
						}
					}
				}
				switch {
				case len(missing) == 0:
					return nil
				case len(keys) == 1:
					return keyError(cf, keys[0], kvstore.ErrNotFound)
				}
				others := fmt.Sprintf("the other %d were deleted", len(deleted))
				switch len(deleted) {
				case 0:
					others = "none was deleted"
				case 1:
					others = "the other one was deleted"
				}
				return notFound{fmt.Sprintf("%d of %d keys not found in column family %q: %s (%s)",
					len(missing), len(keys), cf.Name(), strings.Join(missing, ", "), others)}
			})
		},
	}
	f := c.Flags()
	f.StringVar(&sel.prefix, "prefix", "", "delete every key starting with `PREFIX`")
	f.StringVar(&sel.start, "start", "", "delete from `KEY` (inclusive)")
	f.StringVar(&sel.end, "end", "", "delete up to `KEY` (exclusive)")
	f.IntVar(&batch, "batch", 0, "delete the range in transactions of `N` keys (not atomic)")
	return c
}

// delRange deletes the keys of sel's range, in one transaction or, with
// batch > 0, in transactions of batch keys.
func (a *app) delRange(ctx context.Context, path string, sel keySel, batch int) error {
	start, end := sel.opts.Start, sel.opts.End
	if p := sel.opts.Prefix; p != nil {
		// A prefix within [start, end): the narrower of the two.
		if start == nil || bytes.Compare(p, start) > 0 {
			start = p
		}
		if pe := iterator.PrefixEnd(p); pe != nil && (end == nil || bytes.Compare(pe, end) < 0) {
			end = pe
		}
		if end != nil && bytes.Compare(start, end) > 0 {
			// The prefix lies outside [--start, --end): nothing, as scan
			// lists nothing (not the reversed range DeleteRange refuses).
			end = start
		}
	}
	if len(start) == 0 && end == nil {
		return usagef("the range selects every key: 'snkv cf clear FILE NAME' deletes every key of a column family")
	}
	return a.withCF(path, true, func(db *kvstore.Store, cf *kvstore.ColumnFamily) error {
		var n int64
		var err error
		if batch > 0 {
			bar := a.progress(-1, "deleting", "")
			n, err = cf.DeleteRangeInBatches(ctx, start, end, batch)
			bar.done()
		} else {
			n, err = cf.DeleteRange(ctx, start, end)
		}
		switch {
		case interrupted(ctx, err) && batch > 0:
			return interruptedf("interrupted: deleted %s before stopping at a batch boundary; the rest of the range is still there", countOf(n, "key"))
		case interrupted(ctx, err):
			return interruptedf("interrupted: nothing was deleted (the range is deleted in one transaction)")
		case err != nil:
			return err
		}
		if a.json {
			return a.emit(map[string]any{"cf": cf.Name(), "deleted": n})
		}
		_, err = fmt.Fprintf(a.out, "deleted %s\n", countOf(n, "key"))
		return err
	})
}
