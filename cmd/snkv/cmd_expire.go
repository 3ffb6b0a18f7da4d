package main

import (
	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

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
			var ttlArg *string
			if len(args) == 3 {
				ttlArg = &args[2]
			}
			exp, err := a.expiryFlags(cmd, ttlArg, ttlFlag, atFlag)
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
