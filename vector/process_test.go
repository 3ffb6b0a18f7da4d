package vector_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/internal/vectest"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/stretchr/testify/require"
)

// The child processes of these tests are this test binary, run with
// VECTOR_CHILD set to what to do (testutil.NoTestCommand).
func TestMain(m *testing.M) {
	if mode := os.Getenv("VECTOR_CHILD"); mode != "" {
		if err := child(mode, os.Getenv("VECTOR_PATH")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const childDim = 16

func childSet() *vectest.Set { return vectest.Generate(vectest.Clustered(20000, 0, childDim)) }

// child runs one child mode against the store at path:
//   - "one": puts key(9999) and exits;
//   - "bulk": puts batches of 200 until killed, printing the number of
//     vectors committed after each commit;
//   - "single": the same, one vector per transaction.
func child(mode, path string) error {
	switch mode {
	case "open":
		return childOpenMain(path)
	case "grow":
		return childGrowMain(path)
	}
	db, err := kvstore.Open(path, kvstore.Options{})
	if err != nil {
		return err
	}
	ix, err := vector.Open(ctx, db, "v", vector.Options{Dim: childDim, Metric: vector.Cosine, PersistInterval: 20 * time.Millisecond, PersistStep: 500})
	if err != nil {
		return err
	}
	set := childSet()
	switch mode {
	case "one":
		if err := ix.Put(ctx, key(9999), set.Base[9999], vector.Put{}); err != nil {
			return err
		}
		return db.Close() // no ix.Close: what another process's commit leaves
	case "bulk", "single":
		batch := 200
		if mode == "single" {
			batch = 1
		}
		for lo := 0; lo < len(set.Base); lo += batch {
			var items []vector.Item
			for i := lo; i < lo+batch; i++ {
				items = append(items, vector.Item{Key: key(i), Vector: set.Base[i]})
			}
			if err := ix.PutBatch(ctx, items); err != nil {
				return err
			}
			fmt.Println(lo + batch)
		}
		select {}
	}
	return fmt.Errorf("unknown mode %q", mode)
}

func startChild(t *testing.T, mode, path string) (*exec.Cmd, *bufio.Scanner) {
	cmd := testutil.NoTestCommand(ctx, t, "VECTOR_CHILD="+mode, "VECTOR_PATH="+path)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, bufio.NewScanner(out)
}

// A vector another process commits is found by this process's next search.
func TestOtherProcessCommitIsSeen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.db")
	db := openStore(t, path, kvstore.Options{})
	ix := openIndex(t, db, "v", vector.Options{Dim: childDim, Metric: vector.Cosine})
	set := childSet()
	fill(t, ix, set.Base[:300], 300, nil)
	cmd, _ := startChild(t, "one", path)
	require.NoError(t, cmd.Wait())
	hits, err := ix.Search(ctx, set.Base[9999], vector.Query{K: 1})
	require.NoError(t, err)
	require.Equal(t, [][]byte{key(9999)}, [][]byte{hits[0].Key})
	n, err := ix.Count(ctx)
	require.NoError(t, err)
	require.Equal(t, 301, n)
}

// kill -9 while another process loads vectors, and while its background
// writer saves links: every vector it reported committed is there after
// reopening, and searches find them.
func TestKillDuringLoadLosesNoCommittedVector(t *testing.T) {
	if testing.Short() && raceEnabled {
		t.Skip("crash loop: too slow under -race in -short mode")
	}
	for _, mode := range []string{"bulk", "single"} {
		for round := range 2 {
			t.Run(fmt.Sprintf("%s/%d", mode, round), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "v.db")
				cmd, out := startChild(t, mode, path)
				committed := 0
				want := 1200 + 700*round
				if mode == "single" {
					want = 150 + 100*round
				}
				for committed < want && out.Scan() {
					committed, _ = strconv.Atoi(out.Text())
				}
				require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
				_ = cmd.Wait()
				start := time.Now()
				db := openStore(t, path, kvstore.Options{})
				ix := openIndex(t, db, "v", vector.Options{})
				took := time.Since(start)
				t.Logf("%s: killed after %d committed; reopened in %v", mode, committed, took)
				require.Less(t, took, 2*time.Second, "open, index ready, after kill -9")
				n, err := ix.Count(ctx)
				require.NoError(t, err)
				require.GreaterOrEqual(t, n, committed)
				set := childSet()
				for i := 0; i < committed; i += 37 {
					hits, err := ix.Search(ctx, set.Base[i], vector.Query{K: 1})
					require.NoError(t, err)
					require.True(t, bytes.Equal(key(i), hits[0].Key), "vector %d", i)
				}
				require.NoError(t, db.IntegrityCheck(ctx))
			})
		}
	}
}
