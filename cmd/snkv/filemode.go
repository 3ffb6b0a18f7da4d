package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/snkv-go/snkv/kvstore"
)

// fileModeFlag is --file-mode: the permission bits, in octal, of every
// file the command creates (kvstore.Options.FileMode, and export files).
type fileModeFlag struct{ mode *os.FileMode }

func (f fileModeFlag) String() string {
	if f.mode == nil || *f.mode == 0 {
		return ""
	}
	return fmt.Sprintf("%#o", uint32(*f.mode))
}

func (f fileModeFlag) Set(s string) error {
	v, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		return fmt.Errorf("%q is not an octal mode such as 0600 or 0640", s)
	}
	m := os.FileMode(v)
	switch {
	case m&^os.ModePerm != 0:
		return fmt.Errorf("%s has bits other than permissions (at most 0777)", s)
	case m&0o600 != 0o600:
		return fmt.Errorf("%s does not let the owner read and write (0600 at least)", s)
	}
	*f.mode = m
	return nil
}

func (f fileModeFlag) Type() string { return "MODE" }

// createMode is the mode of a file the command creates itself (an
// export): --file-mode, else the library's default.
func (a *app) createMode() os.FileMode {
	if a.fileMode != 0 {
		return a.fileMode
	}
	return kvDefaultFileMode
}

// createTemp creates a new file beside path, named after it, with the
// command's file mode (narrowed by the umask, as every file the store
// creates is), for a file that gets its name only once complete.
func (a *app) createTemp(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	for range 100 {
		var r [6]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(filepath.Join(dir, "."+base+".tmp-"+hex.EncodeToString(r[:])), os.O_WRONLY|os.O_CREATE|os.O_EXCL, a.createMode())
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("cannot create a temporary file beside %s", path)
}

// kvDefaultFileMode is the mode of a file the command creates without
// --file-mode: the store's own default.
const kvDefaultFileMode = kvstore.DefaultFileMode
