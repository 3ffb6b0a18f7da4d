package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// role is a role run in this process.
type role struct {
	out    testutil.SyncBuffer
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// goRun runs snkv-feedsync with args in a goroutine.
func goRun(args ...string) *role {
	ctx, cancel := context.WithCancel(context.Background())
	r := &role{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- run(ctx, args, &r.out) }()
	return r
}

// stop ends the role as Ctrl-C does and returns its error (the first
// stop's, on a later call).
func (r *role) stop() error {
	r.once.Do(func() {
		r.cancel()
		r.err = <-r.done
	})
	return r.err
}

// startServer runs a server on a free address of the store at path and
// waits until it answers; it returns the role and its push URL.
func startServer(t *testing.T, path string) (*role, string) {
	t.Helper()
	addr := freeAddr(t)
	srv := goRun("server", "-store", path, "-listen", addr)
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/state?source=none")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	}, 10*time.Second, 5*time.Millisecond, "the server listens")
	return srv, "http://" + addr + "/push"
}

// fetchState asks the server at push for source's state; false if the
// server does not answer.
func fetchState(t *testing.T, push, source string) (state, bool) {
	t.Helper()
	var st state
	resp, err := http.Get(strings.TrimSuffix(push, "/push") + "/state?source=" + source)
	if err != nil {
		return st, false
	}
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
	return st, true
}

// waitCaughtUp waits until the server at push has applied dev's feed to
// its end and the device has saved the position the server reached.
func waitCaughtUp(t *testing.T, dev *kvstore.Store, push string) state {
	t.Helper()
	var st state
	var end changefeed.Position
	require.Eventually(t, func() bool {
		var err error
		end, err = changefeed.Now(context.Background(), dev) // the device may turn the feed on meanwhile
		require.NoError(t, err)
		var ok bool
		st, ok = fetchState(t, push, "feedsync")
		if !ok || !bytes.Equal(st.Epoch, end.Epoch) || st.Seq < end.Seq {
			return false
		}
		saved, err := changefeed.Load(context.Background(), dev, "feedsync")
		return err == nil && saved.Seq == st.Seq
	}, 20*time.Second, 5*time.Millisecond, "the server catches up")
	return st
}

// newDevice opens the device store device.db in dir, closed when the test
// ends, with its column family "items".
func newDevice(t *testing.T, dir string) (*kvstore.Store, *kvstore.ColumnFamily) {
	t.Helper()
	dev, err := kvstore.Open(filepath.Join(dir, "device.db"), kvstore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = dev.Close() })
	items, err := dev.CreateColumnFamily("items")
	require.NoError(t, err)
	return dev, items
}

// startPair starts a server on server.db in dir and returns it, its push
// URL, and the arguments of a device pushing device.db's "items" to it.
func startPair(t *testing.T, dir string) (*role, string, []string) {
	t.Helper()
	srv, push := startServer(t, filepath.Join(dir, "server.db"))
	return srv, push, []string{"device", "-store", filepath.Join(dir, "device.db"), "-push", push, "-cf", "items"}
}

// putN puts n keys under prefix in cf, each in its own transaction.
func putN(t *testing.T, cf *kvstore.ColumnFamily, prefix string, n int) {
	t.Helper()
	for i := range n {
		require.NoError(t, cf.Put(fmt.Appendf(nil, "%s%03d", prefix, i), fmt.Appendf(nil, "v%d", i)))
	}
}

