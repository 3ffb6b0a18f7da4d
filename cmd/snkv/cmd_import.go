package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/spf13/cobra"
)

func (a *app) importCommand() *cobra.Command {
	var inPath, format string
	var batch int
	c := &cobra.Command{
		Use:   "import FILE",
		Short: "Load keys from JSON Lines (the export format) or tab-separated text",
		Long: `Load keys written by 'snkv export' from stdin, or from --in, creating
missing column families. Values replace existing ones; a key keeps exactly
the expiry it was exported with, and keys already expired when the import
starts are skipped (and counted).

By default each column family is imported all-or-nothing, in one
transaction: an error (a bad line, a bad key) rolls that column family back
and stops, leaving the column families imported before it. This needs each
column family's lines together, as export writes them. --batch N commits
every N keys instead (lines of column families may then be mixed).

Vector indexes are read back from their lines too: an index's first line
(dim, metric, ...) creates it, or checks that the existing one has those
options; its vectors are put like keys (replacing a key's vector, skipped if
expired), all-or-nothing per index unless --batch. An index the import
created and rolled back is dropped again.

--format tsv reads tab-separated lines (KEY, VALUE, optional EXPIRE_MS, with
the escapes 'snkv export --format tsv' writes) into the column family of
--cf, created if missing.

A value is at most 10 MiB unless --max-value-size raises the limit (export
says when its values need it). A line longer than the most a key and a
value within the limits take (4/3 of them in JSON Lines, 4 times in TSV)
is refused before it is read whole.

With --in FILE the progress bar shows the share of the file read.

Ctrl-C stops at a batch boundary: what was committed stays, the batch in
progress is rolled back, and the summary says what was imported.`,
		Example: `  snkv import app.db < app.jsonl
  snkv import new.db --create --in app.jsonl --batch 10000
  printf 'k1\tv1\nk2\tv2\n' | snkv import app.db --format tsv --cf imported`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if batch < 0 {
				return usagef("--batch must not be negative")
			}
			tsv, err := parseFormat(format)
			if err != nil {
				return err
			}
			if cfChanged(cmd) && !tsv {
				return usagef("import: --cf applies to --format tsv; JSON Lines name their column family in each line")
			}
			src := a.in
			var size int64 = -1
			if inPath != "" && inPath != "-" {
				f, err := os.Open(inPath)
				if err != nil {
					return fmt.Errorf("--in: %w", err)
				}
				defer f.Close()
				src = f
				if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
					size = fi.Size()
				}
			}
			// A store that --create makes is made under a temporary name
			// and given its own only if the import committed something
			// (or ended well): a failed import leaves no store behind.
			target, made, err := a.importTarget(args[0])
			if err != nil {
				return err
			}
			var committed bool
			err = a.withStore(target, true, func(db *kvstore.Store) error {
				im := &importer{a: a, db: db, ctx: cmd.Context(), batch: batch, seen: map[string]bool{}, tsv: tsv}
				defer func() { committed = im.committed }()
				defer im.closeVec()
				if size >= 0 {
					im.byBytes = true
					im.bar = a.progressBytes(size, "importing")
				} else {
					im.bar = a.progress(-1, "importing", "keys")
				}
				runErr := im.run(src)
				im.bar.done()
				if sumErr := im.summary(); sumErr != nil && runErr == nil {
					runErr = sumErr
				}
				return runErr
			})
			a.storePath = args[0]
			if made != nil {
				return made.finish(err, err == nil || committed)
			}
			return err
		},
	}
	c.Flags().StringVar(&inPath, "in", "", "read from `PATH` instead of stdin")
	c.Flags().StringVar(&format, "format", "jsonl", "`FORMAT` of the lines: jsonl or tsv")
	c.Flags().IntVar(&batch, "batch", 0, "commit every `N` keys (0: each column family in one transaction)")
	return c
}

// cfTally counts what an import did to one column family.
type cfTally struct {
	name     string
	vec      bool  // a vector index, not a column family
	imported int64 // keys committed
	skipped  int64 // keys skipped because already expired
}

