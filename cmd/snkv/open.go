package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/snkv-go/snkv/kvstore"
)

// sqliteMagic starts every SQLite 3 database file.
const sqliteMagic = "SQLite format 3\x00"

// knownApps names the SQLite application_ids of common file formats, so
// that a refused file is named for what it is.
var knownApps = map[uint32]string{
	0x47504B47: "a GeoPackage",              // "GPKG"
	0x47503130: "a GeoPackage",              // "GP10"
	0x47503131: "a GeoPackage",              // "GP11"
	0x4d504258: "an MBTiles tile set",       // "MPBX"
	0x0f055112: "a Fossil repository",       // Fossil's checkout and repository files
	0x0f05511f: "a Fossil repository",       //
	0x0f055113: "a Fossil repository",       //
	0x5e90d5e7: "an SQLite archive (sqlar)", //
}

// fileMagics names a few common non-SQLite formats by their first bytes.
var fileMagics = []struct {
	magic string
	what  string
}{
	{"\x1f\x8b", "a gzip file"},
	{"PK\x03\x04", "a zip archive"},
	{"%PDF", "a PDF document"},
	{"\x89PNG", "a PNG image"},
	{"\x7fELF", "an ELF executable"},
	{"BZh", "a bzip2 file"},
	{"\x28\xb5\x2f\xfd", "a zstd file"},
	{"\xfd7zXZ\x00", "an xz file"},
}

// storesOpened is set once this process has opened a store. From then on
// the command never opens a store file itself (see inspect).
var storesOpened atomic.Bool

// open opens the store at path for a read command (write false: read-only)
// or a write command, after checking what the file is, so that every
// refusal names the file and says why. It never creates a file unless
// --create was given.
func (a *app) open(path string, write bool) (*kvstore.Store, error) {
	if path == "" {
		return nil, usagef("empty FILE name")
	}
	a.storePath = path
	fi, err := os.Stat(path)
	missing := errors.Is(err, fs.ErrNotExist)
	switch {
	case missing && !a.create:
		if err := dirExists(path); err != nil {
			return nil, fmt.Errorf("%s: no such file: %w", path, err)
		}
		return nil, fmt.Errorf("%s: no such file (pass --create to create a new store)", path)
	case missing:
		if err := dirExists(path); err != nil {
			return nil, fmt.Errorf("%s: cannot create the store: %w", path, err)
		}
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	case fi.IsDir():
		return nil, fmt.Errorf("%s: is a directory, not a store file", path)
	case fi.Size() == 0 && !a.create:
		return nil, fmt.Errorf("%s: the file is empty, not an snkv store (pass --create to make it one)", path)
	}
	fresh := missing || fi.Size() == 0 // a store is made here, with --create
	if !fresh {
		// The one look at the file's bytes, before any store is open.
		noTables, err := inspect(path, a.adopt)
		switch {
		case err != nil:
			return nil, err
		case noTables && !a.create && !a.adopt:
			// Open would make it a store: only when asked to.
			return nil, fmt.Errorf("%s: a SQLite database without tables, not an snkv store (pass --create to make it one)", path)
		}
		fresh = noTables && a.create
	}
	if !missing && write {
		if err := checkWritable(path); err != nil {
			return nil, err
		}
	}
	if fresh {
		// --create: a new store, made read-write, then opened as asked.
		if err := a.newStoreSecret(path); err != nil {
			return nil, err
		}
		storesOpened.Store(true)
		db, err := kvstore.Open(path, a.options(false))
		if err != nil {
			return nil, fmt.Errorf("%s: cannot create the store: %s", path, stripPrefixes(err.Error()))
		}
		if write {
			return db, nil
		}
		if err := db.Close(); err != nil {
			return nil, err
		}
	}
	storesOpened.Store(true)
	return a.openUnlocked(path, a.options(!write), write)
}

// newStoreSecret refuses a secret flag for a store --create is about to
// make, unless the command encrypts it: a new store has no encryption.
func (a *app) newStoreSecret(path string) error {
	flag, err := a.secret.given()
	if err != nil || flag == "" || a.encrypting {
		return err
	}
	return usagef("%s: a new store is created without encryption, so %s does not apply ('snkv encrypt %s --create' creates an encrypted one)", path, flag, path)
}

