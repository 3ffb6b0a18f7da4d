package kvstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// Environment of a child process of TestMultiProcessWriters.
const (
	childPathEnv  = "SNKV_TEST_CHILD_PATH"
	childRangeEnv = "SNKV_TEST_CHILD_RANGE" // "<id>:<from>:<to>"
	childTxKeys   = 4                       // keys per transaction
)

// TestMultiProcessWriters starts two OS processes (this test binary again)
// that write disjoint key ranges of one store file in many small
// transactions while this process reads it, then checks that no write was
// lost and that no child saw any error, not even ErrBusy: the busy timeout
// is generous.
func TestMultiProcessWriters(t *testing.T) {
	perChild := 400
	if testing.Short() {
		perChild = 160
	}
	path := tempPath(t)
	db := openAt(t, path, kvstore.Options{})
	require.NoError(t, db.Put(b("parent"), b("here")))

	ranges := [][2]int{{0, perChild}, {perChild, 2 * perChild}}
	type child struct {
		cmd *exec.Cmd
		out bytes.Buffer
	}
	var children []*child
	for id, r := range ranges {
		c := &child{cmd: testutil.ChildCommand(context.Background(), t, "TestMultiProcessChild",
			childPathEnv+"="+path, fmt.Sprintf("%s=%d:%d:%d", childRangeEnv, id, r[0], r[1]))}
		c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
		require.NoError(t, c.cmd.Start())
		children = append(children, c)
	}
	// Read while the children write: every value seen is whole.
	deadline := time.Now().Add(2 * time.Minute)
	for reads := 0; reads < 20 && time.Now().Before(deadline); reads++ {
		for e, err := range db.Prefix(b("mp/")) {
			require.NoError(t, err)
			require.Equal(t, "v"+strings.TrimPrefix(string(e.Key), "mp/"), string(e.Value))
		}
	}
	for id, c := range children {
		err := c.cmd.Wait()
		require.NoError(t, err, "child %d:\n%s", id, c.out.String())
		require.Contains(t, c.out.String(), "busy=0 ", "child %d saw ErrBusy:\n%s", id, c.out.String())
	}

	var want []kv
	for i := range 2 * perChild {
		k := fmt.Sprintf("%06d", i)
		want = append(want, kv{"mp/" + k, "v" + k})
	}
	require.Equal(t, want, collect(t, db.Prefix(b("mp/"))), "no write lost")
	v, err := db.Get(b("parent"))
	require.NoError(t, err)
	require.Equal(t, b("here"), v)
	require.NoError(t, db.IntegrityCheck(context.Background()))
}

// TestMultiProcessChild is the body of a child process of
// TestMultiProcessWriters; run directly it does nothing.
func TestMultiProcessChild(t *testing.T) {
	testutil.ChildOnly(t)
	path := os.Getenv(childPathEnv)
	var id, from, to int
	_, err := fmt.Sscanf(os.Getenv(childRangeEnv), "%d:%d:%d", &id, &from, &to)
	require.NoError(t, err)
	db, err := kvstore.Open(path, kvstore.Options{BusyTimeout: time.Minute})
	require.NoError(t, err)
	ctx := context.Background()
	busy := 0
	for i := from; i < to; {
		end := min(i+childTxKeys, to)
		err := db.Update(ctx, func(tx *kvstore.Tx) error {
			for j := i; j < end; j++ {
				k := fmt.Sprintf("%06d", j)
				if err := tx.Put([]byte("mp/"+k), []byte("v"+k)); err != nil {
					return err
				}
			}
			return nil
		})
		if errors.Is(err, kvstore.ErrBusy) {
			busy++ // documented: retry the transaction
			continue
		}
		require.NoError(t, err, "child %d, keys %d..%d", id, i, end)
		// Every other transaction also reads what the other child wrote.
		if i%(2*childTxKeys) == 0 {
			_, err := db.Count()
			require.NoError(t, err)
		}
		i = end
	}
	require.NoError(t, db.Close())
	fmt.Println("child " + strconv.Itoa(id) + " busy=" + strconv.Itoa(busy) + " ")
}
