package main

import (
	"errors"
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) cfCommand() *cobra.Command {
	c := group(&cobra.Command{
		Use:   "cf",
		Short: "Create, drop, clear and list column families",
	})
	var force bool
	create := &cobra.Command{
		Use:     "create FILE NAME",
		Short:   "Create a column family",
		Example: `  snkv cf create app.db sessions`,
		Args:    nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(args[0], true, func(db *kvstore.Store) error {
				cf, err := db.CreateColumnFamily(args[1])
				switch {
				case errors.Is(err, kvstore.ErrInvalidName), errors.Is(err, kvstore.ErrReservedName):
					return usageError{fmt.Errorf("bad column family name %q: %s", args[1], strip(err))}
				case errors.Is(err, kvstore.ErrExists):
					return fmt.Errorf("column family %q already exists", args[1])
				case err != nil:
					return err
				}
				if a.json {
					return a.emit(map[string]any{"cf": cf.Name(), "created": true})
				}
				return nil
			})
		},
	}
	drop := &cobra.Command{
		Use:   "drop FILE NAME",
		Short: "Drop a column family with all its keys",
		Long: `Drop column family NAME with all its keys and TTL state. A column family
that still holds keys is dropped only with --force. The default column family
cannot be dropped. Exit code 3 if it does not exist.`,
		Example: `  snkv cf drop app.db sessions --force`,
		Args:    nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withNamedCF(args[0], args[1], true, func(db *kvstore.Store, cf *kvstore.ColumnFamily) error {
				if foldName(cf.Name()) == kvstore.DefaultColumnFamily {
					return fmt.Errorf("the default column family cannot be dropped")
				}
				if !force {
					kc, err := db.CountKeys(cmd.Context(), cf.Name())
					if err != nil {
						return err
					}
					if kc.Stored > 0 {
						return fmt.Errorf("column family %q holds %s; pass --force to drop it with them", cf.Name(), countOf(kc.Stored, "key"))
					}
				}
				if err := db.DropColumnFamily(cf.Name()); err != nil {
					return err
				}
				if a.json {
					return a.emit(map[string]any{"cf": cf.Name(), "dropped": true})
				}
				return nil
			})
		},
	}
	drop.Flags().BoolVar(&force, "force", false, "drop the column family even if it holds keys")
	list := &cobra.Command{
		Use:     "list FILE",
		Short:   "List the names of the column families (read-only)",
		Example: `  snkv cf list app.db`,
		Args:    nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(args[0], false, func(db *kvstore.Store) error {
				names, err := db.ListColumnFamilies()
				if err != nil {
					return err
				}
				if a.json {
					for _, n := range names {
						if err := a.emit(map[string]string{"cf": n}); err != nil {
							return err
						}
					}
					return nil
				}
				t := a.table("COLUMN FAMILY")
				for _, n := range names {
					t.row(a.show([]byte(n)))
				}
				return t.flush()
			})
		},
	}
	clear := &cobra.Command{
		Use:   "clear FILE NAME",
		Short: "Delete every key of a column family, keeping the column family",
		Long: `Delete every key of column family NAME (expired ones and TTL state
included) in one transaction; the column family stays, empty. Exit code 3 if
it does not exist. --json prints {"cf","cleared"} with the number of keys
that were stored.`,
		Example: `  snkv cf clear app.db sessions`,
		Args:    nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withNamedCF(args[0], args[1], true, func(db *kvstore.Store, cf *kvstore.ColumnFamily) error {
				kc, err := db.CountKeys(cmd.Context(), cf.Name())
				if err != nil {
					return err
				}
				if err := cf.Clear(); err != nil {
					return err
				}
				if a.json {
					return a.emit(map[string]any{"cf": cf.Name(), "cleared": kc.Stored})
				}
				return nil
			})
		},
	}
	c.AddCommand(takes(create, "json,adopt"), takes(drop, "json"), takes(list, "json,escape,no-header"), takes(clear, "json"))
	return c
}
