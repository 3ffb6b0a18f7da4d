package tests

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
)

// Environment of a crash child process: the store it works on, what it
// does, the seed of its random choices and the start of its clock (ms since
// the epoch).
const (
	crashEnvPath  = "SNKV_CRASH_CHILD_PATH"
	crashEnvMode  = "SNKV_CRASH_CHILD_MODE"
	crashEnvSeed  = "SNKV_CRASH_CHILD_SEED"
	crashEnvClock = "SNKV_CRASH_CHILD_CLOCK"
	crashEnvSync  = "SNKV_CRASH_CHILD_SYNC" // "full": synchronous=FULL
)

// Modes of a crash child.
const (
	crashModeLoop = "loop" // random TTL work until killed
	crashModeHold = "hold" // commit one TTL write, then hang inside a second one
)

// Keys and column families the child works on.
const (
	crashSeqKey    = "seq" // in the default column family: the last committed sequence number
	crashSeqTTL    = 1000 * time.Hour
	crashDoneKey   = "done"    // hold mode: committed before the kill
	crashPendKey   = "pend"    // hold mode: written by the transaction the kill interrupts
	crashPendingCF = "pending" // hold mode: its first TTL write is never committed
)

// crashChurnCF is created and dropped again and again by the loop.
const crashChurnCF = "churn"

var crashCFs = []string{kvstore.DefaultColumnFamily, "sessions", "cache"}

