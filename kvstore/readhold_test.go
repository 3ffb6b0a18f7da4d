package kvstore_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// Tests of held read transactions (Options.ReadHold): a reader keeps its
// read transaction between calls only while nothing has committed, so every
// read still sees every commit completed before it, from any process, and a
// held transaction never keeps the WAL from being checkpointed for long.

const holdChildEnv = "SNKV_TEST_HOLD_CHILD" // the store path, in a child

// walFrame is the size of one WAL frame of a store with 4 KiB pages.
const walFrame = 4096 + 24

// holdChild is another process writing to the store on command.
type holdChild struct {
	t testing.TB
	*testutil.Child
}

// startHoldChild starts this test binary as a child process that opens the
// store at path and runs the commands it is sent (see TestHoldChild).
func startHoldChild(t *testing.T, path string) *holdChild {
	t.Helper()
	c := &holdChild{t, testutil.StartChild(t, "TestHoldChild", holdChildEnv+"="+path)}
	c.do("ping")
	return c
}

// do sends one command and waits until the child has carried it out (its
// commits are complete when do returns).
func (c *holdChild) do(command string) {
	c.t.Helper()
	require.NoError(c.t, c.try(command))
}

// try is do for any goroutine: it returns the failure.
func (c *holdChild) try(command string) error {
	if err := c.Send(command); err != nil {
		return err
	}
	line, err := c.Await(func(l string) bool { return l == "done "+command || strings.HasPrefix(l, "fail ") })
	if err == nil && strings.HasPrefix(line, "fail ") {
		err = fmt.Errorf("child: %s", line)
	}
	return err
}

// TestHoldChild is the body of the child of startHoldChild; run directly it
// does nothing. Commands: "ping"; "put K V" (one commit); "puts N" (N
// commits of 100-byte values under keys w/0..w/N-1).
func TestHoldChild(t *testing.T) {
	testutil.ChildOnly(t)
	path := os.Getenv(holdChildEnv)
	db, err := kvstore.Open(path, kvstore.Options{BusyTimeout: time.Minute})
	require.NoError(t, err)
	defer db.Close()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		line := in.Text()
		f := strings.Fields(line)
		var err error
		switch f[0] {
		case "ping":
		case "put":
			err = db.Put([]byte(f[1]), []byte(f[2]))
		case "puts":
			n, _ := strconv.Atoi(f[1])
			v := make([]byte, 100)
			for i := 0; i < n && err == nil; i++ {
				v[0] = byte(i)
				err = db.Put(fmt.Appendf(nil, "w/%06d", i), v)
			}
		default:
			err = fmt.Errorf("unknown command %q", line)
		}
		if err != nil {
			fmt.Printf("fail %s: %v\n", line, err)
			continue
		}
		fmt.Println("done " + line)
	}
}

func heldReads(t *testing.T, db *kvstore.Store) uint64 {
	t.Helper()
	st, err := db.Stats(context.Background())
	require.NoError(t, err)
	return st.HeldReads
}

// TestHeldReadsSeeOtherProcessCommits interleaves commits by another
// process with reads of every kind in this one, with a hold long enough
// that only the commit check can end a held transaction: each read after a
// commit must see it.
func TestHeldReadsSeeOtherProcessCommits(t *testing.T) {
	path := tempPath(t)
	db := openAt(t, path, kvstore.Options{ReadHold: time.Hour})
	require.NoError(t, db.Put(b("k"), b("v0")))
	require.NoError(t, db.Put(b("mine"), b("v0")))
	child := startHoldChild(t, path)
	ctx := context.Background()
	rounds := 40
	if testing.Short() {
		rounds = 15
	}
	for i := 1; i <= rounds; i++ {
		want := fmt.Sprintf("v%d", i-1)
		for range 3 { // the second and third reuse the held transaction
			v, err := db.Get(b("k"))
			require.NoError(t, err)
			require.Equal(t, want, string(v))
		}
		// The child commits: a new value of k and a new key n/<i>.
		child.do(fmt.Sprintf("put k v%d", i))
		child.do(fmt.Sprintf("put n/%03d x", i))
		want = fmt.Sprintf("v%d", i)

		v, err := db.Get(b("k"))
		require.NoError(t, err)
		require.Equal(t, want, string(v), "round %d: Get after the other process committed", i)
		ok, err := db.Exists(b(fmt.Sprintf("n/%03d", i)))
		require.NoError(t, err)
		require.True(t, ok, "round %d: Exists", i)
		require.Len(t, collect(t, db.Prefix(b("n/"))), i, "round %d: prefix scan", i)
		require.NoError(t, db.View(ctx, func(tx *kvstore.Tx) error {
			v, err := tx.Get(b("k"))
			require.NoError(t, err)
			require.Equal(t, want, string(v), "round %d: read-only transaction", i)
			return nil
		}))
		n, err := db.Count()
		require.NoError(t, err)
		require.EqualValues(t, i+2, n, "round %d: Count", i) // k, mine, n/*

		// A commit of this process is seen as well.
		require.NoError(t, db.Put(b("mine"), b(want)))
		v, err = db.Get(b("mine"))
		require.NoError(t, err)
		require.Equal(t, want, string(v))
	}
	require.Positive(t, heldReads(t, db), "no read reused a held transaction: the test proves nothing")
}

