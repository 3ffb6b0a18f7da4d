package main

import (
	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) putCommand() *cobra.Command {
	var ttlFlag, atFlag, valueFile string
	c := &cobra.Command{
		Use:   "put FILE KEY [VALUE]",
		Short: "Store a value under a key, optionally with a TTL",
		Long: `Store VALUE under KEY in the column family of --cf, replacing any previous
value and TTL. The value comes from the argument, from --value-file, or from
stdin when VALUE is '-'. --ttl makes the key expire after a duration
(90s, 30m, 2h, 7d), --expire-at at an RFC 3339 instant; without either the
key is permanent.

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