// TestCrashChild is the body of the child process the crash tests start
// and kill; run directly, it does nothing.
func TestCrashChild(t *testing.T) {
	seed := startChild(t, crashEnvSeed)
	path := os.Getenv(crashEnvPath)
	startMs, _ := strconv.ParseInt(os.Getenv(crashEnvClock), 10, 64)
	clk := kvstore.NewManualClock(time.UnixMilli(startMs))
	var err error
	switch mode := os.Getenv(crashEnvMode); mode {
	case crashModeLoop:
		err = crashLoop(path, clk, rand.New(rand.NewPCG(seed, 0x736e6b76)))
	case crashModeHold:
		err = crashHold(path, clk)
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	fmt.Fprintf(os.Stderr, "crash child: %v\n", err)
	os.Exit(3)
}

// startChild begins the body of a child process of a kill test: it skips
// the test unless it runs as a child (testutil.ChildOnly), makes the
// process exit with its parent, and returns the seed the parent gave in
// the environment variable seedVar (0 if unset).
func startChild(t *testing.T, seedVar string) uint64 {
	t.Helper()
	testutil.ChildOnly(t)
	exitWithParent()
	seed, _ := strconv.ParseUint(os.Getenv(seedVar), 10, 64)
	return seed
}

// exitWithParent makes a child process exit when its stdin ends: when the
// parent closes it or goes away.
func exitWithParent() {
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
}

// crashSay writes one line to the parent, unbuffered, so that a line the
// parent reads describes something that really happened.
func crashSay(format string, args ...any) {
	_, _ = os.Stdout.Write(fmt.Appendf(nil, format+"\n", args...))
}

// crashHold commits one TTL key, then starts a transaction that writes a
// TTL key and gives a fresh column family its first TTL write, announces
// it, and hangs until killed.
func crashHold(path string, clk *kvstore.ManualClock) error {
	db, err := kvstore.Open(path, kvstore.Options{Clock: clk})
	if err != nil {
		return err
	}
	pending, err := db.ColumnFamilyOrCreate(crashPendingCF)
	if err != nil {
		return err
	}
	if err := pending.Put([]byte("plain"), []byte("p")); err != nil {
		return err
	}
	if err := db.PutTTL([]byte(crashDoneKey), []byte("committed"), time.Hour); err != nil {
		return err
	}
	crashSay("committed")
	tx, err := db.Begin(context.Background(), true)
	if err != nil {
		return err
	}
	if err := tx.PutTTL([]byte(crashPendKey), []byte("uncommitted"), time.Hour); err != nil {
		return err
	}
	if err := tx.PutTTL([]byte(crashDoneKey), []byte("overwritten"), 2*time.Hour); err != nil {
		return err
	}
	if err := tx.CF(pending).PutTTL([]byte(crashPendKey), []byte("uncommitted"), time.Hour); err != nil {
		return err
	}
	if err := tx.CF(pending).Expire([]byte("plain"), time.Hour); err != nil {
		return err
	}
	crashSay("holding")
	select {}
}

// crashLoop does random TTL work on the store until the process is killed.
// After every commit of the sequence key it reports the number.
func crashLoop(path string, clk *kvstore.ManualClock, rng *rand.Rand) error {
	ctx := context.Background()
	opts := kvstore.Options{Clock: clk}
	if os.Getenv(crashEnvSync) == "full" {
		opts.Sync = kvstore.SyncFull
	}
	db, err := kvstore.Open(path, opts)
	if err != nil {
		return err
	}
	cfs := make([]*kvstore.ColumnFamily, len(crashCFs))
	for i, name := range crashCFs {
		if cfs[i], err = db.ColumnFamilyOrCreate(name); err != nil {
			return err
		}
	}
	seq := 0
	if v, err := db.Get([]byte(crashSeqKey)); err == nil {
		if seq, err = strconv.Atoi(string(v)); err != nil {
			return fmt.Errorf("bad sequence value %q", v)
		}
	} else if !errors.Is(err, kvstore.ErrNotFound) {
		return err
	}
	ignore := func(err error) error {
		if errors.Is(err, kvstore.ErrNotFound) {
			return nil
		}
		return err
	}
	key := func() []byte { return fmt.Appendf(nil, "k%03d", rng.IntN(200)) }
	ttl := func() time.Duration { return time.Duration(100+rng.IntN(5000)) * time.Millisecond }
	value := func() []byte { return fmt.Appendf(nil, "v%d-%d", seq, rng.IntN(1_000_000)) }

	for {
		seq++
		if err := db.PutTTL([]byte(crashSeqKey), []byte(strconv.Itoa(seq)), crashSeqTTL); err != nil {
			return fmt.Errorf("sequence %d: %w", seq, err)
		}
		crashSay("seq %d", seq)

		cf := cfs[rng.IntN(len(cfs))]
		var err error
		switch op := rng.IntN(16); op {
		case 0, 1:
			err = cf.PutTTL(key(), value(), ttl())
		case 2:
			err = cf.Put(key(), value())
		case 3:
			err = ignore(cf.Delete(key()))
		case 4:
			err = ignore(cf.Expire(key(), ttl()))
		case 5:
			err = ignore(cf.Persist(key()))
		case 6:
			_, err = db.PurgeExpiredAll(ctx)
		case 7:
			var b kvstore.Batch
			for range 1 + rng.IntN(300) {
				switch rng.IntN(3) {
				case 0:
					b.PutTTL(key(), value(), ttl())
				case 1:
					b.Put(key(), value())
				default:
					b.Delete(key())
				}
			}
			err = cf.Apply(ctx, &b)
		case 8:
			rollback := rng.IntN(3) == 0
			errAbort := errors.New("abort")
			err = db.Update(ctx, func(tx *kvstore.Tx) error {
				for range 1 + rng.IntN(20) {
					h := tx.CF(cfs[rng.IntN(len(cfs))])
					var err error
					switch rng.IntN(5) {
					case 0:
						err = h.PutTTL(key(), value(), ttl())
					case 1:
						_, err = h.Get(key())
					case 2:
						err = h.Delete(key())
					case 3:
						err = h.Expire(key(), ttl())
					default:
						_, err = h.PurgeExpiredN(ctx, 1+rng.IntN(50))
					}
					if err = ignore(err); err != nil {
						return err
					}
				}
				if rollback {
					return errAbort
				}
				return nil
			})
			if errors.Is(err, errAbort) {
				err = nil
			}
		case 9:
			_, err = cf.Get(key())
			err = ignore(err)
			if err == nil {
				_, err = cf.TTL(key())
				err = ignore(err)
			}
		case 10:
			for _, e := range cf.Prefix(fmt.Appendf(nil, "k%d", rng.IntN(2))) {
				if e != nil {
					err = e
					break
				}
			}
		case 11:
			_, err = cf.PutIfAbsentTTL(key(), value(), ttl())
		case 12:
			// A burst of short-lived keys, then a purge long enough to be
			// killed in the middle of.
			var b kvstore.Batch
			for i := range 300 + rng.IntN(700) {
				b.PutTTL(fmt.Appendf(nil, "burst%05d", i), value(), ttl())
			}
			if err = cf.Apply(ctx, &b); err == nil {
				clk.Advance(6 * time.Second)
				crashSay("purge start")
				var n int
				n, err = cf.PurgeExpired(ctx)
				crashSay("purge end %d", n)
			}
		case 14:
			// Column family churn: create, fill (with TTL), drop.
			var churn *kvstore.ColumnFamily
			if churn, err = db.ColumnFamilyOrCreate(crashChurnCF); err == nil {
				if rng.IntN(2) == 0 {
					err = churn.PutTTL(key(), value(), ttl())
				} else {
					err = ignore(db.DropColumnFamily(crashChurnCF))
				}
			}
		case 15:
			_, err = db.Checkpoint(ctx, kvstore.CheckpointPassive)
		default:
			_, err = cf.PurgeExpiredN(ctx, 1+rng.IntN(600))
		}
		if err != nil {
			return fmt.Errorf("sequence %d: %w", seq, err)
		}
		clk.Advance(time.Duration(rng.IntN(300)) * time.Millisecond)
	}
}
