package main

import (
	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) statsCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "stats FILE",
		Short:   "Show figures of the store's file and keys (read-only)",
		Example: `  snkv stats app.db`,
		Args:    nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return a.withStore(args[0], false, func(db *kvstore.Store) error {
				st, err := db.Stats(ctx)
				if err != nil {
					return err
				}
				names, err := db.ListColumnFamilies()
				if err != nil {
					return err
				}
				var sum kvstore.KeyCounts
				for _, name := range names {
					kc, err := db.CountKeys(ctx, name)
					if err != nil {
						return err
					}
					sum.Live += kc.Live
					sum.Stored += kc.Stored
					sum.TTL += kc.TTL
					sum.Expired += kc.Expired
				}
				if a.json {
					return a.emit(map[string]any{
						"file": db.Path(), "file_size": st.FileSize, "wal_size": st.WALSize,
						"page_size": st.PageSize, "pages": st.PageCount, "free_pages": st.FreePages,
						"column_families": st.ColumnFamilies, "keys": sum.Live, "stored": sum.Stored,
						"ttl_keys": sum.TTL, "expired": sum.Expired, "encrypted": db.Encrypted(),
					})
				}
				t := a.table()
				for _, r := range [][2]string{
					{"file", db.Path()},
					{"file size", withSize(st.FileSize)},
					{"wal size", withSize(st.WALSize)},
					{"page size", itoa(st.PageSize)},
					{"pages", itoa(st.PageCount)},
					{"free pages", itoa(st.FreePages)},
					{"column families", itoa(int64(st.ColumnFamilies))},
					{"keys", itoa(sum.Live)},
					{"ttl keys", itoa(sum.TTL)},
					{"expired", itoa(sum.Expired)},
					{"encrypted", yesNo(db.Encrypted())},
				} {
					t.row(r[0], r[1])
				}
				return t.flush()
			})
		},
	}
}
