package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) exportCommand() *cobra.Command {
	var outPath string
	c := &cobra.Command{
		Use:   "export FILE",
		Short: "Write every key as JSON Lines (read-only)",
		Long: `Write the keys of every column family (or only of --cf) as JSON Lines, on
stdout or into the new file --out, from one consistent snapshot. Each line is
one key:

  {"cf":"sessions","key":"tok1","value":"{\"user\":7}","expire_ms":1893456000000}

A key or value that is valid UTF-8 is a string under "key"/"value"; anything
else is standard base64 under "key_base64"/"value_base64". "expire_ms" is the
absolute expiry in milliseconds since the Unix epoch, present only for a key
with a TTL. An empty column family is written as {"cf":"name"} alone, so that
it survives a round trip. Keys already expired are not written.
'snkv import' reads this format back.`,
		Example: `  snkv export app.db > app.jsonl
  snkv export app.db --cf sessions --out sessions.jsonl`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return a.withStore(args[0], false, func(db *kvstore.Store) (err error) {
				names := []string{a.cf}
				if !cfChanged(cmd) {
					if names, err = db.ListColumnFamilies(); err != nil {
						return err
					}
				}
				cfs, counts, err := openCounted(ctx, db, names)
				if err != nil {
					return err
				}
				var total int64
				for _, kc := range counts {
					total += kc.Live
				}
				dst := a.out
				if outPath != "" {
					f, err := os.OpenFile(outPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
					if err != nil {
						if errors.Is(err, os.ErrExist) {
							return fmt.Errorf("--out %s: the file already exists", outPath)
						}
						return fmt.Errorf("--out: %w", err)
					}
					defer func() {
						if cerr := f.Close(); err == nil && cerr != nil {
							err = cerr
						}
						if err != nil {
							_ = os.Remove(outPath) // never leave a partial export behind
						}
					}()
					dst = f
				}
				w := bufio.NewWriterSize(dst, 1<<16)
				bar := a.progress(total, "exporting", "keys")
				n, err := a.export(ctx, db, cfs, w, bar)
				bar.done()
				if ferr := w.Flush(); err == nil {
					err = ferr
				}
				if err != nil {
					if interrupted(ctx, err) {
						return fmt.Errorf("interrupted after exporting %d keys: the export is incomplete", n)
					}
					return err
				}
				return a.exportSummary(outPath != "", n, len(cfs))
			})
		},
	}
	c.Flags().StringVar(&outPath, "out", "", "write into the new file `PATH` instead of stdout")
	return c
}

// export writes the keys of cfs to w from one read transaction and returns
// how many it wrote. The command's clock is fixed, so an expiry computed as
// now + the time left is the stored one, to the millisecond.
func (a *app) export(ctx context.Context, db *kvstore.Store, cfs []*kvstore.ColumnFamily, w io.Writer, bar *progress) (int64, error) {
	sink := &app{out: w}
	var n int64
	err := db.View(ctx, func(tx *kvstore.Tx) error {
		for _, cf := range cfs {
			h := tx.CF(cf)
			ttlOn := cf.HasTTL()
			written := 0
			for e, err := range h.All() {
				if err != nil {
					return err
				}
				r := newRecord(cf.Name(), e.Key, e.Value)
				if ttlOn {
					d, err := h.TTL(e.Key)
					if err != nil {
						return err
					}
					if d != kvstore.NoTTL {
						exp := a.nowMs() + d.Milliseconds()
						r.ExpireMs = &exp
					}
				}
				if err := sink.emit(r); err != nil {
					return err
				}
				written++
				n++
				if written%1024 == 0 {
					bar.add(1024)
					if err := ctx.Err(); err != nil {
						return err
					}
				}
			}
			bar.add(written % 1024)
			if written == 0 {
				if err := sink.emit(record{CF: cf.Name()}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return n, err
}

// exportSummary reports an export: on stdout when the data went to a file,
// else on stderr when that is a terminal (never mixed into the data).
func (a *app) exportSummary(toFile bool, keys int64, cfs int) error {
	w := a.out
	if !toFile {
		if !a.stderrIsTerminal() {
			return nil
		}
		w = a.err
	}
	if a.json {
		sink := &app{out: w}
		return sink.emit(map[string]any{"exported": keys, "column_families": cfs})
	}
	_, err := fmt.Fprintf(w, "exported %d keys from %d column families\n", keys, cfs)
	return err
}
