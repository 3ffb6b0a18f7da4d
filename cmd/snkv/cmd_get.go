package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) getCommand() *cobra.Command {
	var raw bool
	var format string
	c := &cobra.Command{
		Use:   "get FILE KEY...",
		Short: "Print the value of one or more keys (read-only)",
		Long: `Print the value of KEY in the column family of --cf.

When stdout is not a terminal (a pipe or a file), and outside 'snkv
shell', the value's exact bytes are written, with no newline added, so that 'snkv get app.db k > v.json'
copies the value. On a terminal it is shown as text: valid UTF-8 as it is,
anything that cannot be shown (control characters, bytes that are not
UTF-8) as \xNN, a backslash as \\, then a newline. --escape shows it that
way anywhere, with every non-ASCII byte as \xNN.

With several keys, one read shows them all, from one snapshot: a table
KEY VALUE (escaped as on a terminal), or with --json one object per key;
the keys that do not exist are named on stderr (exit code 3).

--format tsv prints, for one key or several, a line KEY<tab>VALUE per key
found, escaped as 'snkv export --format tsv' escapes (\\, \t, \n, \r,
\xNN), with no header; --no-header leaves out the table's header.
--json prints {"cf","key","value","expire_ms","ttl_ms"}. Exit code 3 if a
key does not exist (or has expired).`,
		Example: `  snkv get app.db user:1
  snkv get app.db user:1 user:2 user:3
  snkv get app.db --cf blobs --hex 00ff > blob.bin`,
		Args: nargs(2, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if raw && a.escapeOut {
				return usagef("--raw and --escape exclude each other")
			}
			tsv, err := a.listFormat(format)
			if err != nil {
				return err
			}
			keys, err := a.keyArgs(args[1:])
			if err != nil {
				return err
			}
			return a.withCF(args[0], false, func(db *kvstore.Store, cf *kvstore.ColumnFamily) error {
				if len(keys) == 1 && !tsv {
					return a.getOne(cf, keys[0])
				}
				return a.getMany(cmd.Context(), db, cf, keys, tsv)
			})
		},
	}
	c.Flags().StringVar(&format, "format", "table", "`FORMAT` of several keys: table, or tsv (KEY<tab>VALUE lines with export's escapes)")
	c.Flags().BoolVar(&raw, "raw", false, "kept for earlier scripts: the exact bytes are the default when stdout is not a terminal, and a terminal never gets them")
	return c
}

// keyArgs decodes the KEY arguments ('-' reads one of them from stdin).
func (a *app) keyArgs(args []string) ([][]byte, error) {
	in := a.inputs()
	keys := make([][]byte, len(args))
	for i, s := range args {
		k, err := in.arg("KEY", s)
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	return keys, nil
}

// getOne prints the value of one key.
func (a *app) getOne(cf *kvstore.ColumnFamily, key []byte) error {
	v, d, err := cf.GetTTL(key)
	if err != nil {
		return keyError(cf, key, err)
	}
	if a.json {
		r := newRecord(cf.Name(), key, v)
		a.setTTL(&r, d)
		return a.emit(r)
	}
	if !a.escapeOut && !a.stdoutIsTerminal() && a.session == nil {
		_, err := a.out.Write(v)
		return err
	}
	_, err = fmt.Fprintln(a.out, a.show(v))
	return err
}

// getMany prints the values of several keys read in one transaction, and
// names the missing ones.
func (a *app) getMany(ctx context.Context, db *kvstore.Store, cf *kvstore.ColumnFamily, keys [][]byte, tsv bool) error {
	var t *rowWriter
	if !a.json {
		t = a.rows(tsv, "KEY", "VALUE")
	}
	var missing []string
	err := db.View(ctx, func(tx *kvstore.Tx) error {
		h := tx.CF(cf)
		for _, key := range keys {
			v, d, err := h.GetTTL(key)
			if errors.Is(err, kvstore.ErrNotFound) {
				missing = append(missing, fmt.Sprintf("%q", showText(key)))
				continue
			}
			if err != nil {
				return keyError(cf, key, err)
			}
			if a.json {
				r := newRecord(cf.Name(), key, v)
				a.setTTL(&r, d)
				if err := a.emit(r); err != nil {
					return err
				}
				continue
			}
			if err := t.row(bin(key), bin(v)); err != nil {
				return err
			}
		}
		return nil
	})
	if t != nil {
		if ferr := t.flush(); err == nil {
			err = ferr
		}
	}
	if err == nil && len(missing) > 0 && len(keys) == 1 {
		return keyError(cf, keys[0], kvstore.ErrNotFound)
	}
	if err == nil && len(missing) > 0 {
		err = notFound{fmt.Sprintf("%d of %d keys not found in column family %q: %s", len(missing), len(keys), cf.Name(), strings.Join(missing, ", "))}
	}
	return err
}

// setTTL fills the expiry fields of a record from the time a key has left.
func (a *app) setTTL(r *record, d time.Duration) {
	if d == kvstore.NoTTL {
		return
	}
	ms := d.Milliseconds()
	exp := a.nowMs() + ms
	r.ExpireMs, r.TTLMs = &exp, &ms
}
