package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/spf13/cobra"
)

func (a *app) exportCommand() *cobra.Command {
	var outPath, format string
	var plaintext bool
	var sel keyRange
	c := &cobra.Command{
		Use:   "export FILE",
		Short: "Write keys as JSON Lines or tab-separated text (read-only)",
		Long: `Write the keys of every column family (or only of --cf) as JSON Lines, on
stdout or into the new file --out, from one consistent snapshot. Each line is
one key:

  {"cf":"sessions","key":"tok1","value":"{\"user\":7}","expire_ms":1893456000000}

A key or value that is valid UTF-8 is a string under "key"/"value", unless
its escaped string would be longer than its base64 (control characters
take six bytes each); that, and anything else, is standard base64 under
"key_base64"/"value_base64". "expire_ms" is the
absolute expiry in milliseconds since the Unix epoch, present only for a key
with a TTL. An empty column family is written as {"cf":"name"} alone, so that
it survives a round trip. Keys already expired are not written.
'snkv import' reads this format back.

After the column families come the vector indexes (not with --cf or
--format tsv): a line with each index's options, then a line a live vector,
with its value, metadata and expiry, the vector in float32's exact
decimals:

  {"vec":"docs","dim":3,"metric":"cosine","storage":"f32","m":16,"ef_construction":128}
  {"vec":"docs","key":"a","value":"hello","vector":[1,0,0],"meta":{"lang":"en"}}

Metadata that is not UTF-8 is written as "meta_base64" (keys and values in
base64). The selection flags select vectors by key too.

--prefix, --start/--end and --match select keys as scan does, in each
column family exported.

--format tsv writes one column family (--cf, or the default one) as
tab-separated lines KEY, VALUE and, for a key with a TTL, EXPIRE_MS. In KEY
and VALUE a backslash is written \\, a tab \t, a newline \n, a carriage
return \r, and any other control character or byte that is not UTF-8 \xNN.

--out writes to a temporary file beside PATH (mode 0600, or --file-mode) and gives it the
name PATH only when the export is complete: an interrupted or failed export
leaves no PATH behind.

An export is never encrypted. Of an encrypted store it is refused unless
--plaintext says to write the values in the clear, and then a warning on
stderr says that the output is not encrypted ('snkv backup' makes an
encrypted copy).`,
		Example: `  snkv export app.db > app.jsonl
  snkv export app.db --cf sessions --out sessions.jsonl
  snkv export app.db --prefix user: --format tsv > users.tsv
  snkv export secret.db --password-file pw.txt --plaintext --out clear.jsonl`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			tsv, err := parseFormat(format)
			if err != nil {
				return err
			}
			ks, err := a.selection(cmd, sel)
			if err != nil {
				return err
			}
			if outPath != "" {
				if _, err := os.Lstat(outPath); err == nil {
					return fmt.Errorf("--out %s: the file already exists", outPath)
				}
				if err := dirExists(outPath); err != nil {
					return fmt.Errorf("--out %s: %w", outPath, err)
				}
			}
			a.onEncrypted = func() error {
				if plaintext {
					return nil
				}
				return usagef("%s: the store is encrypted, and an export writes its keys and values in the clear: pass --plaintext to export them anyway, or use 'snkv backup' for an encrypted copy", args[0])
			}
			return a.withStore(args[0], false, func(db *kvstore.Store) (err error) {
				if a.unlocked {
					to := "the output"
					if outPath != "" {
						to = outPath
					}
					fmt.Fprintf(a.err, "snkv: warning: %s is encrypted, but its export is not: %s holds its keys and values in the clear\n", args[0], to)
				}
				names := []string{a.cf}
				if !cfChanged(cmd) && !tsv {
					if names, err = db.ListColumnFamilies(); err != nil {
						return err
					}
				}
				cfs, counts, err := openCounted(ctx, db, names)
				if err != nil {
					return err
				}
				var ixs []*vector.Index
				if !cfChanged(cmd) && !tsv {
					if ixs, err = openVecIndexes(ctx, db); err != nil {
						return err
					}
					defer closeVecIndexes(ixs)
				}
				var total int64
				for _, kc := range counts {
					total += kc.Live
				}
				dst := a.out
				var out *atomicFile
				if outPath != "" {
					if out, err = a.createAtomic(outPath); err != nil {
						return err
					}
					defer out.abort() // no-op once committed
					dst = out.f
				}
				w := bufio.NewWriterSize(dst, 1<<16)
				if ks.any() {
					total = -1 // a spinner: the selected keys are not counted
				}
				bar := a.progress(total, "exporting", "keys")
				n, vecs, at, largest, err := a.export(ctx, db, cfs, ixs, w, ks, tsv, bar)
				bar.done()
				if ferr := w.Flush(); err == nil {
					err = ferr
				}
				if err == nil && out != nil {
					err = out.commit()
				}
				if err != nil {
					if interrupted(ctx, err) && outPath != "" {
						return interruptedf("interrupted after exporting %s: the export is incomplete, and %s was not written", countOf(n, "key"), outPath)
					}
					if interrupted(ctx, err) {
						return interruptedf("interrupted after exporting %s: the export is incomplete", countOf(n, "key"))
					}
					return readError(db, at, err)
				}
				if largest > defaultMaxValueSize {
					// The store was written with a larger
					// Options.MaxValueSize: its import needs as much.
					fmt.Fprintf(a.err, "snkv: note: the largest value exported is %d bytes (%s), above the default limit: import it with --max-value-size %s\n", largest, humanSize(int64(largest)), flagSize(largest))
				}
				return a.exportSummary(outPath != "", n, len(cfs), vecs, len(ixs))
			})
		},
	}
	sel.add(c)
	c.Flags().StringVar(&outPath, "out", "", "write into the new file `PATH` instead of stdout")
	c.Flags().StringVar(&format, "format", "jsonl", "`FORMAT` of the lines: jsonl or tsv")
	c.Flags().BoolVar(&plaintext, "plaintext", false, "export an encrypted store: its keys and values are written in the clear")
	return c
}