// A device whose saved position the feed trimmed stops with a message that
// names the oldest change held and says how to start again; with
// -resnapshot it sends a snapshot and the server's rows are the device's
// again.
func TestTrimmedPositionStartsAgainFromSnapshot(t *testing.T) {
	dir := t.TempDir()
	dev, items := newDevice(t, dir)
	srv, push, device := startPair(t, dir)
	defer srv.stop()

	d := goRun(device...)
	putN(t, items, "a", 10)
	waitCaughtUp(t, dev, push)
	require.NoError(t, d.stop())
	require.Contains(t, d.out.String(), "device: stopped")

	// While the device is away, changes are written and the feed trimmed
	// past its saved position.
	require.NoError(t, changefeed.Enable(context.Background(), dev, "items", changefeed.Options{KeepValues: true, MaxCount: 2}))
	putN(t, items, "b", 10)
	require.NoError(t, items.Delete([]byte("a000")))
	n, err := changefeed.Trim(context.Background(), dev, 0, true)
	require.NoError(t, err)
	require.Positive(t, n)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out testutil.SyncBuffer
	err = run(ctx, device, &out)
	require.ErrorIs(t, err, changefeed.ErrCompacted, "the device said:\n%s", out.String())
	require.ErrorIs(t, err, errStartAgain)
	require.Contains(t, err.Error(), "oldest change held")
	require.Contains(t, err.Error(), "-resnapshot")

	d = goRun(append(device, "-resnapshot")...)
	st := waitCaughtUp(t, dev, push)
	require.NoError(t, d.stop())
	require.Equal(t, int64(2), st.Snapshots)
	assertSameRows(t, dev, srv, filepath.Join(dir, "server.db"))
}

// A server that lost its store refuses the device's next push (it has no
// position to apply it from); the device stops and says how to start
// again, and -resnapshot brings the new server store level.
func TestServerThatLostItsStoreAsksForSnapshot(t *testing.T) {
	dir := t.TempDir()
	dev, items := newDevice(t, dir)
	srvPath := filepath.Join(dir, "server.db")
	srv, push := startServer(t, srvPath)
	device := []string{"device", "-store", filepath.Join(dir, "device.db"), "-push", push, "-cf", "items"}
	d := goRun(device...)
	putN(t, items, "a", 5)
	waitCaughtUp(t, dev, push)
	require.NoError(t, d.stop())
	require.NoError(t, srv.stop())

	// The server starts again on an empty store.
	for _, suffix := range []string{"", "-wal", "-shm"} {
		require.NoError(t, removeIfExists(srvPath+suffix))
	}
	srv, push = startServer(t, srvPath)
	defer srv.stop()
	device[4] = push
	putN(t, items, "b", 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out testutil.SyncBuffer
	err := run(ctx, device, &out)
	require.ErrorIs(t, err, errStartAgain, "the device said:\n%s", out.String())
	require.Contains(t, err.Error(), "no position")

	d = goRun(append(device, "-resnapshot")...)
	waitCaughtUp(t, dev, push)
	require.NoError(t, d.stop())
	assertSameRows(t, dev, srv, srvPath)
}

// A device with no server to push to retries, and pushes once the server
// is there.
func TestDeviceRetriesUntilServerUp(t *testing.T) {
	dir := t.TempDir()
	dev, items := newDevice(t, dir)
	putN(t, items, "a", 5)
	addr := freeAddr(t)
	push := "http://" + addr + "/push"
	d := goRun("device", "-store", filepath.Join(dir, "device.db"), "-push", push, "-cf", "items")
	require.Eventually(t, func() bool { return strings.Count(d.out.String(), "push failed") >= 2 }, time.Minute, 5*time.Millisecond)
	srv := goRun("server", "-store", filepath.Join(dir, "server.db"), "-listen", addr)
	defer srv.stop()
	putN(t, items, "b", 5)
	waitCaughtUp(t, dev, push)
	require.NoError(t, d.stop())
	require.Equal(t, rows(t, dev, "items", ""), serverRows(t, filepath.Join(dir, "server.db")))
}

// Bad command lines fail with the usage; a bad push is refused, not
// retried.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	for _, args := range [][]string{nil, {"client"}, {"server"}, {"device", "-store", "x.db"}, {"server", "-store", "x.db", "extra"}, {"device", "-nope"}} {
		require.ErrorIs(t, run(ctx, args, &testutil.SyncBuffer{}), errUsage, "%q", args)
	}
	dir := t.TempDir()
	srv, push := startServer(t, filepath.Join(dir, "server.db"))
	defer srv.stop()
	for _, body := range []string{"{", `{"source":"s","cf":"items"}`, `{"source":"s","cf":"feedsync","epoch":"AQ=="}`, `{"source":"s","cf":"items","epoch":"AQ==","from":1,"to":2}`} {
		resp, err := http.Post(push, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		resp.Body.Close()
		require.Contains(t, []int{http.StatusBadRequest, http.StatusConflict}, resp.StatusCode, body)
	}
	// a push of changes of an unknown kind applies nothing
	snap := `{"source":"s","cf":"items","epoch":"AQ==","from":1,"to":1,"snapshot":true}`
	resp, err := http.Post(push, "application/json", strings.NewReader(snap))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	bad := `{"source":"s","cf":"items","epoch":"AQ==","from":1,"to":3,"changes":[{"seq":1,"op":"put","key":"YQ=="},{"seq":2,"op":"frobnicate","key":"YQ=="}]}`
	resp, err = http.Post(push, "application/json", strings.NewReader(bad))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	st, ok := fetchState(t, push, "s")
	require.True(t, ok)
	require.Equal(t, int64(1), st.Seq)
	require.Zero(t, st.Applied)
}

