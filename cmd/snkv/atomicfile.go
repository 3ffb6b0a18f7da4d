package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// atomicFile is a file written under a temporary name beside its final
// one and renamed to it only once complete.
type atomicFile struct {
	f         *os.File
	path      string
	committed bool
}

// createAtomic creates the temporary file for path, with the command's
// file mode.
func (a *app) createAtomic(path string) (*atomicFile, error) {
	f, err := a.createTemp(path)
	if err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	return &atomicFile{f: f, path: path}, nil
}

// commit syncs and closes the temporary file and gives it its name,
// refusing to replace a file created there meanwhile.
func (t *atomicFile) commit() error {
	tmp := t.f.Name()
	if err := t.f.Sync(); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if err := t.f.Close(); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	// A hard link never replaces an existing file; where the file system
	// has no links, check and rename.
	err := os.Link(tmp, t.path)
	switch {
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("--out %s: the file was created by someone else during the export; the export is not written", t.path)
	case err != nil:
		if _, serr := os.Lstat(t.path); serr == nil {
			return fmt.Errorf("--out %s: the file was created by someone else during the export; the export is not written", t.path)
		}
		if err := os.Rename(tmp, t.path); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	default:
		_ = os.Remove(tmp)
	}
	t.committed = true
	return nil
}

// abort removes the temporary file unless it was committed.
func (t *atomicFile) abort() {
	if t.committed {
		return
	}
	_ = t.f.Close()
	_ = os.Remove(t.f.Name())
}
