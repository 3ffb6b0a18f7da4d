package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) putCommand() *cobra.Command {
	var ttlFlag, atFlag, valueFile string
	var ifAbsent, keepTTL bool
	c := &cobra.Command{
		Use:   "put FILE KEY [VALUE]",
		Short: "Store a value under a key, optionally with a TTL",
		Long: `Store VALUE under KEY in the column family of --cf, replacing any previous
value and TTL. The value comes from the argument, from --value-file, or from
stdin when VALUE is '-'. --ttl makes the key expire after a duration
(90s, 30m, 2h, 7d), --expire-at at an RFC 3339 instant; without either the
key is permanent, unless --keep-ttl keeps the TTL it has. --if-absent
writes only when the key does not exist (or has expired): a live key is
left as it is, with exit code 1.

A value is at most 10 MiB unless --max-value-size raises the limit (a store
written with a larger Options.MaxValueSize); one from stdin or a file is
refused as soon as it is over the limit, without reading the rest.`,
		Example: `  snkv put app.db user:1 alice
  snkv put app.db --cf sessions tok123 '{"user":1}' --ttl 30m
  snkv put app.db --cf sessions tok456 - --expire-at 2030-01-01T00:00:00Z < session.json
  snkv put app.db --cf blobs --hex 00ff --value-file blob.bin`,
		Args: nargs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			exp, err := a.expiryFlags(cmd, nil, ttlFlag, atFlag)
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
			switch {
			case ifAbsent && keepTTL:
				return usagef("--if-absent and --keep-ttl exclude each other: a key that is absent has no TTL to keep")
			case keepTTL && !exp.none():
				return usagef("--keep-ttl keeps the key's TTL: it excludes --ttl and --expire-at")
			}
			return a.withCF(args[0], true, func(db *kvstore.Store, cf *kvstore.ColumnFamily) error {
				switch {
				case ifAbsent:
					err = a.putIfAbsent(cf, key, value, exp)
				case keepTTL:
					err = a.putKeepTTL(cmd.Context(), db, cf, key, value)
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
					if !exp.none() || keepTTL {
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
	c.Flags().BoolVar(&ifAbsent, "if-absent", false, "write only if the key does not exist (or has expired); exit code 1 if it does")
	c.Flags().BoolVar(&keepTTL, "keep-ttl", false, "keep the TTL the key has (a new key, or a permanent one, stays permanent)")
	return c
}

// putIfAbsent writes key only if it is absent, with the expiry of exp;
// a live key is left as it is, and reported.
func (a *app) putIfAbsent(cf *kvstore.ColumnFamily, key, value []byte, exp expiry) error {
	var wrote bool
	var err error
	switch {
	case exp.ttl > 0:
		wrote, err = cf.PutIfAbsentTTL(key, value, exp.ttl)
	case !exp.at.IsZero():
		// The command's clock is fixed: the TTL to the instant is exact.
		wrote, err = cf.PutIfAbsentTTL(key, value, exp.at.Sub(a.clock.Now()))
	default:
		wrote, err = cf.PutIfAbsent(key, value)
	}
	if err == nil && !wrote {
		return fmt.Errorf("key %q exists in column family %q: nothing was written (--if-absent)", showText(key), cf.Name())
	}
	return err
}

// putKeepTTL writes value under key in one transaction, keeping the
// expiry the key has: the one stored, exactly, since the command's clock
// is fixed.
func (a *app) putKeepTTL(ctx context.Context, db *kvstore.Store, cf *kvstore.ColumnFamily, key, value []byte) error {
	return db.Update(ctx, func(tx *kvstore.Tx) error {
		h := tx.CF(cf)
		d, err := h.TTL(key)
		switch {
		case errors.Is(err, kvstore.ErrNotFound) || (err == nil && d == kvstore.NoTTL):
			return h.Put(key, value)
		case err != nil:
			return err
		}
		return h.PutExpireAt(key, value, time.UnixMilli(a.nowMs()+d.Milliseconds()))
	})
}
