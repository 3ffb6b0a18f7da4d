package kvstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/snkv-go/snkv/internal/engine"
)

// Tx is a transaction spanning every column family of the store. Every
// ColumnFamily method is also a Tx method acting on the default column
// family bound to the transaction (Default), so tx.Put(k, v) writes inside
// it; tx.CF(cf) binds any other column family. Reads inside a
// Tx see its own writes; a read-only Tx sees one snapshot from Begin on and
// never later commits.
//
// A Tx must be used by one goroutine at a time. Do not call the Store's own
// (non-transactional) write methods while holding a write Tx in the same
// goroutine: they wait for the writer the Tx holds, then fail with ErrBusy.
type Tx struct {
	cf    *ColumnFamily // the default column family, bound to tx
	tx    *engine.Tx
	store *Store

	// ended records a Commit or Rollback called by the function given to
	// Update or View, so that they report what happened.
	ended  txEnd
	endErr error
}

type txEnd uint8

const (
	txOpen txEnd = iota
	txCommitted
	txRolledBack
)

// errNilTx is the error of a call on a nil *Tx.
var errNilTx = fmt.Errorf("%w: nil transaction", ErrInvalidArgument)

// Begin starts a transaction. A writable one takes the write lock at once
// (BEGIN IMMEDIATE), waiting up to Options.BusyTimeout or until ctx ends;
// statements in the transaction run under ctx. End it with Commit or
// Rollback.
func (s *Store) Begin(ctx context.Context, writable bool) (*Tx, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	if writable && s.opts.ReadOnly {
		return nil, fmt.Errorf("snkv: begin: %w", ErrReadOnly)
	}
	t, err := s.db.Begin(ctx, writable)
	if err != nil {
		return nil, err
	}
	return &Tx{cf: bindHandle(s.cf, t), tx: t, store: s}, nil
}

// Update runs fn in a write transaction and commits it if fn returns nil;
// if fn returns an error or panics, the transaction is rolled back (and the
// panic continues).
//
// fn may end the transaction itself. If it calls tx.Commit and returns nil,
// Update returns that Commit's result (nil: the data is committed). If it
// calls tx.Rollback and returns nil, Update returns an error wrapping
// ErrTxDone that says so (nothing was written). If fn returns an error,
// Update returns it whatever fn did to the transaction: a Commit fn made
// before stays committed. A nil fn or ctx gives ErrInvalidArgument.
func (s *Store) Update(ctx context.Context, fn func(tx *Tx) error) error {
	return s.run(ctx, true, fn)
}

// View runs fn in a read-only transaction: every read in it sees the same
// snapshot. Writes in it fail with ErrReadOnlyTx.
func (s *Store) View(ctx context.Context, fn func(tx *Tx) error) error {
	return s.run(ctx, false, fn)
}

func (s *Store) run(ctx context.Context, writable bool, fn func(tx *Tx) error) (err error) {
	if fn == nil {
		return fmt.Errorf("%w: nil function", ErrInvalidArgument)
	}
	tx, err := s.Begin(ctx, writable)
	if err != nil {
		return err
	}
	returned := false
	defer func() {
		if !returned {
			// fn panicked (the panic goes on) or called runtime.Goexit
			// (t.FailNow in a test): never leave the connection held.
			_ = tx.Rollback()
		}
	}()
	ferr := fn(tx)
	returned = true
	if ferr != nil {
		_ = tx.Rollback()
		return ferr
	}
	switch tx.ended {
	case txCommitted:
		return tx.endErr
	case txRolledBack:
		return fmt.Errorf("snkv: the function rolled the transaction back itself: %w", ErrTxDone)
	}
	return tx.Commit()
}

// CF returns cf bound to this transaction. A handle from another store
// gives a handle whose every call fails with ErrForeignHandle.
// A nil cf gives a handle whose every call fails with ErrInvalidArgument.
func (tx *Tx) CF(cf *ColumnFamily) *ColumnFamily {
	if tx == nil {
		return bindHandle(nil, nil)
	}
	return bindHandle(cf, tx.tx)
}

// Writable reports whether the transaction may write (false for a nil Tx).
func (tx *Tx) Writable() bool { return tx != nil && tx.tx.Writable() }

// Context returns the context the transaction was begun with (nil for a
// nil Tx).
func (tx *Tx) Context() context.Context {
	if tx == nil {
		return nil
	}
	return tx.tx.Ctx()
}

// OnCommit registers f to run after the transaction commits successfully,
// in registration order, after the write lock is released. It never runs if
// the transaction rolls back or its commit fails. A nil f is ignored, and
// so is an f registered once the transaction has ended. A hook that
// panics stops neither the other hooks nor the transaction's end: its
// panic goes on from Commit (or Update) once they ran, with the
// transaction committed.
func (tx *Tx) OnCommit(f func()) {
	if tx != nil && f != nil {
		tx.tx.OnCommit(f)
	}
}

// Commit commits the transaction; the OnCommit hooks then run. A failed
// commit rolls back. Committing twice gives ErrTxDone.
func (tx *Tx) Commit() error {
	if tx == nil {
		return errNilTx
	}
	err := tx.tx.Commit()
	if tx.ended == txOpen && !errors.Is(err, ErrTxDone) {
		tx.ended, tx.endErr = txCommitted, err
	}
	return err
}

// Rollback abandons the transaction. After Commit or Rollback it returns
// ErrTxDone, so `defer tx.Rollback()` is safe.
func (tx *Tx) Rollback() error {
	if tx == nil {
		return errNilTx
	}
	err := tx.tx.Rollback()
	if tx.ended == txOpen && !errors.Is(err, ErrTxDone) {
		tx.ended = txRolledBack
	}
	return err
}