// assertSameRows stops the server and checks its column family equals the
// device's.
func assertSameRows(t *testing.T, dev *kvstore.Store, srv *role, srvPath string) {
	t.Helper()
	require.NoError(t, srv.stop())
	require.Equal(t, rows(t, dev, "items", ""), serverRows(t, srvPath))
}

// serverRows returns the rows of the server's items column family.
func serverRows(t *testing.T, path string) map[string]entry {
	t.Helper()
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	defer db.Close()
	return rows(t, db, "items", "")
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// A device that resends what the server applied (it died after the push
// and before saving its position: here its saved position is set back)
// changes nothing on the server: the server skips those changes, answers
// with its position, and applies only the new ones, once.
func TestResentBatchIsSkipped(t *testing.T) {
	dir := t.TempDir()
	dev, items := newDevice(t, dir)
	srv, push, device := startPair(t, dir)
	defer srv.stop()

	d := goRun(device...)
	waitCaughtUp(t, dev, push) // the snapshot (empty)
	putN(t, items, "a", 10)
	require.NoError(t, items.Delete([]byte("a003")))
	before := waitCaughtUp(t, dev, push)
	require.NoError(t, d.stop())
	require.Equal(t, int64(11), before.Applied)

	// Back to the position after the snapshot, as if none of the pushes'
	// answers had been saved; then a value changes under the server's feet
	// and a later change follows.
	require.NoError(t, dev.Update(context.Background(), func(tx *kvstore.Tx) error {
		return changefeed.Commit(tx, "feedsync", changefeed.Position{Epoch: before.Epoch, Seq: before.Since})
	}))
	require.NoError(t, items.Put([]byte("a005"), []byte("changed")))

	d = goRun(device...)
	after := waitCaughtUp(t, dev, push)
	require.NoError(t, d.stop())
	require.Equal(t, before.Applied+1, after.Applied, "only the new change is applied")
	require.Contains(t, srv.out.String(), "(11 already applied)")
	assertSameRows(t, dev, srv, filepath.Join(dir, "server.db"))
}

// Range deletes reach the server as the device made them: one with an
// empty end deletes nothing (before, JSON dropped the empty end and the
// server deleted to the end of the column family), one with no end
// deletes to the end.
func TestRangeDeleteEnds(t *testing.T) {
	dir := t.TempDir()
	dev, items := newDevice(t, dir)
	srv, push := startServer(t, filepath.Join(dir, "server.db"))
	defer srv.stop()
	d := goRun("device", "-store", filepath.Join(dir, "device.db"), "-push", push, "-cf", "items")
	waitCaughtUp(t, dev, push)
	putN(t, items, "a", 5)
	putN(t, items, "b", 5)
	ctx := context.Background()
	_, err := items.DeleteRange(ctx, []byte{}, []byte{})
	require.NoError(t, err)
	_, err = items.DeleteRange(ctx, []byte("a001"), []byte("a003"))
	require.NoError(t, err)
	_, err = items.DeleteRange(ctx, []byte("b003"), nil)
	require.NoError(t, err)
	st := waitCaughtUp(t, dev, push)
	require.NoError(t, d.stop())
	require.Equal(t, int64(13), st.Applied)
	want := rows(t, dev, "items", "")
	require.Len(t, want, 6)
	assertSameRows(t, dev, srv, filepath.Join(dir, "server.db"))
}
