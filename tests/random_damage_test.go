package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/stretchr/testify/require"
)

const damageEnvDir = "SNKV_DAMAGE_CHILD_DIR"

// TestDamageChild is the child process of TestRandomDamage: it classifies
// every damaged file of its directory and prints one line per file. Run
// directly, it does nothing.
func TestDamageChild(t *testing.T) {
	testutil.ChildOnly(t)
	dir := os.Getenv(damageEnvDir)
	raw, err := os.ReadFile(filepath.Join(dir, "model.json"))
	require.NoError(t, err)
	var model damageModel
	require.NoError(t, json.Unmarshal(raw, &model))
	files, err := filepath.Glob(filepath.Join(dir, "d*.db"))
	require.NoError(t, err)
	for _, f := range files {
		out, err := classifyDamage(f, model)
		if err != nil {
			fmt.Printf("FAIL %s: %v\n", filepath.Base(f), err)
			continue
		}
		fmt.Printf("ok %s: %s\n", filepath.Base(f), out)
	}
}

// TestRandomDamage damages copies of a real store at random (1 to 8 bytes
// changed, a quarter of them in the first page, an eighth also cut short at
// the end, as an interrupted copy leaves a file) and reads each one in a
// child process with a time limit: the child must not panic, must not
// hang, and no read may return a changed value without an error.
func TestRandomDamage(t *testing.T) {
	files, limit := 300, 3*time.Minute
	if testing.Short() {
		files, limit = 25, time.Minute
	}
	data, model := buildDamageStore(t, 12)
	dir := t.TempDir()
	raw, err := json.Marshal(model)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model.json"), raw, 0o600))
	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	var what []string
	for i := range files {
		bad := bytes.Clone(data)
		n := 1 + rng.IntN(8)
		var desc []string
		for range n {
			off := rng.IntN(len(bad))
			if rng.IntN(4) == 0 {
				off = rng.IntN(512)
			}
			bad[off] = byte(rng.UintN(256))
			desc = append(desc, fmt.Sprint(off))
		}
		if rng.IntN(8) == 0 {
			cut := 1 + rng.IntN(512)
			bad = bad[:len(bad)-cut]
			desc = append(desc, fmt.Sprintf("cut %d", cut))
		}
		name := fmt.Sprintf("d%04d.db", i)
		what = append(what, name+": "+strings.Join(desc, ","))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), bad, 0o600))
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	out, err := testutil.RunChild(ctx, t, "TestDamageChild", damageEnvDir+"="+dir)
	require.NoError(t, ctx.Err(), "the child hung (over %v)", limit)
	require.NoError(t, err, "the child failed (a panic?):\n%s", tail(out))
	counts := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "FAIL "):
			t.Errorf("%s\n(damage: %v)", line, what)
		case strings.HasPrefix(line, "ok "):
			_, o, _ := strings.Cut(line, ": ")
			counts[o]++
		}
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	require.Equal(t, files, total, "one result per file:\n%s", tail(out))
	t.Logf("%d damaged files: %v", files, counts)
}

func tail(b []byte) string {
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
