package tests

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A LiteFS cluster on one machine for the replica tests: a primary and a
// replica, each its own litefs process with its own FUSE mount and data
// directory, talking over 127.0.0.1 with a static lease (the primary is
// fixed, no election). docs/replication.md gives the same configuration.

// liteFSVersion is the LiteFS release the tests were written against;
// scripts/install-litefs.sh installs it.
const liteFSVersion = "v0.5.14"

// liteFSBinary returns the litefs program to run, or skips the test with the
// reason it cannot run here: no /dev/fuse (or no permission to open it), no
// fusermount3 (Debian's fuse3), no litefs (SNKV_LITEFS, the PATH, or
// $GOPATH/bin). make test-long installs the last two under CI=true.
func liteFSBinary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("the LiteFS tests run in the long suite (make test-long)")
	}
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("LiteFS needs FUSE: cannot open /dev/fuse: %v", err)
	}
	_ = f.Close()
	if _, err := exec.LookPath("fusermount3"); err != nil {
		t.Skipf("LiteFS needs fusermount3 (Debian package fuse3; make test-long installs it under CI=true): %v", err)
	}
	if p := os.Getenv("SNKV_LITEFS"); p != "" {
		return p
	}
	if p, err := exec.LookPath("litefs"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for _, dir := range filepath.SplitList(strings.TrimSpace(string(out))) {
			p := filepath.Join(dir, "bin", "litefs")
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	t.Skipf("litefs %s is not installed (SNKV_LITEFS, the PATH, $GOPATH/bin): run scripts/install-litefs.sh", liteFSVersion)
	return ""
}

// liteNode is one litefs process and its directories.
type liteNode struct {
	t       testing.TB
	bin     string
	name    string
	mount   string // the FUSE mount: the application's files live here
	data    string // LiteFS's own data directory
	config  string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
}

// liteCluster is a primary and one replica.
type liteCluster struct {
	primary, replica *liteNode
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startLiteCluster starts a primary and a replica under a fresh temporary
// directory and stops them (unmounting their mounts) at the end of the test.
func startLiteCluster(t testing.TB) *liteCluster {
	t.Helper()
	bin := liteFSBinary(t)
	dir := t.TempDir()
	pPort, rPort := freePort(t), freePort(t)
	primaryURL := fmt.Sprintf("http://127.0.0.1:%d", pPort)
	c := &liteCluster{
		primary: newLiteNode(t, bin, dir, "primary", pPort, true, primaryURL),
		replica: newLiteNode(t, bin, dir, "replica", rPort, false, primaryURL),
	}
	// Cleanups run last-registered first: the nodes stop before t.TempDir
	// removes their directories.
	t.Cleanup(func() {
		c.replica.stop(syscall.SIGTERM)
		c.primary.stop(syscall.SIGTERM)
	})
	c.primary.start()
	c.replica.start()
	return c
}

// newLiteNode writes the configuration of one node. Both nodes name the
// primary in their static lease: the primary with candidate true, the
// replica with candidate false.
func newLiteNode(t testing.TB, bin, dir, name string, port int, primary bool, primaryURL string) *liteNode {
	t.Helper()
	n := &liteNode{t: t, bin: bin, name: name,
		mount:   filepath.Join(dir, name, "mnt"),
		data:    filepath.Join(dir, name, "data"),
		config:  filepath.Join(dir, name, "litefs.yml"),
		logPath: filepath.Join(dir, name, "litefs.log"),
	}
	require.NoError(t, os.MkdirAll(n.mount, 0o755))
	require.NoError(t, os.MkdirAll(n.data, 0o755))
	cfg := fmt.Sprintf(`fuse:
  dir: %q
data:
  dir: %q
http:
  addr: "127.0.0.1:%d"
lease:
  type: static
  hostname: primary
  advertise-url: %q
  candidate: %t
tracing:
  enabled: false
`, n.mount, n.data, port, primaryURL, primary)
	require.NoError(t, os.WriteFile(n.config, []byte(cfg), 0o644))
	return n
}

// start runs litefs and waits until its FUSE mount is up.
func (n *liteNode) start() {
	t := n.t
	t.Helper()
	logf, err := os.OpenFile(n.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(t, err)
	n.cmd = exec.Command(n.bin, "mount", "-config", n.config)
	n.cmd.Stdout, n.cmd.Stderr = logf, logf
	require.NoError(t, n.cmd.Start())
	n.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) {
		_ = cmd.Wait()
		_ = logf.Close()
		close(exited)
	}(n.cmd, n.exited)
	deadline := time.Now().Add(30 * time.Second)
	for !mounted(n.mount) {
		select {
		case <-n.exited:
			t.Fatalf("litefs %s exited before mounting:\n%s", n.name, n.log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("litefs %s did not mount %s within 30s:\n%s", n.name, n.mount, n.log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop sends sig to litefs, waits for it to exit and unmounts its mount if
// it is still there (litefs cannot unmount while files on it are open).
func (n *liteNode) stop(sig syscall.Signal) {
	if n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Signal(sig)
	select {
	case <-n.exited:
	case <-time.After(30 * time.Second):
		_ = n.cmd.Process.Kill()
		<-n.exited
	}
	n.cmd = nil
	if mounted(n.mount) {
		if out, err := exec.Command("fusermount3", "-u", "-z", n.mount).CombinedOutput(); err != nil {
			n.t.Errorf("fusermount3 -u -z %s: %v: %s", n.mount, err, out)
		}
	}
}

// log returns what litefs has written to its log so far.
func (n *liteNode) log() string {
	b, _ := os.ReadFile(n.logPath)
	return string(b)
}

// path returns the path of a database on the node's mount.
func (n *liteNode) path(db string) string { return filepath.Join(n.mount, db) }

// mounted reports whether dir is a mount point, from /proc/self/mountinfo.
func mounted(dir string) bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 4 && f[4] == dir {
			return true
		}
	}
	return false
}

// litePos is a database's replication position as LiteFS publishes it in
// the "-pos" file beside the database: the last transaction ID applied and
// the checksum of the database after it.
type litePos struct {
	TXID     uint64
	Checksum string
}

// readPos reads the position of database db on node n; ok is false while
// the database does not exist there yet.
func readPos(n *liteNode, db string) (p litePos, ok bool, err error) {
	b, err := os.ReadFile(n.path(db) + "-pos")
	if errors.Is(err, os.ErrNotExist) {
		return p, false, nil
	}
	if err != nil {
		return p, false, err
	}
	s := strings.TrimSpace(string(b))
	txid, sum, found := strings.Cut(s, "/")
	if !found {
		return p, false, fmt.Errorf("unexpected -pos content %q", s)
	}
	if _, err := fmt.Sscanf(txid, "%x", &p.TXID); err != nil {
		return p, false, fmt.Errorf("unexpected -pos content %q: %w", s, err)
	}
	p.Checksum = sum
	return p, true, nil
}

// waitPos waits until node n has applied transaction target.TXID of db (or
// a later one) and returns how long that took; it fails the test after
// timeout.
func waitPos(t testing.TB, n *liteNode, db string, target litePos, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		p, ok, err := readPos(n, db)
		require.NoError(t, err)
		if ok && p.TXID >= target.TXID {
			if p.TXID == target.TXID {
				require.Equal(t, target.Checksum, p.Checksum, "the same transaction with another checksum")
			}
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			t.Fatalf("%s: %s at %+v, not %+v after %v\n%s", n.name, db, p, target, timeout, n.log())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