// TestHeldSnapshotsStayFixed checks that a cursor and a read-only
// transaction, begun on a held read transaction or a new one, keep their
// snapshot while another process commits, and that reads begun after see
// the commits.
func TestHeldSnapshotsStayFixed(t *testing.T) {
	path := tempPath(t)
	db := openAt(t, path, kvstore.Options{ReadHold: time.Hour})
	for i := range 5 {
		require.NoError(t, db.Put(b(fmt.Sprintf("s/%d", i)), b("old")))
	}
	child := startHoldChild(t, path)
	ctx := context.Background()
	for round := range 6 {
		// Reads that leave held transactions behind.
		_, err := db.Get(b("s/0"))
		require.NoError(t, err)
		// A cursor takes its snapshot when first positioned, not when
		// made, even on a held transaction.
		late, err := db.Cursor(kvstore.IterOptions{Prefix: b("s/")})
		require.NoError(t, err)
		lateVal := fmt.Sprintf("late%d", round)
		child.do("put s/1 " + lateVal)
		require.True(t, late.Seek(b("s/1")))
		require.Equal(t, lateVal, string(late.Value()), "round %d: cursor made before a commit, positioned after", round)
		require.NoError(t, late.Close())
		old := collect(t, db.Prefix(b("s/")))

		cur, err := db.Cursor(kvstore.IterOptions{Prefix: b("s/")})
		require.NoError(t, err)
		require.True(t, cur.First())
		tx, err := db.Begin(ctx, false)
		require.NoError(t, err)

		val := fmt.Sprintf("new%d", round)
		child.do("put s/0 " + val)
		child.do("put s/2 " + val)
		child.do(fmt.Sprintf("put s/%d x", 5+round))

		// The cursor goes on in its snapshot.
		got := []kv{{string(cur.Key()), string(cur.Value())}}
		for cur.Next() {
			got = append(got, kv{string(cur.Key()), string(cur.Value())})
		}
		require.NoError(t, cur.Err())
		require.NoError(t, cur.Close())
		require.Equal(t, old, got, "round %d: cursor", round)
		// So does the transaction.
		v, err := tx.Get(b("s/2"))
		require.NoError(t, err)
		require.Equal(t, old[2].V, string(v), "round %d: read-only transaction", round)
		require.Equal(t, old, collect(t, tx.Prefix(b("s/"))))
		require.NoError(t, tx.Commit())

		// New reads see the commits.
		v, err = db.Get(b("s/2"))
		require.NoError(t, err)
		require.Equal(t, val, string(v), "round %d: Get after", round)
		require.Len(t, collect(t, db.Prefix(b("s/"))), len(old)+1, "round %d: scan after", round)
	}
}

// walSize returns the size of the store's -wal file.
func walSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path + "-wal")
	require.NoError(t, err)
	return fi.Size()
}