// importer is the state of one import.
type importer struct {
	a       *app
	db      *kvstore.Store
	ctx     context.Context
	batch   int
	bar     *progress
	tsv     bool // lines are tab-separated, for the column family of --cf
	byBytes bool // the bar counts bytes of the input, not keys

	tallies []*cfTally
	seen    map[string]bool // column families met so far, by folded name

	// vec is the vector index that vectors go to (cur is nil then);
	// vecCreated: the import created it, and nothing of it committed yet.
	vec        *vector.Index
	vecCreated bool

	cur *kvstore.ColumnFamily
	// created: cur was created in tx, so that a rollback of tx leaves
	// no trace of it in the file.
	created   bool
	tally     *cfTally
	tx        *kvstore.Tx
	h         *kvstore.ColumnFamily // cur bound to tx
	pending   int64                 // keys written in tx, not yet committed
	committed bool                  // a transaction of the import committed
}

// run reads and applies every line of src.
func (im *importer) run(src io.Reader) error {
	limit := im.a.valueLimit()
	maxLine := jsonLineMax(limit)
	if im.tsv {
		maxLine = tsvLineMax(limit)
	}
	lr := readLines(src, maxLine)
	defer lr.stop()
	line := 0
	for {
		c, ok, err := lr.next(im.ctx)
		if err != nil {
			return im.interrupt()
		}
		if !ok {
			break
		}
		if errors.Is(c.err, errLineTooLong) {
			return im.fail(line+1, fmt.Errorf("%w, the most a key and a value of at most %d bytes take in this format: a larger value needs --max-value-size", c.err, limit))
		}
		if c.err != nil {
			return im.fail(line, fmt.Errorf("reading the input: %w", c.err))
		}
		read := 0
		for _, b := range c.lines {
			if im.ctx.Err() != nil {
				return im.interrupt()
			}
			line++
			read += len(b)
			if err := im.line(line, b); err != nil {
				if interrupted(im.ctx, err) {
					return im.interrupt()
				}
				return im.fail(line, err)
			}
		}
		lr.release(c)
		if im.byBytes {
			im.bar.add(read)
		}
	}
	if err := im.commit(); err != nil {
		if interrupted(im.ctx, err) {
			return im.interrupt()
		}
		return im.fail(line, err)
	}
	return nil
}

// line applies one line of input.
func (im *importer) line(n int, b []byte) error {
	if im.tsv {
		return im.tsvLine(b)
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil
	}
	var l importLine
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// Name the field as the line has it, not by the
			// embedded structs that read it.
			te.Struct, te.Field = "record", te.Field[strings.LastIndexByte(te.Field, '.')+1:]
		}
		return fmt.Errorf("not a record: %v", err)
	}
	if dec.More() {
		return fmt.Errorf("not a record: more than one JSON value on the line")
	}
	if l.Vec != nil {
		return im.vecLine(&l)
	}
	if l.vecFields.any() {
		return fmt.Errorf(`a vector index's field on a column family's line (without "vec")`)
	}
	rec := l.record
	if rec.CF == "" {
		return fmt.Errorf(`missing "cf"`)
	}
	if err := im.switchTo(rec.CF); err != nil {
		return err
	}
	key, hasKey, value, hasValue, err := rec.bytes()
	if err != nil {
		return err
	}
	if !hasKey {
		if hasValue || rec.ExpireMs != nil {
			return fmt.Errorf(`a value or expiry without "key"`)
		}
		return nil // names a column family only
	}
	if !hasValue {
		return fmt.Errorf(`missing "value"`)
	}
	return im.put(key, value, rec.ExpireMs)
}

// tsvLine applies a tab-separated line to the column family of --cf.
func (im *importer) tsvLine(b []byte) error {
	b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
	if len(b) == 0 {
		return nil
	}
	key, value, exp, err := parseTSV(b)
	if err != nil {
		return err
	}
	if err := im.switchTo(im.a.cf); err != nil {
		return err
	}
	return im.put(key, value, exp)
}

