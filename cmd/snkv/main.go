package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/snkv-go/snkv/kvstore"
)

// Exit codes of the command, documented in docs/cli.md and in the help.
const (
	exitOK       = 0 // success
	exitError    = 1 // any failure not below
	exitUsage    = 2 // bad command line: unknown command or flag, wrong arguments, bad encoding
	exitNotFound = 3 // the key, the column family or the time-series log does not exist
	exitDamaged  = 4 // the store is damaged (kvstore.ErrCorrupt): run check, then repair
	exitAuth     = 5 // an encrypted store without its password or key, or with the wrong one
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one command line and returns its exit code. Ctrl-C (SIGINT)
// and SIGTERM cancel the context of the command: long commands stop at a
// batch boundary and report what they did. A second signal kills the
// process the default way.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // restore the default behaviour for a second signal
	}()

	app := newApp(stdin, stdout, stderr)
	root := app.rootCommand()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if ferr := app.flushOut(); err == nil && ferr != nil {
		err = ferr
	}
	if err == nil {
		return exitOK
	}
	var silent silentExit
	if errors.As(err, &silent) {
		return silent.code
	}
	if interrupted(ctx, err) && !errors.As(err, new(interruptError)) {
		// A command without its own report of what it did before the
		// signal: say that it was interrupted, not "context canceled".
		err = interruptError{fmt.Errorf("interrupted: %s", stripPrefixes(err.Error()))}
	}
	code := exitCode(err)
	fmt.Fprintf(stderr, "snkv: %s\n", message(err, app.storePath))
	if code == exitUsage {
		fmt.Fprintf(stderr, "Run 'snkv help' or 'snkv COMMAND --help' for usage.\n")
	}
	return code
}

// interruptError is the report of a command stopped by Ctrl-C or SIGTERM
// (exit code 1): what it did before stopping.
type interruptError struct{ err error }

func (e interruptError) Error() string { return e.err.Error() }
func (e interruptError) Unwrap() error { return e.err }

// interruptedf returns the report of an interrupted command.
func interruptedf(format string, args ...any) error {
	return interruptError{fmt.Errorf(format, args...)}
}

// usageError marks a bad command line (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usage error with a formatted message.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// silentExit ends a command with a code and no message (exists on a missing
// key: the answer is the exit code and the "false" already printed).
type silentExit struct{ code int }

func (e silentExit) Error() string { return fmt.Sprintf("exit %d", e.code) }

// exitCode maps an error to the command's exit code.
func exitCode(err error) int {
	var u usageError
	switch {
	case errors.As(err, &u):
		return exitUsage
	case errors.As(err, new(interruptError)):
		return exitError
	case errors.As(err, new(authError)):
		return exitAuth
	case errors.Is(err, kvstore.ErrCorrupt), errors.As(err, new(damagedError)), errors.Is(err, kvstore.ErrAuth):
		// ErrAuth of a store that opened: a sealed value that fails
		// authentication (changed, truncated, or copied from elsewhere).
		return exitDamaged
	case errors.Is(err, kvstore.ErrNotFound):
		return exitNotFound
	}
	return exitError
}

// damagedError marks a store found damaged (exit code 4) by a failure
// that does not carry kvstore.ErrCorrupt itself: a failed check, or a
// column family whose hidden objects cannot be read.
type damagedError struct {
	err error
	// final: the message says all there is to do (a file damaged below
	// what repair mends); no advice is added.
	final bool
}

func (e damagedError) Error() string { return e.err.Error() }
func (e damagedError) Unwrap() error { return e.err }

// damagedAdvice is what the message about a damaged store at path ends
// with.
func damagedAdvice(path string) string {
	if path == "" {
		path = "FILE"
	}
	return fmt.Sprintf("\nthe store is damaged: 'snkv check %s' lists what is wrong; 'snkv repair %s' mends damaged hidden objects (views, triggers, TTL tables, catalog rows), never data rows", path, path)
}

// message returns the text shown for err: the library's own wording, which
// already names the column family and the operation, without the
// library's own "snkv: " prefixes (the line already starts with one), and
// for a damaged store what to do about it (path: the store the command
// opened).
func message(err error, path string) string {
	msg := stripPrefixes(err.Error())
	var d damagedError
	if exitCode(err) == exitDamaged && !(errors.As(err, &d) && d.final) {
		msg += damagedAdvice(path)
	}
	return msg
}

// stripPrefixes removes the library's "snkv: " from the start of msg and
// from the start of every ": "-separated part of it: a wrapped error
// carries one per layer ("snkv: default: put: snkv: store is read-only").
func stripPrefixes(msg string) string {
	const p = "snkv: "
	msg = strings.TrimLeft(strings.TrimPrefix(msg, p), " ")
	for strings.HasPrefix(msg, p) {
		msg = strings.TrimPrefix(msg, p)
	}
	for strings.Contains(msg, ": "+p) {
		msg = strings.ReplaceAll(msg, ": "+p, ": ")
	}
	return msg
}
