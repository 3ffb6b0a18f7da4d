package kvstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/snkv-go/snkv/internal/catalog"
	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/seal"
)

// sealState is the encryption of an open store.
type sealState struct {
	// sealMu orders the conversions, and guards the fields below.
	sealMu convLock
	// keyring holds the keys of an encrypted store while it is open.
	keyring *seal.Keyring
	// scrub is what is left of a conversion's scrub (see scrubStage).
	scrub scrubStage
}

// convLock is a mutex whose wait can end with a context: a conversion
// called while another runs (which may take minutes on a large store)
// waits for it only as long as its context allows. The zero value is
// unlocked.
type convLock struct {
	once sync.Once
	held chan struct{} // holds one token while locked
}

func (l *convLock) ch() chan struct{} {
	l.once.Do(func() { l.held = make(chan struct{}, 1) })
	return l.held
}

// lockCtx locks l, or returns ctx's error if ctx ends first.
func (l *convLock) lockCtx(ctx context.Context) error {
	select {
	case l.ch() <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Lock locks l, however long that takes.
func (l *convLock) Lock() { l.ch() <- struct{}{} }

// Unlock unlocks l.
func (l *convLock) Unlock() { <-l.ch() }

// scrubStage is what is left of the scrub that ends Encrypt and Rekey: the
// file rewritten without the old form of the values and the headers of
// retired secrets, then its WAL emptied.
type scrubStage uint8

const (
	scrubNone     scrubStage = iota
	scrubVacuum              // the file is still to be rewritten
	scrubTruncate            // rewritten: its WAL is still to be emptied
)

// headerWritten, set by tests, sees every encryption header a store is
// about to write.
var headerWritten atomic.Pointer[func(h []byte)]

// follow makes the store's row codec follow keyring kr, whose header, as
// stored in the file, is h.
func (s *Store) follow(kr *seal.Keyring, h []byte) error {
	st, err := kr.State()
	if err != nil {
		return err
	}
	s.keyring = kr
	s.reg.SetSeal(st, h)
	return nil
}

// writeHeader stores the encryption header h (nil: none) in a write
// transaction of its own, and records that a scrub is still to run (scrub
// set; see scrubbed) or that none is: a job that starts, or a decryption
// that ends, makes a scrub an earlier conversion left pending moot (the
// job's own scrub, or none, replaces it).
func (s *Store) writeHeader(ctx context.Context, h []byte, scrub bool) error {
	if f := headerWritten.Load(); f != nil && h != nil {
		(*f)(h)
	}
	return s.Update(ctx, func(tx *Tx) error {
		c := tx.tx.Conn()
		if err := catalog.WriteSealHeader(tx.Context(), c, h); err != nil {
			return err
		}
		return catalog.MarkScrub(tx.Context(), c, scrub)
	})
}

// encrypt encrypts a store without encryption with secret.
func (s *Store) encrypt(ctx context.Context, secret seal.Secret) error {
	if !s.reg.Formatted() {
		return fmt.Errorf("%w: a version-1 store cannot be encrypted: Upgrade it first", ErrVersion)
	}
	kr, err := seal.Create(secret)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrInvalidArgument, err)
	}
	if err := s.beginJob(ctx, kr); err != nil {
		if s.keyring != kr {
			kr.Destroy() // nothing recorded: the store stays in the clear
		}
		return err
	}
	return nil
}

// beginJob records the conversion keyring kr has begun in the header,
// makes the codec follow it and runs it to its end. When the header could
// not be written the job is cancelled and nothing changed; a failure after
// that leaves the job recorded, for FinishConversion, the next conversion
// or Open to finish.
func (s *Store) beginJob(ctx context.Context, kr *seal.Keyring) error {
	h, err := kr.Header()
	if err == nil {
		err = s.writeHeader(ctx, h, false)
	}
	if err != nil {
		kr.Cancel()
		return err
	}
	s.scrub = scrubNone
	if err := s.follow(kr, h); err != nil {
		return err
	}
	return s.finishJob(ctx)
}

// resume finishes what an earlier conversion left part way (it failed
// after recording its job, or before its scrub ended), before another one
// starts. Rows it cannot read are reported by the conversion that follows,
// and a scrub that readers still hold up is replaced by that conversion's
// own (or made moot by a decryption).
func (s *Store) resume(ctx context.Context) error {
	if (s.keyring == nil || s.keyring.Job() == seal.JobNone) && s.scrub == scrubNone {
		return nil
	}
	var bad *BadRowsError
	if err := s.finishJob(ctx); err != nil && !errors.As(err, &bad) && !errors.Is(err, ErrScrubPending) {
		return err
	}
	return nil
}

