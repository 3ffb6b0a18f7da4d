package tests

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// The change feed's model check (issue #37): writer processes commit random
// transactions to a column family with a feed while consumer processes
// apply its changes, each change and the consumer's saved position in one
// transaction, and the test SIGKILLs writers and consumers at random points
// and starts them again. When the writers are gone and the consumers have
// caught up:
//   - the feed numbers its changes 1, 2, 3, … with no gap, each
//     transaction's changes together and in order, and replaying it gives
//     exactly the column family's rows (no uncommitted change, none lost);
//   - every consumer applied every change its filter passes exactly once, in
//     order, so what it built equals the rows under its prefix.
const (
	modelEnvPath   = "SNKV_MODEL_PATH"
	modelEnvRole   = "SNKV_MODEL_ROLE" // "w1".."w3": a writer; a consumer's name otherwise
	modelEnvSeed   = "SNKV_MODEL_SEED"
	modelEnvPrefix = "SNKV_MODEL_PREFIX"
	modelCF        = "m"
	modelKeys      = 40 // keys a writer works on, under its own prefix
)

// modelConsumers are the consumers: a name and the prefix its filter passes.
var modelConsumers = map[string]string{"all": "", "one": "w1/"}

// TestChangeFeedModelChild is a writer or consumer of the model check; run
// directly, it does nothing.
func TestChangeFeedModelChild(t *testing.T) {
	seed := startChild(t, modelEnvSeed)
	db, err := kvstore.Open(os.Getenv(modelEnvPath), kvstore.Options{BusyTimeout: time.Minute})
	if err == nil {
		role := os.Getenv(modelEnvRole)
		if role[0] == 'w' {
			err = modelWrite(db, role+"/", rand.New(rand.NewPCG(seed, 37)))
		} else {
			crashSay("consuming")
			err = modelConsume(context.Background(), db, role, []byte(os.Getenv(modelEnvPrefix)), nil)
		}
	}
	fmt.Fprintf(os.Stderr, "model child: %v\n", err)
	os.Exit(3)
}

// modelWrite commits random transactions under prefix until killed: puts,
// deletes, TTL puts, range deletes, some rolled back, some autocommit.
func modelWrite(db *kvstore.Store, prefix string, r *rand.Rand) error {
	ctx := context.Background()
	cf, err := db.OpenColumnFamily(modelCF)
	if err != nil {
		return err
	}
	key := func() []byte { return fmt.Appendf(nil, "%s%02d", prefix, r.IntN(modelKeys)) }
	errRollback := errors.New("rolled back on purpose")
	crashSay("writing")
	for n := 0; ; n++ {
		val := fmt.Appendf(nil, "%s#%d", prefix, n)
		switch r.IntN(10) {
		case 0:
			err = cf.Put(key(), val)
		case 1:
			if err = cf.Delete(key()); errors.Is(err, kvstore.ErrNotFound) {
				err = nil
			}
		default:
			rollback := r.IntN(8) == 0
			err = db.Update(ctx, func(tx *kvstore.Tx) error {
				c := tx.CF(cf)
				for range 1 + r.IntN(6) {
					var err error
					switch r.IntN(10) {
					case 0, 1:
						err = c.Delete(key())
					case 2:
						err = c.PutTTL(key(), val, time.Hour)
					case 3:
						lo, hi := key(), key()
						if bytes.Compare(lo, hi) > 0 {
							lo, hi = hi, lo
						}
						if !bytes.Equal(lo, hi) {
							_, err = c.DeleteRange(ctx, lo, hi)
						}
					default:
						err = c.Put(key(), val)
					}
					if err != nil && !errors.Is(err, kvstore.ErrNotFound) {
						return err
					}
				}
				if rollback {
					return errRollback
				}
				return nil
			})
			if errors.Is(err, errRollback) {
				err = nil
			}
		}
		if err != nil {
			return err
		}
	}
}

// modelApplied is the column family where consumer name builds its copy of
// the rows, and modelLog the one where it notes each sequence it applied.
func modelApplied(name string) string { return "applied_" + name }
func modelLog(name string) string     { return "log_" + name }