// dirExists reports, as an error naming it, a missing directory of path.
func dirExists(path string) error {
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the directory %s does not exist", dir)
	case err != nil:
		return fmt.Errorf("the directory %s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// options returns the store options of the command. The file is read
// without a memory mapping (MmapSize -1): a command streams through the
// store once, which is as fast through reads (measured on a 40 MiB store:
// scan --json 0.52-0.74 s either way), and the pages it maps would add up
// to the mapping's size (256 MiB by default) to its resident memory (110
// MiB with the mapping, 22-26 MiB without, on that store).
func (a *app) options(readOnly bool) kvstore.Options {
	return kvstore.Options{ReadOnly: readOnly, Adopt: a.adopt && !readOnly, Clock: a.clock, MmapSize: -1, FileMode: a.fileMode, MaxValueSize: a.maxValue, BusyTimeout: a.busyTimeout}
}

// inspect reads the file's header and refuses what is not an snkv store
// (or, with adopt, a SQLite database to adopt) with a message naming what
// the file is. A file it cannot read is left to Open to report. noTables
// reports a SQLite database with no schema object at all (no table,
// view, index or trigger) and no snkv header, which Open would make a
// store, as it does an empty file; a database whose -wal holds content
// is left to Open (the store's header may be in it).
//
// It opens the file with os.Open, which is safe only while no store of
// this process has the file open: SQLite's locks are POSIX record locks,
// owned by the process, and closing any descriptor of the file drops all
// of them, so another process could then checkpoint or rebuild the WAL
// index under the open store. The command opens at most one store, after
// this look; storesOpened makes that order a checked invariant: once a
// store was opened, inspect reads nothing and leaves the verdict to Open
// (which reads the header through SQLite's own file layer).
func inspect(path string, adopt bool) (noTables bool, err error) {
	if storesOpened.Load() {
		return false, nil
	}
	hdr, err := readHeader(path)
	if err != nil || len(hdr) == 0 {
		return false, nil
	}
	n := len(hdr)
	if !bytes.HasPrefix(hdr, []byte(sqliteMagic)) {
		return false, fmt.Errorf("%s: not an snkv store: it is not a SQLite database (%s)", path, describeBytes(hdr))
	}
	if n < 100 {
		return false, fmt.Errorf("%s: not an snkv store: a truncated SQLite header (%d bytes)", path, n)
	}
	app := binary.BigEndian.Uint32(hdr[68:72])
	if app == 0 {
		return emptySchema(hdr) && !hasWAL(path), nil // a plain SQLite database: Open decides
	}
	if app == kvstore.ApplicationID {
		return false, nil
	}
	what, ok := knownApps[app]
	if !ok {
		what = fmt.Sprintf("a SQLite database of another application (application_id %#08x)", app)
	}
	if adopt {
		return false, fmt.Errorf("%s: not an snkv store: it is %s, which --adopt will not take over (its application_id marks it as another program's file)", path, what)
	}
	return false, fmt.Errorf("%s: not an snkv store: it is %s", path, what)
}

// emptySchema reports whether the first page of a SQLite file, whose
// first bytes are hdr, holds a schema table without any row: a leaf page
// of a table B-tree (type 13) with no cell, after the 100-byte header.
func emptySchema(hdr []byte) bool {
	return len(hdr) >= 105 && hdr[100] == 0x0d && hdr[103] == 0 && hdr[104] == 0
}

// hasWAL reports whether a -wal file with content is beside path.
func hasWAL(path string) bool {
	fi, err := os.Stat(path + "-wal")
	return err == nil && fi.Size() > 0
}

// readHeader returns the first 108 bytes of the file (fewer if it is
// shorter): the database header and the page header of the schema table,
// reading through a descriptor closed before it returns.
func readHeader(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	hdr := make([]byte, 108)
	n, err := io.ReadFull(f, hdr)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return hdr[:n], nil
}

// describeBytes guesses what a non-SQLite file is from its first bytes.
func describeBytes(b []byte) string {
	for _, m := range fileMagics {
		if bytes.HasPrefix(b, []byte(m.magic)) {
			return "it looks like " + m.what
		}
	}
	text := true
	for _, c := range b {
		if c < 0x09 || (c > 0x0d && c < 0x20) || c == 0x7f {
			text = false
			break
		}
	}
	if text {
		line, _, _ := bytes.Cut(b, []byte("\n"))
		if len(line) > 32 {
			line = line[:32]
		}
		return fmt.Sprintf("it looks like text: %q", string(line))
	}
	return fmt.Sprintf("it starts with %s", escape(b[:min(len(b), 16)]))
}

// checkWritable tells a write command why it cannot run on a file the user
// may not write, before SQLite would fall back to read-only. It asks the
// operating system (access(2) on Unix) without opening the file.
func checkWritable(path string) error {
	err := writable(path)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: cannot write to the store: permission denied (write commands need write access to the file; read commands still work on it)", path)
	}
	return fmt.Errorf("%s: cannot write to the store: %w", path, err)
}

// readOnlyCompanions explains a write refused by SQLite as read-only
// although the store file is writable: a -shm or -wal file beside it that
// the user may not write (a read-only open of the store while the file was
// read-only leaves them so). It returns nil when no such file is there.
func readOnlyCompanions(path string) error {
	var stale, owners []string
	for _, suffix := range []string{"-shm", "-wal"} {
		p := path + suffix
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if err := writable(p); err != nil {
			stale = append(stale, p)
			if o := ownedByOther(p); o != "" && !slices.Contains(owners, o) {
				owners = append(owners, o)
			}
		}
	}
	if len(stale) == 0 {
		return nil
	}
	who := "make it writable (chmod u+w " + strings.Join(stale, " ") + ")"
	if len(owners) > 0 {
		who = "its owner (" + strings.Join(owners, ", ") + ") can give you write access to it"
	}
	return fmt.Errorf("%s: cannot write to the store: %s beside it cannot be written by you (a read-only open of the store while its file was read-only leaves it so): %s, then run the command again; a -shm file may instead be deleted when no program has the store open", path, strings.Join(stale, " and "), who)
}

// explainOpen turns an error of kvstore.Open into a message that says what
// is wrong with the file and what to do.
func (a *app) explainOpen(path string, write bool, err error) error {
	switch {
	case errors.Is(err, kvstore.ErrNotStore):
		detail := err.Error()
		if _, after, ok := strings.Cut(detail, "not an snkv store: "); ok {
			detail = after
		}
		if strings.Contains(detail, "Options.Adopt") {
			detail = strings.Replace(detail, "set Options.Adopt to add snkv's tables beside them", "pass --adopt to a write command to add snkv's tables beside them", 1)
		}
		return fmt.Errorf("%s: not an snkv store: a SQLite database of another kind: %s", path, detail)
	case errors.Is(err, kvstore.ErrCorrupt):
		if a.checking {
			return damagedError{err: fmt.Errorf("%s: the file is damaged or not a database: %s (restore it from a backup)", path, strip(err)), final: true}
		}
		return damagedError{err: fmt.Errorf("%s: the file is damaged or not a database: %s ('snkv check %s' lists what SQLite finds; restore it from a backup)", path, strip(err), path), final: true}
	case errors.Is(err, kvstore.ErrVersion):
		return fmt.Errorf("%s: the store was written by a newer snkv: %s", path, strip(err))
	case errors.Is(err, kvstore.ErrReadOnly) && write:
		if cerr := readOnlyCompanions(path); cerr != nil {
			return cerr
		}
		return fmt.Errorf("%s: cannot write to the store: %s", path, strip(err))
	case errors.Is(err, kvstore.ErrCantOpen):
		if !write {
			return fmt.Errorf("%s: cannot open the store read-only: %s (read-only access to a WAL store needs its -shm file, or a writable directory)", path, strip(err))
		}
		return fmt.Errorf("%s: cannot open the store: %s", path, strip(err))
	case errors.Is(err, kvstore.ErrBusy):
		return fmt.Errorf("%s: the store is locked by another process: %s", path, strip(err))
	case errors.Is(err, kvstore.ErrIO):
		return fmt.Errorf("%s: the operating system failed to read or write the file (check the disk): %s", path, strip(err))
	}
	return fmt.Errorf("%s: %w", path, err)
}