// parseFormat reads --format: jsonl (false) or tsv (true).
func parseFormat(s string) (tsv bool, err error) {
	switch s {
	case "jsonl", "json":
		return false, nil
	case "tsv":
		return true, nil
	}
	return false, usagef("bad --format %q: want jsonl or tsv", s)
}

// export writes the selected keys of cfs, then the selected vectors of
// ixs, to w from one read transaction, as JSON Lines or TSV (no vectors),
// and returns how many keys and vectors it wrote and the column family it
// was at (the one an error is about). The command's clock is fixed, so an
// expiry computed as now + the time left is the stored one, to the
// millisecond.
func (a *app) export(ctx context.Context, db *kvstore.Store, cfs []*kvstore.ColumnFamily, ixs []*vector.Index, w io.Writer, sel keySel, tsv bool, bar *progress) (n, vecs int64, at string, largest int, err error) {
	sink := &app{out: w}
	var line []byte
	err = db.View(ctx, func(tx *kvstore.Tx) error {
		for _, cf := range cfs {
			at = cf.Name()
			h := tx.CF(cf)
			ttlOn := cf.HasTTL()
			written := 0
			for e, err := range h.Scan(sel.opts) {
				if err != nil {
					return err
				}
				if !sel.keeps(e.Key) {
					continue
				}
				largest = max(largest, len(e.Value))
				var exp *int64
				if ttlOn {
					d, err := h.TTL(e.Key)
					if err != nil {
						return err
					}
					if d != kvstore.NoTTL {
						ms := a.nowMs() + d.Milliseconds()
						exp = &ms
					}
				}
				if tsv {
					line = appendTSV(line[:0], e.Key, e.Value, exp)
					if _, err := w.Write(line); err != nil {
						return err
					}
				} else {
					r := newRecord(cf.Name(), e.Key, e.Value)
					r.ExpireMs = exp
					if err := sink.emit(r); err != nil {
						return err
					}
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
			if written == 0 && !tsv && !sel.any() {
				if err := sink.emit(record{CF: cf.Name()}); err != nil {
					return err
				}
			}
		}
		at = ""
		vecs, err = a.exportVectors(ctx, tx, ixs, sink, sel)
		return err
	})
	return n, vecs, at, largest, err
}

// exportSummary reports an export: on stdout when the data went to a file,
// else on stderr when that is a terminal (never mixed into the data).
func (a *app) exportSummary(toFile bool, keys int64, cfs int, vecs int64, ixs int) error {
	w := a.out
	if !toFile {
		if !a.stderrIsTerminal() {
			return nil
		}
		w = a.err
	}
	if a.json {
		sink := &app{out: w}
		sum := map[string]any{"exported": keys, "column_families": cfs}
		if ixs > 0 {
			sum["vectors"], sum["vector_indexes"] = vecs, ixs
		}
		return sink.emit(sum)
	}
	if ixs > 0 {
		_, err := fmt.Fprintf(w, "exported %s from %s and %s from %s\n", countOf(keys, "key"), countOf(cfs, "column family"),
			countOf(vecs, "vector"), countOf(ixs, "vector index"))
		return err
	}
	_, err := fmt.Fprintf(w, "exported %s from %s\n", countOf(keys, "key"), countOf(cfs, "column family"))
	return err
}