// modelConsume applies the feed's changes under prefix, from consumer
// name's saved position, one transaction for each change with the position
// after it. With until nil it runs until killed; otherwise it stops at the
// position until.
func modelConsume(ctx context.Context, db *kvstore.Store, name string, prefix []byte, until *changefeed.Position) error {
	applied, err := db.OpenColumnFamily(modelApplied(name))
	if err != nil {
		return err
	}
	logCF, err := db.OpenColumnFamily(modelLog(name))
	if err != nil {
		return err
	}
	from, err := changefeed.Load(ctx, db, name)
	if err != nil && !errors.Is(err, changefeed.ErrNotFound) {
		return err
	}
	r, err := changefeed.NewReader(ctx, db, from, changefeed.ReaderOptions{
		Filter: changefeed.Filter{CF: modelCF, Prefix: prefix},
		Poll:   time.Millisecond,
	})
	if err != nil {
		return err
	}
	defer r.Close()
	// A bounded wait lets the loop see the position reach until past the
	// skipped changes. It doubles each time one ends with the position
	// where it was: a page read through SQL of a long backlog can take
	// longer than the first bound under the race detector on a loaded
	// machine, and a wait that always ended first would never move.
	bound := 50 * time.Millisecond
	for until == nil || r.Position().Seq < until.Seq {
		wait, cancel := ctx, context.CancelFunc(func() {})
		if until != nil {
			wait, cancel = context.WithTimeout(ctx, bound)
		}
		at := r.Position().Seq
		c, err := r.Next(wait)
		cancel()
		if until != nil && errors.Is(err, context.DeadlineExceeded) {
			if r.Position().Seq == at {
				bound = min(2*bound, 10*time.Second)
			}
			continue // the skipped changes moved the position
		}
		if err != nil {
			return err
		}
		err = db.Update(ctx, func(tx *kvstore.Tx) error {
			a, l := tx.CF(applied), tx.CF(logCF)
			seq := binary.BigEndian.AppendUint64(nil, uint64(c.Seq))
			if ok, err := l.Exists(seq); err != nil || ok {
				if ok {
					err = l.Put(append([]byte("dup/"), seq...), nil)
				}
				if err != nil {
					return err
				}
			} else if err := l.Put(seq, binary.BigEndian.AppendUint64(nil, uint64(c.Tx))); err != nil {
				return err
			}
			if err := modelApply(ctx, a, c); err != nil {
				return err
			}
			return changefeed.Commit(tx, name, r.Position())
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// modelApply applies one change to cf.
func modelApply(ctx context.Context, cf *kvstore.ColumnFamily, c changefeed.Change) error {
	var err error
	switch c.Op {
	case changefeed.OpPut:
		err = cf.Put(c.Key, c.Value)
	case changefeed.OpDelete, changefeed.OpExpired:
		err = cf.Delete(c.Key)
	case changefeed.OpDeleteRange:
		_, err = cf.DeleteRange(ctx, c.Key, c.Value)
	}
	if errors.Is(err, kvstore.ErrNotFound) {
		return nil
	}
	return err
}

// modelReplay applies changes to a map, as a consumer applies them to a
// column family.
func modelReplay(changes []changefeed.Change, prefix string) map[string]string {
	rows := map[string]string{}
	for _, c := range changes {
		switch c.Op {
		case changefeed.OpPut:
			rows[string(c.Key)] = string(c.Value)
		case changefeed.OpDelete, changefeed.OpExpired:
			delete(rows, string(c.Key))
		case changefeed.OpDeleteRange:
			for k := range rows {
				if k >= string(c.Key) && (c.Value == nil || k < string(c.Value)) {
					delete(rows, k)
				}
			}
		}
	}
	maps.DeleteFunc(rows, func(k, _ string) bool { return len(k) < len(prefix) || k[:len(prefix)] != prefix })
	return rows
}

// modelRows returns the rows of column family name.
func modelRows(t *testing.T, db *kvstore.Store, name string) map[string]string {
	t.Helper()
	rows := map[string]string{}
	for e, err := range mustCF(t, db, name).All() {
		require.NoError(t, err)
		rows[string(e.Key)] = string(e.Value)
	}
	return rows
}

func TestChangeFeedModel(t *testing.T) {
	runs, span := 10, 4*time.Second
	if testing.Short() {
		runs, span = 2, 1500*time.Millisecond
	}
	for run := range runs {
		t.Run(strconv.Itoa(run), func(t *testing.T) {
			modelRun(t, uint64(run)+uint64(time.Now().UnixNano()), span)
		})
	}
}

// modelRun is one run of the model check: three writers and the consumers
// for span, each killed and started again at random, then the checks.
func modelRun(t *testing.T, seed uint64, span time.Duration) {
	t.Logf("seed %d", seed)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 1))
	path := filepath.Join(t.TempDir(), "model.db")
	db, err := kvstore.Open(path, kvstore.Options{BusyTimeout: time.Minute})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	_, err = db.CreateColumnFamily(modelCF)
	require.NoError(t, err)
	require.NoError(t, changefeed.Enable(ctx, db, modelCF, changefeed.Options{KeepValues: true}))
	for name := range modelConsumers {
		for _, cf := range []string{modelApplied(name), modelLog(name)} {
			_, err = db.CreateColumnFamily(cf)
			require.NoError(t, err)
		}
	}

	roles := append([]string{"w1", "w2", "w3"}, slices.Sorted(maps.Keys(modelConsumers))...)
	start := func(role string) *testutil.Child {
		c := testutil.StartChild(t, "TestChangeFeedModelChild",
			modelEnvPath+"="+path, modelEnvRole+"="+role,
			modelEnvSeed+"="+strconv.FormatUint(r.Uint64(), 10),
			modelEnvPrefix+"="+modelConsumers[role])
		c.WaitLine(func(l string) bool { return l == "writing" || l == "consuming" })
		return c
	}
	children := map[string]*testutil.Child{}
	for _, role := range roles {
		children[role] = start(role)
	}
	kills := 0
	for end := time.Now().Add(span); time.Now().Before(end); {
		time.Sleep(time.Duration(20+r.IntN(150)) * time.Millisecond)
		role := roles[r.IntN(len(roles))]
		children[role].Kill()
		kills++
		children[role] = start(role)
	}
	for _, role := range roles {
		children[role].Kill()
	}

	// The feed: sequences from 1 with no gap, each transaction's changes
	// together, and its replay is the column family.
	now, err := changefeed.Now(ctx, db)
	require.NoError(t, err)
	rd, err := changefeed.NewReader(ctx, db, changefeed.Position{}, changefeed.ReaderOptions{Filter: changefeed.Filter{CF: modelCF}})
	require.NoError(t, err)
	feed := readFeed(t, rd, "model")
	require.NoError(t, rd.Close())
	require.NotEmpty(t, feed)
	t.Logf("%d kills, %d changes", kills, len(feed))
	seen := map[int64]bool{}
	for i, c := range feed {
		if i > 0 && c.Tx != feed[i-1].Tx {
			require.False(t, seen[c.Tx], "transaction %d's changes are not together", c.Tx)
			require.Equal(t, c.Seq, c.Tx, "a transaction's id is its first change's sequence")
		}
		seen[c.Tx] = true
		require.LessOrEqual(t, c.Tx, c.Seq)
	}
	var seqs []int64
	for _, c := range feed {
		seqs = append(seqs, c.Seq)
	}
	first := feed[0].Seq
	for i, s := range seqs {
		require.Equal(t, first+int64(i), s, "a gap in the feed")
	}
	require.Equal(t, now.Seq, seqs[len(seqs)-1]+1, "the feed ends at Now")
	require.Equal(t, modelReplay(feed, ""), modelRows(t, db, modelCF), "the feed and the column family disagree")

	// The consumers: catch up, then each change its filter passes applied
	// once, and its copy equals the rows under its prefix.
	for name, prefix := range modelConsumers {
		require.NoError(t, modelConsume(ctx, db, name, []byte(prefix), &now))
		var want []int64
		for _, c := range feed {
			if bytes.HasPrefix(c.Key, []byte(prefix)) {
				want = append(want, c.Seq)
			}
		}
		var got []int64
		for e, err := range mustCF(t, db, modelLog(name)).All() {
			require.NoError(t, err)
			require.False(t, bytes.HasPrefix(e.Key, []byte("dup/")), "%s applied a change twice", name)
			got = append(got, int64(binary.BigEndian.Uint64(e.Key)))
		}
		require.Equal(t, want, got, "%s did not apply exactly the changes its filter passes", name)
		require.Equal(t, modelReplay(feed, prefix), modelRows(t, db, modelApplied(name)), "%s's copy", name)
	}
}

func mustCF(t *testing.T, db *kvstore.Store, name string) *kvstore.ColumnFamily {
	t.Helper()
	cf, err := db.OpenColumnFamily(name)
	require.NoError(t, err)
	return cf
}
