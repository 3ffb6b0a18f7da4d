package main

import (
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/spf13/cobra"
)

func (a *app) vecPutCommand(f *vecFlags) *cobra.Command {
	c := &cobra.Command{Use: "put FILE INDEX KEY (--vector JSON | --vector-file F) [--ttl D] [--meta k=v]... [--value V]", Short: "Store a vector under a key", Args: nargs(3, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			exp, err := a.expiryFlags(cmd, nil, f.ttl, f.at)
			if err != nil {
				return err
			}
			meta, err := pairs(f.meta, "--meta")
			if err != nil {
				return err
			}
			in := a.inputs()
			key, err := in.arg("KEY", args[2])
			if err != nil {
				return err
			}
			p := vector.Put{TTL: exp.ttl, ExpireAt: exp.at, Meta: meta}
			if v := cmd.Flags().Lookup("value"); v.Changed {
				if p.Value, err = in.arg("VALUE", v.Value.String()); err != nil {
					return err
				}
			}
			if f.vecFile == "-" && in.stdinUsed {
				return usagef("stdin ('-') can be read only once: give the key or value another way")
			}
			vec, err := a.vecInput(*f, nil, "")
			if err != nil {
				return err
			}
			return a.withIndex(cmd, args[0], args[1], true, func(db *kvstore.Store, ix *vector.Index) error {
				return vecError(args[1], ix.Put(cmd.Context(), key, vec, p))
			})
		}}
	c.Flags().String("value", "", "a `VALUE` stored with the vector ('-': stdin; --hex, --base64 decode it)")
	c.Flags().StringVar(&f.vec, "vector", "", "the vector as a JSON array")
	c.Flags().StringVar(&f.vecFile, "vector-file", "", "read the vector (a JSON array) from `FILE` ('-': stdin)")
	c.Flags().StringVar(&f.ttl, "ttl", "", "expire the vector after `DURATION` (90s, 30m, 2h, 7d)")
	c.Flags().StringVar(&f.at, "expire-at", "", "expire the vector at `TIME` (RFC 3339)")
	c.Flags().StringArrayVar(&f.meta, "meta", nil, "metadata pair `k=v` (repeatable)")
	return c
}
