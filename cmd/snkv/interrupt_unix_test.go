//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TestInterruptImport sends SIGINT to an import in the middle of its input
// (stdin stays open, so it cannot have finished) and checks that it stops
// cleanly: exit code 1, a report of what was committed, a sound store
// holding exactly whole batches (or nothing, all-or-nothing), and the
// column family present before untouched.
func TestInterruptImport(t *testing.T) {
	lines := 200_000
	if testing.Short() {
		lines = 40_000
	}
	for _, batch := range []int{0, 1000} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "store.db")
			db, err := kvstore.Open(path, kvstore.Options{})
			require.NoError(t, err)
			require.NoError(t, db.Put([]byte("keep"), []byte("me")))
			require.NoError(t, db.Close())

			cmd := exec.Command(snkvBin, "import", path, "--json", "--batch", fmt.Sprint(batch))
			cmd.Env = append(os.Environ(), nowEnv+"="+t0.Format(time.RFC3339))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			in, err := cmd.StdinPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())

			// Writing blocks while the import lags behind, so when the last
			// write returns the import is at most a pipe and a read-ahead
			// buffer behind, waiting for more input.
			w := bufio.NewWriterSize(in, 1<<16)
			for i := range lines {
				fmt.Fprintf(w, `{"cf":"big","key":"k%07d","value":"value %d","expire_ms":%d}`+"\n", i, i, t0.Add(time.Hour).UnixMilli()+int64(i))
			}
			require.NoError(t, w.Flush())
			require.NoError(t, cmd.Process.Signal(os.Interrupt))

			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(60 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatal("the import did not stop after SIGINT")
			}
			in.Close()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee)
			require.Equal(t, 1, ee.ExitCode(), stderr.String())
			require.Contains(t, stderr.String(), "interrupted")
			requireClean(t, result{stdout.String(), stderr.String(), ee.ExitCode()})

			var summary struct {
				Imported int64 `json:"imported"`
			}
			require.NoError(t, json.Unmarshal(stdout.Bytes(), &summary), stdout.String())

			db, err = kvstore.Open(path, kvstore.Options{ReadOnly: true, Clock: kvstore.NewManualClock(t0)})
			require.NoError(t, err)
			defer db.Close()
			require.NoError(t, db.IntegrityCheck(context.Background()))
			v, err := db.Get([]byte("keep"))
			require.NoError(t, err)
			require.Equal(t, []byte("me"), v)
			big, err := db.OpenColumnFamily("big")
			if batch == 0 {
				require.ErrorIs(t, err, kvstore.ErrNotFound, "an all-or-nothing import leaves nothing behind")
				require.Zero(t, summary.Imported)
				return
			}
			require.NoError(t, err)
			n, err := big.Count()
			require.NoError(t, err)
			require.Equal(t, summary.Imported, n, "the report says what was committed")
			require.Positive(t, n)
			require.Less(t, n, int64(lines))
			require.Zero(t, n%int64(batch), "whole batches only")
			// The committed keys are the first n lines, with their expiries.
			d, err := big.TTL([]byte(fmt.Sprintf("k%07d", n-1)))
			require.NoError(t, err)
			require.Equal(t, time.Hour+time.Duration(n-1)*time.Millisecond, d)
		})
	}
}
