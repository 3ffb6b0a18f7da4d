package changelog

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// fuseMagic is the statfs type of a FUSE file system (LiteFS): writes
// made by the daemon behind it raise no inotify event, so its readers
// keep polling.
const fuseMagic = 0x65735546

// walWatch tells the waiting readers of one database file that a process
// wrote its WAL: every commit of any process on this machine writes its
// frames there, so an idle reader needs no timer. One per file in a
// process, shared by its readers, closed with the last (see watchWAL).
type walWatch struct {
	key  string
	refs int // guarded by watches.mu
	f    *os.File
	name string // the WAL's base name

	mu sync.Mutex
	ch chan struct{}
}

var watches struct {
	mu sync.Mutex
	m  map[string]*walWatch
}

// watchWAL returns the watch of the WAL of the database at path, or nil
// when there is none to rely on (not Linux, a FUSE or unknown file
// system, inotify unavailable): the reader then polls. Release it with
// release.
func watchWAL(path string) *walWatch {
	if path == "" {
		return nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	watches.mu.Lock()
	defer watches.mu.Unlock()
	if w := watches.m[abs]; w != nil {
		w.refs++
		return w
	}
	dir := filepath.Dir(abs)
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil || st.Type == fuseMagic {
		return nil
	}
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	// The directory, not the file: a WAL deleted and made again (the
	// last connection of every process closed) is still seen.
	if _, err := syscall.InotifyAddWatch(fd, dir, syscall.IN_MODIFY|syscall.IN_CREATE|syscall.IN_MOVED_TO); err != nil {
		_ = syscall.Close(fd)
		return nil
	}
	w := &walWatch{key: abs, refs: 1, f: os.NewFile(uintptr(fd), "inotify"), name: filepath.Base(abs) + "-wal", ch: make(chan struct{})}
	if watches.m == nil {
		watches.m = make(map[string]*walWatch)
	}
	watches.m[abs] = w
	go w.run()
	return w
}

// changed returns a channel closed at the next write of the WAL.
func (w *walWatch) changed() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ch
}

func (w *walWatch) fire() {
	w.mu.Lock()
	close(w.ch)
	w.ch = make(chan struct{})
	w.mu.Unlock()
}

// run reads the events until the watch is closed; the file is pollable,
// so the goroutine waits in the runtime's poller, without a thread or a
// timer.
func (w *walWatch) run() {
	buf := make([]byte, 64*(syscall.SizeofInotifyEvent+syscall.NAME_MAX+1))
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			if errors.Is(err, os.ErrClosed) {
				return
			}
			w.fire() // unknown: let the readers look
			// and do not spin on an error that stays
			time.Sleep(10 * time.Millisecond)
			continue
		}
		hit := false
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			end := off + syscall.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&syscall.IN_Q_OVERFLOW != 0 {
				hit = true
			} else if ev.Len > 0 && end <= n {
				nm := buf[off+syscall.SizeofInotifyEvent : end]
				for i, c := range nm {
					if c == 0 {
						nm = nm[:i]
						break
					}
				}
				if string(nm) == w.name {
					hit = true
				}
			}
			off = end
		}
		if hit {
			w.fire()
		}
	}
}

// release drops one reference; the last closes the watch.
func (w *walWatch) release() {
	if w == nil {
		return
	}
	watches.mu.Lock()
	w.refs--
	last := w.refs == 0
	if last {
		delete(watches.m, w.key)
	}
	watches.mu.Unlock()
	if last {
		_ = w.f.Close()
	}
}
