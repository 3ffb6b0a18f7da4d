package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
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

// argsEnv carries a child's command line (JSON) to TestChild.
const argsEnv = "SNKV_FEEDSYNC_ARGS"

// TestChild is the body of a child process: it runs the role its
// environment names until its stdin closes (its parent went away or asked
// it to stop, as Ctrl-C would).
func TestChild(t *testing.T) {
	testutil.ChildOnly(t)
	var args []string
	require.NoError(t, json.Unmarshal([]byte(os.Getenv(argsEnv)), &args))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	require.NoError(t, run(ctx, args, os.Stdout))
}

// startRole starts a child process running snkv-feedsync with args.
func startRole(t *testing.T, args ...string) *testutil.Child {
	t.Helper()
	b, err := json.Marshal(args)
	require.NoError(t, err)
	return testutil.StartChild(t, "TestChild", argsEnv+"="+string(b))
}

// freeAddr returns a loopback address no one listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// serverState reads source's state from the server's store.
func serverState(t *testing.T, db *kvstore.Store, source string) (state, bool) {
	t.Helper()
	cf, err := db.OpenColumnFamily(stateCF)
	if errors.Is(err, kvstore.ErrNotFound) {
		return state{}, false
	}
	require.NoError(t, err)
	v, err := cf.Get([]byte(source))
	if errors.Is(err, kvstore.ErrNotFound) {
		return state{}, false
	}
	require.NoError(t, err)
	var st state
	require.NoError(t, json.Unmarshal(v, &st))
	return st, true
}

// entry is a row as the comparison sees it: its value and whether it has a
// TTL.
type entry struct {
	Value  string
	HasTTL bool
}

// rows returns cf's live rows under prefix.
func rows(t *testing.T, db *kvstore.Store, cf string, prefix string) map[string]entry {
	t.Helper()
	h, err := db.OpenColumnFamily(cf)
	require.NoError(t, err)
	m := map[string]entry{}
	for e, err := range h.Prefix([]byte(prefix)) {
		require.NoError(t, err)
		d, err := h.TTL(e.Key)
		require.NoError(t, err)
		m[string(e.Key)] = entry{Value: string(e.Value), HasTTL: d > 0}
	}
	return m
}

