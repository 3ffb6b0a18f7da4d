package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// An in-memory store (Config.Path "") is an ordinary WAL store whose file
// lives in a private directory of its own on a memory-backed file system,
// removed when the store is closed. SQLite's in-memory databases
// (":memory:", the memdb VFS) have no WAL: a reader there holds a lock that
// makes every commit wait for it, so an open cursor or read transaction
// stalled each write for the busy timeout and then failed it with ErrBusy,
// where a file store lets readers and the writer run together. A WAL file
// on tmpfs gives an in-memory store exactly a file store's rules: the same
// connections, snapshots, checkpoints and errors. It is never synced
// (synchronous=OFF: nothing of it outlives the process) and never
// checkpointed at Close (the files are removed instead). Where SQLite has
// it, the file is opened through its "unix-excl" VFS (memoryVFS), which
// keeps the WAL index in memory instead of a -shm file.

// memoryPrefix starts the name of every in-memory store's directory; the
// process id follows, then a random part.
const memoryPrefix = "snkv-mem-"

// memoryFile is the name of the store file in its directory.
const memoryFile = "store.db"

// memoryRootMinFree is the free space /dev/shm must have to hold in-memory
// stores. Containers often mount a small one (64 MiB under Docker's
// default), where a growing store would fail with ErrDiskFull; the
// temporary directory has the disk behind it instead.
const memoryRootMinFree = 1 << 30

// memoryStaleAge is how old a directory of a dead process must be before
// an in-memory Open removes it (see sweepMemoryDirs).
const memoryStaleAge = time.Minute

// memoryRoot returns the directory in-memory stores make their own
// directories in: /dev/shm on Linux when it is a tmpfs with at least
// memoryRootMinFree bytes free, else os.TempDir() ($TMPDIR, /tmp).
func memoryRoot() string {
	if dir := "/dev/shm"; memoryFS(dir, memoryRootMinFree) {
		return dir
	}
	return os.TempDir()
}

// memoryVFS returns the VFS in-memory stores open their file with:
// "unix-excl" where SQLite has it (every Unix), else "" (the default). It
// takes a process-wide exclusive lock on the file at the first read and
// from then on locks among the process's own connections in memory, and
// it keeps the WAL index in heap memory that those connections share
// instead of in a -shm file. No other process has any business with the
// file, and the fcntl calls the default VFS makes for every lock of the
// WAL index were a third of a single-put commit's CPU time (a commit took
// 18 µs of CPU with the default VFS, 12 µs with this one; docs/memory.md).
var memoryVFS = sync.OnceValue(func() string {
	const name = "unix-excl"
	f := &vfsFile{tls: libc.NewTLS()}
	defer f.free()
	if p := f.cstr(name); p != 0 && sqlite3.Xsqlite3_vfs_find(f.tls, p) != 0 {
		return name
	}
	return ""
})

var sweepOnce sync.Once

// newMemoryDir makes the private directory (mode 0700) of a new in-memory
// store and returns it. The first call of the process also removes what
// dead processes left behind (sweepMemoryDirs).
func newMemoryDir() (string, error) {
	root := memoryRoot()
	sweepOnce.Do(func() { sweepMemoryDirs(root, time.Now()) })
	dir, err := os.MkdirTemp(root, memoryPrefix+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return "", fmt.Errorf("snkv: open an in-memory store: %w: %w", ErrCantOpen, err)
	}
	return dir, nil
}

// sweepMemoryDirs removes the directories in root that in-memory stores of
// processes that are gone left behind (a process that exits without
// closing its stores, or is killed, leaves them; on tmpfs they hold memory
// until the machine restarts). A directory is removed only when all three
// say it is abandoned: the process its name records does not exist, it is
// older than memoryStaleAge, and no connection has its store file open
// (lockAlone). Any doubt leaves it.
func sweepMemoryDirs(root string, now time.Time) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	self := os.Getpid()
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), memoryPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid == self || processAlive(pid) {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < memoryStaleAge {
			continue
		}
		dir := filepath.Join(root, e.Name())
		file := filepath.Join(dir, memoryFile)
		if _, err := os.Lstat(file); err == nil {
			if !lockAlone(file, func() {}) {
				continue
			}
		}
		_ = os.RemoveAll(dir)
	}
}

// removeMemory removes an in-memory store's directory, once every
// connection to it is closed.
func (db *DB) removeMemory() {
	if db.memDir == "" {
		return
	}
	db.memOnce.Do(func() { _ = os.RemoveAll(db.memDir) })
}