// finishJob runs the conversion the keyring records to its end: every
// value that can be read rewritten in the form it wants, then the header
// that ends it, then (after Encrypt and Rekey) the scrub. Rows no key
// reads are left as they were and reported with a *BadRowsError once the
// rest is done.
func (s *Store) finishJob(ctx context.Context) error {
	kr := s.keyring
	var rep catalog.ResealReport
	if kr != nil && kr.Job() != seal.JobNone {
		job := kr.Job()
		var err error
		if rep, err = s.reg.Reseal(ctx, s.sealBatch(), nil); err != nil {
			return err
		}
		h, ended, err := kr.End()
		if err != nil {
			return err
		}
		// The header that ends the job is written before the scrub, so that
		// the scrub clears every header before it too.
		scrub := job != seal.JobDecrypt && !s.db.Memory()
		if err := s.writeHeader(ctx, h, scrub); err != nil {
			return err
		}
		ended()
		s.scrub = scrubNone
		if h == nil {
			kr.Destroy()
			s.keyring = nil
			s.reg.SetSeal(nil, nil)
		} else if err := s.follow(kr, h); err != nil {
			return err
		}
		if scrub {
			s.scrub = scrubVacuum
		}
	}
	if err := s.scrubbed(ctx); err != nil {
		return err
	}
	return badRows(rep)
}

// scrubbed runs the scrub that ends Encrypt and Rekey. The conversion
// leaves what it replaced (values in the clear, or sealed under the
// retired data key, and every header before the last) in the file's free
// space: in freed cells, in the gaps SQLite leaves when it moves cells
// between pages, in free pages and in the WAL. A VACUUM rebuilds the file
// from its live content, and a TRUNCATE checkpoint copies the WAL into it
// and empties it (truncateWAL). (SQLite's secure_delete alone is not
// enough: it zeroes freed cells and pages but not the gaps a page split
// leaves.) The meta row that records a scrub still to run goes last: a
// crash before leaves it to the next writable Open.
func (s *Store) scrubbed(ctx context.Context) error {
	if s.scrub == scrubNone {
		return nil
	}
	if s.scrub == scrubVacuum {
		if err := s.Vacuum(ctx); err != nil {
			return err
		}
		s.scrub = scrubTruncate
	}
	if err := s.truncateWAL(ctx); err != nil {
		return err
	}
	err := s.Update(ctx, func(tx *Tx) error {
		return catalog.MarkScrub(tx.Context(), tx.tx.Conn(), false)
	})
	if err != nil {
		return err
	}
	s.scrub = scrubNone
	return nil
}

// truncateAttempt is how long one TRUNCATE checkpoint of truncateWAL waits
// for readers while it holds the writer.
const truncateAttempt = 10 * time.Millisecond

// truncateWAL empties the WAL with TRUNCATE checkpoints. A checkpoint
// that waited for readers while holding the writer would stall every
// writer that long; so each attempt waits at most truncateAttempt, and
// between attempts the writer is free, for up to Options.BusyTimeout in
// all. Readers that began before the scrub's VACUUM may read pages the
// WAL still holds; while they last, the WAL cannot be emptied, and it
// returns ErrScrubPending.
func (s *Store) truncateWAL(ctx context.Context) error {
	limit := s.db.Config().BusyTimeout
	start := time.Now()
	pause := time.Millisecond
	for {
		// The read transactions the store's readers hold between reads
		// would hold it up too, idle or not: a pool of readers that is
		// never idle reuses them forever. Retired, they end at their next
		// read, and the reads after the checkpoint has copied the whole
		// WAL read the database file alone.
		s.db.RetireHeld()
		busy, err := s.tryTruncate(ctx)
		if err != nil || !busy {
			return err
		}
		if time.Since(start) >= limit {
			return fmt.Errorf("%w: read transactions that began before the conversion ended kept its WAL from being emptied for %v (an open Cursor or iteration, a View or read-only Tx not yet ended, or another process or Store reading the file; this store's own point reads do not): once they end, FinishConversion clears it", ErrScrubPending, limit)
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w: %w", ErrScrubPending, ctx.Err())
		case <-t.C:
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// tryTruncate runs one TRUNCATE checkpoint on the writer, waiting at most
// truncateAttempt for readers; busy reports that they held it up.
func (s *Store) tryTruncate(ctx context.Context) (busy bool, err error) {
	err = s.db.WithWriter(ctx, func(c *engine.Conn) error {
		if err := c.ExecScript(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", truncateAttempt.Milliseconds())); err != nil {
			return err
		}
		defer func() {
			_ = c.ExecScript(context.Background(), fmt.Sprintf("PRAGMA busy_timeout = %d", s.db.Config().BusyTimeout.Milliseconds()))
		}()
		rows, err := c.Query(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
		if err != nil {
			return err
		}
		if rows.Next() {
			busy = rows.Int(0) != 0
		}
		return rows.Close()
	})
	return busy, engine.Wrap(ctx, "empty the WAL", err)
}

// sealOp runs one of the conversions of an open store, one at a time: one
// called while another runs waits for it, until ctx ends.
func (s *Store) sealOp(ctx context.Context, op string, fn func() error) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	if s.opts.ReadOnly {
		return fmt.Errorf("snkv: %s: %w", op, ErrReadOnly)
	}
	if s.db.Closed() {
		return fmt.Errorf("snkv: %s: %w", op, ErrClosed)
	}
	if err := s.sealMu.lockCtx(ctx); err != nil {
		return fmt.Errorf("snkv: %s: waiting for the conversion under way: %w", op, err)
	}
	defer s.sealMu.Unlock()
	if err := fn(); err != nil {
		return fmt.Errorf("snkv: %s: %w", op, err)
	}
	return nil
}