// holdReaders leaves n readers idle in the pool, each holding a read
// transaction: n goroutines read at once, then stop.
func holdReaders(t *testing.T, db *kvstore.Store, n int) {
	t.Helper()
	var start, wg sync.WaitGroup
	start.Add(1)
	for range n {
		wg.Go(func() {
			start.Wait()
			for range 50 {
				if _, err := db.Get(b("held")); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	start.Done()
	wg.Wait()
}

// writeLoop commits at least n single puts, and keeps going for at least
// d, so that timers due within d have run.
func writeLoop(t *testing.T, db *kvstore.Store, n int, d time.Duration) {
	t.Helper()
	v := make([]byte, 100)
	end := time.Now().Add(d)
	for i := 0; i < n || time.Now().Before(end); i++ {
		v[0] = byte(i)
		require.NoError(t, db.Put(fmt.Appendf(nil, "w/%06d", i%n), v))
	}
}

// walBound is the WAL's size bound, in frames, under a stream of lone
// commits at the default auto-checkpoint size (1,000 pages): 7/2 of it
// (a write transaction waits for a running checkpoint only there; it
// copies the WAL itself at 7/4 when none runs), plus a commit's frames.
const walBound = 3500 + 10

// TestHeldReadsDoNotGrowWAL writes steadily while readers that held read
// transactions sit idle: the WAL stays near the auto-checkpoint size
// (1000 pages). With a hold that never ends it does too: the automatic
// checkpoint ends the idle readers' transactions that the commits made
// stale (their next read could not use them), where they used to hold
// every pass up and the WAL grew past every commit.
func TestHeldReadsDoNotGrowWAL(t *testing.T) {
	const commits = 3000
	for _, c := range []struct {
		name string
		hold time.Duration
	}{
		{"default hold", 0},
		{"endless hold", time.Hour},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := tempPath(t)
			db := openAt(t, path, kvstore.Options{ReadHold: c.hold})
			require.NoError(t, db.Put(b("held"), b("x")))
			holdReaders(t, db, 4)
			require.Positive(t, heldReads(t, db))
			holdReaders(t, db, 4) // Stats ended one; hold them all again
			writeLoop(t, db, commits, 200*time.Millisecond)
			require.Less(t, walSize(t, path), int64(walBound*walFrame), "the WAL grew past its bound")
		})
	}
}

// TestHeldReadsDoNotGrowWALOfOtherProcess: readers of this process sit
// idle holding read transactions while another process writes; the sweep
// ends them, and the writer's automatic checkpoints keep its WAL bounded.
func TestHeldReadsDoNotGrowWALOfOtherProcess(t *testing.T) {
	path := tempPath(t)
	db := openAt(t, path, kvstore.Options{})
	require.NoError(t, db.Put(b("held"), b("x")))
	child := startHoldChild(t, path)
	holdReaders(t, db, 4)
	child.do("puts 3000")
	require.Less(t, walSize(t, path), int64(walBound*walFrame), "the other process's WAL grew past its bound")
	// Reads see the other process's last commit.
	ok, err := db.Exists(b("w/002999"))
	require.NoError(t, err)
	require.True(t, ok)
}

// TestCheckpointEndsHeldReads: an explicit checkpoint is not held up by
// idle readers that hold read transactions, however long the hold.
func TestCheckpointEndsHeldReads(t *testing.T) {
	path := tempPath(t)
	db := openAt(t, path, kvstore.Options{ReadHold: time.Hour, BusyTimeout: 50 * time.Millisecond})
	require.NoError(t, db.Put(b("held"), b("x")))
	holdReaders(t, db, 3)
	writeLoop(t, db, 100, 0)
	res, err := db.Checkpoint(context.Background(), kvstore.CheckpointTruncate)
	require.NoError(t, err)
	require.False(t, res.Busy, "idle held readers blocked the checkpoint")
	require.Zero(t, walSize(t, path))
}

// TestReadOptionsOff: with the mapping and holds turned off, on
// rollback-journal stores (where no transaction is held), and on in-memory
// stores (WAL stores like a file's, which may hold one), reads work and see
// every commit.
func TestReadOptionsOff(t *testing.T) {
	file := func(t *testing.T) string { return tempPath(t) }
	for _, c := range []struct {
		name string
		path func(t *testing.T) string
		opts kvstore.Options
		hold bool // read transactions may be held
	}{
		{"mmap and hold off", file, kvstore.Options{MmapSize: -1, ReadHold: -1}, false},
		{"small mmap", file, kvstore.Options{MmapSize: 64 << 10}, true},
		{"rollback journal", file, kvstore.Options{Journal: kvstore.JournalDelete}, false},
		{"memory", func(*testing.T) string { return "" }, kvstore.Options{}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openAt(t, c.path(t), c.opts)
			for i := range 3 {
				v := b(fmt.Sprint(i))
				require.NoError(t, db.Put(b("k"), v))
				got, err := db.Get(b("k"))
				require.NoError(t, err)
				require.Equal(t, v, got)
				require.Equal(t, []kv{{"k", string(v)}}, collect(t, db.All()))
			}
			if !c.hold {
				require.Zero(t, heldReads(t, db))
			}
		})
	}
}

func TestReadOptionsInvalid(t *testing.T) {
	for _, o := range []kvstore.Options{{MmapSize: -2}, {ReadHold: -2}} {
		_, err := kvstore.Open(tempPath(t), o)
		require.ErrorIs(t, err, kvstore.ErrInvalidOption)
	}
}