// put writes one key into the current column family, or skips it if its
// expiry has passed.
func (im *importer) put(key, value []byte, expireMs *int64) (err error) {
	if expireMs != nil && *expireMs <= im.a.nowMs() {
		im.tally.skipped++
		return nil
	}
	if err := im.begin(); err != nil {
		return err
	}
	if expireMs != nil {
		err = im.h.PutExpireAt(key, value, time.UnixMilli(*expireMs))
	} else {
		err = im.h.Put(key, value)
	}
	if errors.Is(err, kvstore.ErrValueTooLarge) {
		return fmt.Errorf("%w: --max-value-size %s takes it", err, flagSize(len(value)))
	}
	if err != nil {
		return err
	}
	return im.written()
}

// written counts a key written in the import's transaction, and commits
// it when --batch says to.
func (im *importer) written() error {
	im.pending++
	if im.pending%1024 == 0 && !im.byBytes {
		im.bar.add(1024)
	}
	if im.batch > 0 && im.pending >= int64(im.batch) {
		return im.commit()
	}
	return nil
}

// switchTo makes name the column family that keys go to, committing the
// previous one's transaction and creating name if it does not exist.
func (im *importer) switchTo(name string) error {
	if im.cur != nil && foldName(im.cur.Name()) == foldName(name) {
		return nil
	}
	if err := im.commit(); err != nil {
		return err
	}
	im.closeVec()
	fold := foldName(name)
	if im.seen[fold] && im.batch == 0 {
		return fmt.Errorf("the lines of column family %q are not together (its earlier lines are imported): an all-or-nothing import needs each column family's lines in one run, as export writes them; use --batch N to import mixed lines", name)
	}
	cf, err := im.db.OpenColumnFamily(name)
	created := false
	if errors.Is(err, kvstore.ErrNotFound) {
		// Created in the transaction of its keys: if they roll back,
		// the column family was never written.
		if err = im.begin(); err == nil {
			cf, err = im.tx.CreateColumnFamily(name)
			created = err == nil
		}
	}
	if err != nil {
		return fmt.Errorf("column family %q: %w", name, err)
	}
	if !im.seen[fold] {
		im.tallies = append(im.tallies, &cfTally{name: cf.Name()})
	}
	im.seen[fold] = true
	for _, t := range im.tallies {
		if !t.vec && foldName(t.name) == fold {
			im.tally = t
		}
	}
	im.cur, im.created = cf, created
	if im.tx != nil {
		im.h = im.tx.CF(cf)
	}
	return nil
}

// begin starts the import's write transaction if none is open.
func (im *importer) begin() error {
	if im.tx != nil {
		return nil
	}
	tx, err := im.db.Begin(im.ctx, true)
	if err != nil {
		return err
	}
	im.tx = tx
	if im.cur != nil {
		im.h = tx.CF(im.cur)
	}
	return nil
}

// commit commits the open transaction, if any.
func (im *importer) commit() error {
	if im.tx == nil {
		return nil
	}
	tx := im.tx
	im.tx, im.h = nil, nil
	if err := tx.Commit(); err != nil {
		im.pending = 0
		return err
	}
	im.committed, im.created = true, false
	im.tally.imported += im.pending
	if !im.byBytes {
		im.bar.add(int(im.pending % 1024))
	}
	im.pending = 0
	return nil
}

// rollback abandons the open transaction, with the current column family
// if the import created it there (it was never written, and leaves the
// summary). It reports whether anything was rolled back.
func (im *importer) rollback() bool {
	rolled := im.tx != nil && (im.pending > 0 || im.created)
	if im.tx != nil {
		_ = im.tx.Rollback()
		im.tx, im.h, im.pending = nil, nil, 0
	}
	if im.created {
		im.tallies = slices.DeleteFunc(im.tallies, func(t *cfTally) bool { return t == im.tally })
		im.created = false
	}
	if im.vec != nil && im.vecCreated && im.tally.imported == 0 {
		// Created by this import and given nothing: no trace of it.
		name := im.vec.Name()
		im.closeVec()
		if err := vector.Drop(context.Background(), im.db, name); err == nil {
			im.tallies = slices.DeleteFunc(im.tallies, func(t *cfTally) bool { return t == im.tally })
			rolled = true
		}
	}
	return rolled
}