// Writers commit random transactions to the device's store while the device
// pushes them to the server, both child processes, each SIGKILLed at random
// points and restarted. Once the writers stop and both sides catch up, the
// server's column family equals the device's under the prefix pushed, and
// the server applied each change of the device's feed exactly once: its
// count of applied changes equals the number of changes the feed holds after
// the snapshot it started from.
func TestKillEitherSideAndResume(t *testing.T) {
	rounds, writeFor := 12, 8*time.Second
	if testing.Short() {
		rounds, writeFor = 3, 1500*time.Millisecond
	}
	dir := t.TempDir()
	devPath, srvPath := filepath.Join(dir, "device.db"), filepath.Join(dir, "server.db")
	dev, err := kvstore.Open(devPath, kvstore.Options{})
	require.NoError(t, err)
	defer dev.Close()
	items, err := dev.CreateColumnFamily("items")
	require.NoError(t, err)
	for i := range 20 { // rows before the feed is on: the snapshot's
		require.NoError(t, items.Put(fmt.Appendf(nil, "item:%02d", i), []byte("before")))
	}

	addr := freeAddr(t)
	serverArgs := []string{"server", "-store", srvPath, "-listen", addr}
	deviceArgs := []string{"device", "-store", devPath, "-push", "http://" + addr + "/push", "-cf", "items", "-prefix", "item:", "-batch", "64"}
	srv := startRole(t, serverArgs...)
	srv.WaitLine(func(l string) bool { return strings.HasPrefix(l, "server: listening on ") })
	devc := startRole(t, deviceArgs...)
	devc.WaitLine(func(l string) bool { return strings.HasPrefix(l, "device: pushing items from ") })

	// The writers: puts, deletes, puts with a TTL (far off: nothing expires
	// during the test), TTLs cleared, range deletes, rollbacks, and keys
	// outside the prefix that the device does not push.
	var writes sync.Map
	writers := testutil.NewLoops()
	for w := range 2 {
		rng := rand.New(rand.NewPCG(uint64(w), 37))
		writers.Go(func(n int) bool {
			err := dev.Update(context.Background(), func(tx *kvstore.Tx) error {
				c := tx.CF(items)
				for range 1 + rng.IntN(5) {
					key := fmt.Appendf(nil, "item:%02d", rng.IntN(40))
					if rng.IntN(5) == 0 {
						key = fmt.Appendf(nil, "other:%02d", rng.IntN(40))
					}
					var err error
					switch op := rng.IntN(20); {
					case op < 10:
						err = c.Put(key, fmt.Appendf(nil, "w%d-%d", w, n))
					case op < 13:
						err = c.Delete(key)
					case op < 16:
						err = c.PutTTL(key, fmt.Appendf(nil, "ttl%d-%d", w, n), time.Hour)
					case op < 17:
						err = c.Persist(key)
					case op < 18:
						err = c.Expire(key, 2*time.Hour)
					default:
						lo := rng.IntN(40)
						_, err = c.DeleteRange(context.Background(), fmt.Appendf(nil, "item:%02d", lo), fmt.Appendf(nil, "item:%02d", lo+3))
					}
					if err != nil && !errors.Is(err, kvstore.ErrNotFound) {
						return err
					}
				}
				if rng.IntN(10) == 0 {
					return errRollback
				}
				return nil
			})
			if err != nil && !errors.Is(err, errRollback) {
				writes.Store("error", err)
				return false
			}
			time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond)
			return true
		})
	}

	// The killer: SIGKILL one side at a random point, restart it a little
	// later, while the writers write.
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	t.Logf("seed %d", rng.Uint64())
	deadline := time.Now().Add(writeFor)
	for i := 0; i < rounds || time.Now().Before(deadline); i++ {
		time.Sleep(time.Duration(50+rng.IntN(250)) * time.Millisecond)
		if rng.IntN(2) == 0 {
			srv.Kill()
			time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
			srv = startRole(t, serverArgs...)
		} else {
			devc.Kill()
			time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
			devc = startRole(t, deviceArgs...)
		}
	}
	writers.Stop()
	if err, bad := writes.Load("error"); bad {
		require.NoError(t, err.(error), "a writer")
	}
	// A last change under the prefix: once the server is past it, it has
	// every change before it.
	require.NoError(t, items.Put([]byte("item:end"), []byte("end")))
	end, err := changefeed.Now(context.Background(), dev)
	require.NoError(t, err)

	srvDB, err := kvstore.Open(srvPath, kvstore.Options{})
	require.NoError(t, err)
	defer srvDB.Close()
	var st state
	require.Eventually(t, func() bool {
		s, ok := serverState(t, srvDB, "feedsync")
		st = s
		return ok && s.Seq >= end.Seq
	}, 2*time.Minute, 20*time.Millisecond, "the server catches up with the device")
	// Both end cleanly when asked (as on Ctrl-C).
	lines, err := devc.Wait()
	require.NoError(t, err)
	require.Contains(t, lines, "device: stopped")
	lines, err = srv.Wait()
	require.NoError(t, err)
	require.Contains(t, lines, "server: stopped")

	st, ok := serverState(t, srvDB, "feedsync")
	require.True(t, ok)
	require.Equal(t, end.Epoch, st.Epoch)
	require.GreaterOrEqual(t, st.Snapshots, int64(1))
	want := rows(t, dev, "items", "item:")
	require.Equal(t, want, rows(t, srvDB, "items", ""))
	require.Contains(t, want, "item:end")

	// Exactly once: the changes the feed holds under the prefix from the
	// snapshot the server started from, each applied once.
	r, err := changefeed.NewReader(context.Background(), dev, changefeed.Position{Epoch: st.Epoch, Seq: st.Since},
		changefeed.ReaderOptions{Filter: changefeed.Filter{CF: "items", Prefix: []byte("item:")}})
	require.NoError(t, err)
	defer r.Close()
	var held int64
	for {
		chs, err := r.Read(context.Background())
		require.NoError(t, err)
		if len(chs) == 0 {
			break
		}
		held += int64(len(chs))
	}
	require.Equal(t, held, st.Applied, "changes applied by the server")
	t.Logf("%d changes pushed since the last snapshot (%d snapshots), %d rows", held, st.Snapshots, len(want))
}

var errRollback = errors.New("roll back")
