package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func (a *app) getCommand() *cobra.Command {
	var raw bool
	c := &cobra.Command{
		Use:   "get FILE KEY...",
		Short: "Print the value of one or more keys (read-only)",
		Long: `Print the value of KEY in the column family of --cf.

When stdout is not a terminal (a pipe or a file), the value's exact bytes
are written, with no newline added, so that 'snkv get app.db k > v.json'
copies the value. On a terminal it is shown as text: valid UTF-8 as it is,
anything that cannot be shown (control characters, bytes that are not
UTF-8) as \xNN, a backslash as \\, then a newline. --escape shows it that
way anywhere, with every non-ASCII byte as \xNN.

With several keys, one read shows them all, from one snapshot: a table
KEY VALUE (escaped as on a terminal), or with --json one object per key;
the keys that do not exist are named on stderr (exit code 3).
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
			keys, err := a.keyArgs(args[1:])
			if err != nil {
				return err
			}
			return a.withCF(args[0], false, func(db *kvstore.Store, cf *kvstore.ColumnFamily) error {
				if len(keys) == 1 {
					return a.getOne(cf, keys[0])
				}
				return a.getMany(cmd.Context(), db, cf, keys)
			})
		},
	}
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
	if !a.escapeOut && !a.stdoutIsTerminal() {
		_, err := a.out.Write(v)
		return err
	}
	_, err = fmt.Fprintln(a.out, a.show(v))
	return err
}

// getMany prints the values of several keys read in one transaction, and
// names the missing ones.
func (a *app) getMany(ctx context.Context, db *kvstore.Store, cf *kvstore.ColumnFamily, keys [][]byte) error {
	var t *table
	if !a.json {
		t = a.table("KEY", "VALUE")
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
			t.row(a.show(key), a.show(v))
		}
		return nil
	})
	if t != nil {
		if ferr := t.flush(); err == nil {
			err = ferr
		}
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

// stdoutIsTerminal reports whether stdout is a terminal.
func (a *app) stdoutIsTerminal() bool {
	return a.stdout != nil && term.IsTerminal(int(a.stdout.Fd()))
}

func (a *app) putCommand() *cobra.Command {
	var ttlFlag, atFlag, valueFile string
	c := &cobra.Command{
		Use:   "put FILE KEY [VALUE]",
		Short: "Store a value under a key, optionally with a TTL",
		Long: `Store VALUE under KEY in the column family of --cf, replacing any previous
value and TTL. The value comes from the argument, from --value-file, or from
stdin when VALUE is '-'. --ttl makes the key expire after a duration
(90s, 30m, 2h, 7d), --expire-at at an RFC 3339 instant; without either the
key is permanent.`,
		Example: `  snkv put app.db user:1 alice
  snkv put app.db --cf sessions tok123 '{"user":1}' --ttl 30m
  snkv put app.db --cf sessions tok456 - --expire-at 2030-01-01T00:00:00Z < session.json
  snkv put app.db --cf blobs --hex 00ff --value-file blob.bin`,
		Args: nargs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			exp, err := a.expiryFlags(ttlFlag, atFlag)
			if err != nil {
				return err
			}
			in := a.inputs()
			key, err := in.arg("KEY", args[1])
			if err != nil {
				return err
			}
			var value []byte
			switch {
			case len(args) == 3 && valueFile != "":
				return usagef("give the value as an argument or with --value-file, not both")
			case len(args) == 3:
				value, err = in.arg("VALUE", args[2])
			case valueFile != "":
				value, err = in.valueFile(valueFile)
			default:
				return usagef("put: missing VALUE (an argument, '-' for stdin, or --value-file)")
			}
			if err != nil {
				return err
			}
			return a.withCF(args[0], true, func(db *kvstore.Store, cf *kvstore.ColumnFamily) error {
				switch {
				case exp.ttl > 0:
					err = cf.PutTTL(key, value, exp.ttl)
				case !exp.at.IsZero():
					err = cf.PutExpireAt(key, value, exp.at)
				default:
					err = cf.Put(key, value)
				}
				if err != nil {
					return keyError(cf, key, err)
				}
				if a.json {
					r := newRecord(cf.Name(), key, nil)
					if !exp.none() {
						d, err := cf.TTL(key)
						if err != nil {
							return keyError(cf, key, err)
						}
						a.setTTL(&r, d)
					}
					return a.emit(r)
				}
				return nil
			})
		},
	}
	c.Flags().StringVar(&ttlFlag, "ttl", "", "expire the key after `DURATION` (90s, 30m, 2h, 7d)")
	c.Flags().StringVar(&atFlag, "expire-at", "", "expire the key at `TIME` (RFC 3339)")
	c.Flags().StringVar(&valueFile, "value-file", "", "read the value from `PATH` ('-': stdin)")
	return c
}

func (a *app) delCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "del FILE KEY...",
		Aliases: []string{"delete", "rm"},
		Short:   "Delete one or more keys",
		Long: `Delete the KEYs from the column family of --cf, all in one transaction.
Exit code 3 if a key does not exist: the others are deleted all the same,
and the message names the missing ones.`,
		Example: `  snkv del app.db user:1
  snkv del app.db --cf sessions tok1 tok2 tok3`,
		Args: nargs(2, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
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
				return notFound{fmt.Sprintf("%d of %d keys not found in column family %q: %s (the other %d were deleted)",
					len(missing), len(keys), cf.Name(), strings.Join(missing, ", "), len(deleted))}
			})
		},
	}
}

func (a *app) existsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "exists FILE KEY",
		Short: "Tell whether a key exists (read-only)",
		Long: `Print true or false: whether KEY exists (and has not expired) in the column
family of --cf. The exit code says it too: 0 if it exists, 3 if not.`,
		Example: `  snkv exists app.db user:1 && echo present`,
		Args:    nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.onKey(args, false, func(cf *kvstore.ColumnFamily, key []byte) error {
				ok, err := cf.Exists(key)
				if err != nil {
					return keyError(cf, key, err)
				}
				if a.json {
					r := newRecord(cf.Name(), key, nil)
					err = a.emit(struct {
						record
						Exists bool `json:"exists"`
					}{r, ok})
				} else {
					_, err = fmt.Fprintln(a.out, ok)
				}
				if err == nil && !ok {
					return silentExit{exitNotFound}
				}
				return err
			})
		},
	}
}

func (a *app) ttlCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "ttl FILE KEY",
		Short: "Print the time a key has left, or \"permanent\" (read-only)",
		Long: `Print the time KEY has left before it expires (millisecond precision), or
"permanent" for a key without TTL. --json adds the absolute expiry in
milliseconds since the Unix epoch. Exit code 3 if the key does not exist.`,
		Example: `  snkv ttl app.db --cf sessions tok123`,
		Args:    nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.onKey(args, false, func(cf *kvstore.ColumnFamily, key []byte) error {
				d, err := cf.TTL(key)
				if err != nil {
					return keyError(cf, key, err)
				}
				if a.json {
					r := newRecord(cf.Name(), key, nil)
					a.setTTL(&r, d)
					return a.emit(struct {
						record
						Permanent bool `json:"permanent"`
					}{r, d == kvstore.NoTTL})
				}
				_, err = fmt.Fprintln(a.out, formatTTL(d, d == kvstore.NoTTL))
				return err
			})
		},
	}
}

func (a *app) expireCommand() *cobra.Command {
	var ttlFlag, atFlag string
	c := &cobra.Command{
		Use:   "expire FILE KEY [DURATION]",
		Short: "Set or change the expiry of an existing key",
		Long: `Make the existing KEY expire after DURATION (or --ttl DURATION), or at the
RFC 3339 instant of --expire-at, without rewriting its value. Exit code 3 if
the key does not exist.`,
		Example: `  snkv expire app.db --cf sessions tok123 15m
  snkv expire app.db --cf sessions tok123 --expire-at 2030-01-01T00:00:00Z`,
		Args: nargs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 3 {
				if ttlFlag != "" {
					return usagef("give the duration as an argument or with --ttl, not both")
				}
				ttlFlag = args[2]
			}
			exp, err := a.expiryFlags(ttlFlag, atFlag)
			if err != nil {
				return err
			}
			if exp.none() {
				return usagef("expire: missing DURATION (or --ttl, --expire-at); 'snkv persist' removes a TTL")
			}
			return a.onKey(args, true, func(cf *kvstore.ColumnFamily, key []byte) error {
				if exp.ttl > 0 {
					err = cf.Expire(key, exp.ttl)
				} else {
					err = cf.ExpireAt(key, exp.at)
				}
				if err != nil {
					return keyError(cf, key, err)
				}
				if a.json {
					d, err := cf.TTL(key)
					if err != nil {
						return keyError(cf, key, err)
					}
					r := newRecord(cf.Name(), key, nil)
					a.setTTL(&r, d)
					return a.emit(r)
				}
				return nil
			})
		},
	}
	c.Flags().StringVar(&ttlFlag, "ttl", "", "expire the key after `DURATION`")
	c.Flags().StringVar(&atFlag, "expire-at", "", "expire the key at `TIME` (RFC 3339)")
	return c
}

func (a *app) persistCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "persist FILE KEY",
		Short:   "Remove the TTL of a key, making it permanent",
		Long:    `Remove the TTL of KEY. A key without TTL stays as it is. Exit code 3 if the key does not exist.`,
		Example: `  snkv persist app.db --cf sessions tok123`,
		Args:    nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.onKey(args, true, func(cf *kvstore.ColumnFamily, key []byte) error {
				if err := cf.Persist(key); err != nil {
					return keyError(cf, key, err)
				}
				if a.json {
					return a.emit(newRecord(cf.Name(), key, nil))
				}
				return nil
			})
		},
	}
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