// fail rolls back and returns the error of line n.
func (im *importer) fail(n int, err error) error {
	what := ""
	if im.cur != nil {
		what = fmt.Sprintf("column family %q", im.cur.Name())
	} else if im.vec != nil {
		what = fmt.Sprintf("vector index %q", im.vec.Name())
	}
	msg := fmt.Sprintf("line %d: %v", n, err)
	if im.rollback() {
		if im.batch == 0 {
			msg += fmt.Sprintf("; %s was rolled back", what)
		} else {
			msg += fmt.Sprintf("; the batch in progress of %s was rolled back", what)
		}
	}
	return fmt.Errorf("import stopped at %s", msg)
}

// interrupt rolls back the transaction in progress after Ctrl-C.
func (im *importer) interrupt() error {
	im.rollback()
	var total int64
	for _, t := range im.tallies {
		total += t.imported
	}
	return fmt.Errorf("interrupted: committed %s before stopping at a batch boundary; the batch in progress was rolled back and the store is consistent", countOf(total, "key"))
}

// summary prints what the import did.
func (im *importer) summary() error {
	var imported, skipped int64
	cfs, vecs := 0, 0
	for _, t := range im.tallies {
		imported += t.imported
		skipped += t.skipped
		if t.vec {
			vecs++
		} else {
			cfs++
		}
	}
	if im.a.json {
		sum := map[string]any{"imported": imported, "skipped_expired": skipped, "column_families": cfs}
		if vecs > 0 {
			sum["vector_indexes"] = vecs
		}
		return im.a.emit(sum)
	}
	t := im.a.table("COLUMN FAMILY", "IMPORTED", "SKIPPED EXPIRED")
	for _, c := range im.tallies {
		name := im.a.showCell([]byte(c.name), false)
		if c.vec {
			name = "vector index " + name
		}
		t.row(name, itoa(c.imported), itoa(c.skipped))
	}
	t.row("total", itoa(imported), itoa(skipped))
	return t.flush()
}

// foldName folds ASCII case, as column family names compare.
func foldName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// newStore is a store an import makes with --create: under a temporary
// name beside its path, which no other program knows, so that it can be
// removed when the import fails before committing anything.
type newStore struct {
	tmp, path string
}

// importTarget returns the file an import writes into: path, or, when
// --create is to make it, a new temporary file beside it (made).
func (a *app) importTarget(path string) (target string, made *newStore, err error) {
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) || !a.create || path == "" {
		return path, nil, nil
	}
	if err := dirExists(path); err != nil {
		return "", nil, fmt.Errorf("%s: cannot create the store: %w", path, err)
	}
	f, err := a.createTemp(path)
	if err != nil {
		return "", nil, fmt.Errorf("%s: cannot create the store: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", nil, err
	}
	return f.Name(), &newStore{tmp: f.Name(), path: path}, nil
}

// finish gives the new store its name when keep is set, and removes the
// temporary files in any case; err is the import's result.
func (s *newStore) finish(err error, keep bool) error {
	defer func() {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			_ = os.Remove(s.tmp + suffix)
		}
	}()
	if !keep {
		return err
	}
	if fi, werr := os.Stat(s.tmp + "-wal"); werr == nil && fi.Size() > 0 {
		// Close checkpoints the log of a store no one else knows; if it
		// could not, the store is not whole without it.
		return errors.Join(err, fmt.Errorf("%s: the new store's write-ahead log was not checkpointed: the import is not kept", s.path))
	}
	// A hard link never replaces a file created there meanwhile; where
	// the file system has no links, check and rename.
	lerr := os.Link(s.tmp, s.path)
	if lerr != nil && !errors.Is(lerr, fs.ErrExist) {
		if _, serr := os.Lstat(s.path); errors.Is(serr, fs.ErrNotExist) {
			lerr = os.Rename(s.tmp, s.path)
		}
	}
	if _, serr := os.Lstat(s.path); lerr != nil && serr == nil {
		lerr = fmt.Errorf("%s: the file was created by someone else during the import; the import is not kept", s.path)
	}
	return errors.Join(err, lerr)
}
