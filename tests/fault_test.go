//go:build linux

package tests

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// I/O fault injection: every operation that writes is run again and again
// with its n-th write (or truncation) failing, for n = 1, 2, ... until it
// runs without meeting the fault. Each time the call must fail or succeed
// cleanly, the store must hold either all or none of the operation's
// effect (and all of it when the call returned nil), stay usable, pass
// IntegrityCheck, and hold the same after Close and a fresh Open.

var faultT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// faultTemplate builds the store every run starts from: a default column
// family of 40 keys, "ttl" with 10 keys expiring in a minute, 10 in an
// hour and 10 permanent, and "spare" with 10 keys.
func faultTemplate(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "template.db")
	clk := kvstore.NewManualClock(faultT0)
	db, err := kvstore.Open(path, kvstore.Options{Clock: clk})
	require.NoError(t, err)
	for i := range 40 {
		require.NoError(t, db.Put(fmt.Appendf(nil, "d%03d", i), fmt.Appendf(nil, "value-%d", i)))
	}
	cf, err := db.CreateColumnFamily("ttl")
	require.NoError(t, err)
	for i := range 10 {
		require.NoError(t, cf.PutTTL(fmt.Appendf(nil, "soon%02d", i), []byte("s"), time.Minute))
		require.NoError(t, cf.PutTTL(fmt.Appendf(nil, "late%02d", i), []byte("l"), time.Hour))
		require.NoError(t, cf.Put(fmt.Appendf(nil, "perm%02d", i), []byte("p")))
	}
	spare, err := db.CreateColumnFamily("spare")
	require.NoError(t, err)
	for i := range 10 {
		require.NoError(t, spare.Put(fmt.Appendf(nil, "x%02d", i), []byte("x")))
	}
	require.NoError(t, db.Close())
	return path
}

// faultState is a store's full contents: per column family, each key's
// value and whether it has a TTL.
type faultState map[string]map[string]string

func readFaultState(t *testing.T, db *kvstore.Store) faultState {
	t.Helper()
	names, err := db.ListColumnFamilies()
	require.NoError(t, err)
	st := faultState{}
	for _, name := range names {
		cf, err := db.OpenColumnFamily(name)
		require.NoError(t, err)
		m := map[string]string{}
		for e, err := range cf.All() {
			require.NoError(t, err)
			d, err := cf.TTL(e.Key)
			require.NoError(t, err)
			m[string(e.Key)] = fmt.Sprintf("%s ttl=%v", e.Value, d != kvstore.NoTTL)
		}
		st[name] = m
	}
	return st
}

// faultOp is one operation under test. prepare runs before arming (its
// writes are not under test); run is the call under test.
type faultOp struct {
	name    string
	prepare func(t *testing.T, db *kvstore.Store, clk *kvstore.ManualClock)
	run     func(db *kvstore.Store, dir string) error
	backup  bool // run writes a backup to dir/backup.db
}

func faultOps() []faultOp {
	ctx := context.Background()
	cf := func(db *kvstore.Store, name string) *kvstore.ColumnFamily {
		c, err := db.OpenColumnFamily(name)
		if err != nil {
			panic(err)
		}
		return c
	}
	return []faultOp{
		{name: "put", run: func(db *kvstore.Store, _ string) error { return db.Put([]byte("new"), []byte("value")) }},
		{name: "overwrite", run: func(db *kvstore.Store, _ string) error { return db.Put([]byte("d007"), []byte("changed")) }},
		{name: "batch", run: func(db *kvstore.Store, _ string) error {
			var b kvstore.Batch
			for i := range 30 {
				b.Put(fmt.Appendf(nil, "b%03d", i), make([]byte, 300))
			}
			for i := range 10 {
				b.Delete(fmt.Appendf(nil, "d%03d", i))
			}
			b.PutTTL([]byte("bt"), []byte("ttl"), time.Hour)
			return db.Apply(ctx, &b)
		}},
		{name: "ttl write", run: func(db *kvstore.Store, _ string) error {
			return cf(db, "spare").PutTTL([]byte("first-ttl"), []byte("v"), time.Hour)
		}},
		{name: "expire", run: func(db *kvstore.Store, _ string) error {
			return cf(db, "ttl").Expire([]byte("perm03"), time.Hour)
		}},
		{name: "purge", prepare: func(_ *testing.T, _ *kvstore.Store, clk *kvstore.ManualClock) { clk.Advance(2 * time.Minute) },
			run: func(db *kvstore.Store, _ string) error {
				_, err := cf(db, "ttl").PurgeExpired(ctx)
				return err
			}},
		{name: "create", run: func(db *kvstore.Store, _ string) error {
			_, err := db.CreateColumnFamily("fresh")
			return err
		}},
		{name: "drop", run: func(db *kvstore.Store, _ string) error { return db.DropColumnFamily("spare") }},
		{name: "checkpoint", prepare: func(t *testing.T, db *kvstore.Store, _ *kvstore.ManualClock) {
			for i := range 50 {
				require.NoError(t, db.Put(fmt.Appendf(nil, "c%03d", i), make([]byte, 500)))
			}
		}, run: func(db *kvstore.Store, _ string) error {
			_, err := db.Checkpoint(ctx, kvstore.CheckpointTruncate)
			return err
		}},
		{name: "backup", backup: true, run: func(db *kvstore.Store, dir string) error {
			return db.Backup(ctx, filepath.Join(dir, "backup.db"))
		}},
	}
}

