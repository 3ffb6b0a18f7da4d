package timelog

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/snkv-go/snkv/kvstore"
)

// One writer per log. Inside a process a registry refuses a second writable
// Open of the same log; across processes an advisory lock on a sidecar file
// next to the database ("<db>.timelog-<hash of the name>.lock") does. The
// operating system releases that lock when its holder exits or dies, so a
// crashed writer never leaves a log locked; the file itself stays behind
// and is harmless.

var (
	heldMu sync.Mutex
	held   = map[string]bool{}
)

type writerLock struct {
	key  string
	file *os.File
}

// lockPath returns the sidecar lock file of log name of the database at
// dbPath.
func lockPath(dbPath, name string) string {
	sum := sha256.Sum256([]byte(name))
	return dbPath + ".timelog-" + hex.EncodeToString(sum[:8]) + ".lock"
}

// acquireLock takes the writer lock of log name of store (an in-memory
// store, whose Path is "", is identified by its address instead).
func acquireLock(store *kvstore.Store, name string) (*writerLock, error) {
	dbPath := store.Path()
	key := fmt.Sprintf("%p", store) + "\x00" + name
	if dbPath != "" {
		abs, err := filepath.Abs(dbPath)
		if err != nil {
			return nil, fmt.Errorf("timelog: lock %q: %w", name, err)
		}
		key = abs + "\x00" + name
	}
	heldMu.Lock()
	defer heldMu.Unlock()
	if held[key] {
		return nil, fmt.Errorf("%w: %q is open for writing in this process", ErrLocked, name)
	}
	l := &writerLock{key: key}
	if dbPath != "" {
		f, err := os.OpenFile(lockPath(dbPath, name), os.O_RDWR|os.O_CREATE, store.FileMode())
		if err != nil {
			return nil, fmt.Errorf("timelog: lock %q: %w", name, err)
		}
		if err := lockFile(f); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("%w: %q is open for writing in another process (%v)", ErrLocked, name, err)
		}
		l.file = f
	}
	held[key] = true
	return l, nil
}

func (l *writerLock) release() {
	if l == nil {
		return
	}
	heldMu.Lock()
	delete(held, l.key)
	heldMu.Unlock()
	if l.file != nil {
		_ = unlockFile(l.file)
		_ = l.file.Close()
	}
}