// faultRun copies the template to a fresh directory, opens it, prepares,
// and returns the store, its clock and directory.
func faultRun(t *testing.T, template string, op faultOp) (*kvstore.Store, *kvstore.ManualClock, string) {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(template)
	require.NoError(t, err)
	path := filepath.Join(dir, "store.db")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	clk := kvstore.NewManualClock(faultT0)
	db, err := kvstore.Open(path, kvstore.Options{Clock: clk, Sync: kvstore.SyncFull})
	require.NoError(t, err)
	if op.prepare != nil {
		op.prepare(t, db, clk)
	}
	return db, clk, dir
}

func TestIOFaults(t *testing.T) {
	if !installFaults(t) {
		t.Skip("the unix VFS offers no system call hook here")
	}
	template := faultTemplate(t)
	maxN := int64(400)
	for _, op := range faultOps() {
		t.Run(op.name, func(t *testing.T) {
			// The two possible outcomes, from fault-free runs.
			db, clk, dir := faultRun(t, template, op)
			before := readFaultState(t, db)
			require.NoError(t, op.run(db, dir))
			after := readFaultState(t, db)
			require.NoError(t, db.Close())
			_ = clk

			seen, faulted, failed := 0, 0, 0
			for n := int64(1); n <= maxN; n++ {
				if testing.Short() && n > 6 && n%7 != 0 {
					continue // -short: the first writes, then every seventh
				}
				errno := syscall.EIO
				if n%2 == 0 {
					errno = syscall.ENOSPC
				}
				db, clk, dir := faultRun(t, template, op)
				armFault(n, errno)
				err := op.run(db, dir)
				hit := disarmFault()
				if !hit {
					require.NoError(t, err, "n=%d: no fault was injected", n)
					seen++
					if seen >= 2 {
						require.NoError(t, db.Close())
						break // the operation has fewer writes than n
					}
				}
				if hit {
					faulted++
					if err != nil {
						failed++
					}
				}
				msg := fmt.Sprintf("n=%d errno=%v err=%v", n, errno, err)
				if err != nil {
					// An injected fault surfaces as one of the two typed I/O errors.
					require.True(t, errors.Is(err, kvstore.ErrIO) || errors.Is(err, kvstore.ErrDiskFull), msg)
				}
				got := readFaultState(t, db)
				if err == nil {
					require.Equal(t, after, got, "acknowledged: "+msg)
				} else if !equalState(got, after) {
					require.Equal(t, before, got, "failed, so all or nothing: "+msg)
				}
				if op.backup {
					checkBackup(t, filepath.Join(dir, "backup.db"), err, after, clk, msg)
				}
				require.NoError(t, db.IntegrityCheck(context.Background()), msg)
				// The store keeps working after the fault.
				require.NoError(t, db.Put([]byte("probe"), []byte("p")), msg)
				require.NoError(t, db.Delete([]byte("probe")), msg)
				require.NoError(t, db.Close(), msg)
				// Everything acknowledged survives a fresh Open.
				re, err2 := kvstore.Open(db.Path(), kvstore.Options{Clock: clk})
				require.NoError(t, err2, msg)
				reGot := readFaultState(t, re)
				require.Equal(t, got, reGot, "after reopen: "+msg)
				require.NoError(t, re.IntegrityCheck(context.Background()), msg)
				require.NoError(t, re.Close())
			}
			require.Positive(t, faulted, "no run met a fault")
			t.Logf("%d runs met a fault, %d of them failed the call", faulted, failed)
		})
	}
}

func equalState(a, b faultState) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// checkBackup: a backup that returned nil is a complete store equal to the
// source; one that failed left no file behind.
func checkBackup(t *testing.T, path string, err error, want faultState, clk *kvstore.ManualClock, msg string) {
	t.Helper()
	if err != nil {
		_, serr := os.Stat(path)
		require.True(t, os.IsNotExist(serr), "a failed backup leaves no file: "+msg)
		return
	}
	b, err := kvstore.Open(path, kvstore.Options{ReadOnly: true, Clock: clk})
	require.NoError(t, err, msg)
	require.Equal(t, want, readFaultState(t, b), msg)
	require.NoError(t, b.IntegrityCheck(context.Background()), msg)
	require.NoError(t, b.Close())
}
