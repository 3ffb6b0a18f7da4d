package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

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

// interruptError is the report of a command stopped by Ctrl-C or SIGTERM
// (exit code 1): what it did before stopping.
type interruptError struct{ err error }

func (e interruptError) Error() string { return e.err.Error() }

func (e interruptError) Unwrap() error { return e.err }

// interruptedf returns the report of an interrupted command.
func interruptedf(format string, args ...any) error {
	return interruptError{fmt.Errorf(format, args...)}
}

// interrupted reports whether err is the cancellation of the command
// (Ctrl-C or SIGTERM).
func interrupted(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

// usageError marks a bad command line (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }

func (e usageError) Unwrap() error { return e.err }

// isUsage reports whether err is a usage error.
func isUsage(err error) bool { return errors.As(err, new(usageError)) }

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
// with; checked: the command is check, which has said what is wrong.
func damagedAdvice(path string, checked bool) string {
	if path == "" {
		path = "FILE"
	}
	repair := fmt.Sprintf("'snkv repair %s' mends damaged hidden objects (views, triggers, TTL tables, catalog rows), never data rows", path)
	if checked {
		return "\nthe store is damaged: " + repair + "; a row that fails its checksum or its authentication is mended only by writing it again or restoring a backup"
	}
	return fmt.Sprintf("\nthe store is damaged: 'snkv check %s' lists what is wrong; %s", path, repair)
}

// message returns the text shown for err: the library's own wording, which
// already names the column family and the operation, without the
// library's own "snkv: " prefixes (the line already starts with one), and
// for a damaged store what to do about it (about the store the command
// opened; check is never told to run check).
func (a *app) message(err error) string {
	msg := stripPrefixes(err.Error())
	var d damagedError
	if exitCode(err) == exitDamaged && !(errors.As(err, &d) && d.final) {
		msg += damagedAdvice(a.storePath, a.checking)
	}
	return msg
}

// timelogPrefix is the time-series package's prefix of an error about one
// log: `timelog: "cpu": `.
var timelogPrefix = regexp.MustCompile(`(^|: )timelog: ("(?:[^"\\]|\\.)*"): `)

// stripPrefixes removes the packages' own prefixes from msg, where a
// wrapped error carries one per layer: kvstore's "snkv: " at its start and
// at the start of every ": "-separated part ("snkv: default: put: snkv:
// store is read-only"), and timelog's "timelog: " inside it; timelog's
// prefix that names a log becomes the CLI's name for it (`time-series log
// "cpu": busy`). A message of the CLI's own that starts with a command's
// name ("timelog: missing subcommand") keeps it.
func stripPrefixes(msg string) string {
	msg = timelogPrefix.ReplaceAllString(msg, `${1}time-series log $2: `)
	const p = "snkv: "
	msg = strings.TrimLeft(msg, " ")
	for strings.HasPrefix(msg, p) {
		msg = strings.TrimPrefix(msg, p)
	}
	for _, p := range []string{p, "timelog: "} {
		for strings.Contains(msg, ": "+p) {
			msg = strings.ReplaceAll(msg, ": "+p, ": ")
		}
	}
	return msg
}

// strip drops the library's repeated "snkv: " and "open \"path\": " prefixes
// from a message that is about to be prefixed by the file name.
func strip(err error) string {
	s := err.Error()
	for {
		t := strings.TrimPrefix(s, "snkv: ")
		if strings.HasPrefix(t, "open \"") {
			if i := strings.Index(t, "\": "); i >= 0 {
				t = t[i+3:]
			}
		}
		if t == s {
			return s
		}
		s = t
	}
}

// notFound is an error with its own message that counts as
// kvstore.ErrNotFound (exit code 3).
type notFound struct{ msg string }

func (e notFound) Error() string { return e.msg }

func (e notFound) Is(target error) bool { return target == kvstore.ErrNotFound }

// keyError turns the library's ErrNotFound for a key into a message that
// names the key and the column family; other errors pass unchanged.
func keyError(cf *kvstore.ColumnFamily, key []byte, err error) error {
	if errors.Is(err, kvstore.ErrNotFound) {
		return notFound{fmt.Sprintf("key %q not found in column family %q", showText(key), cf.Name())}
	}
	if errors.Is(err, kvstore.ErrValueTooLarge) {
		return usageError{fmt.Errorf("%w (--max-value-size raises the limit)", err)}
	}
	if errors.Is(err, kvstore.ErrInvalidKey) || errors.Is(err, kvstore.ErrKeyTooLarge) || errors.Is(err, kvstore.ErrInvalidTTL) {
		return usageError{err}
	}
	return err
}

// readError turns an error met while reading column family cf (a scan, a
// count) into what it means. Such a read cannot miss a key, so ErrNotFound
// there means a table or view of cf is gone: cf was dropped meanwhile, or,
// if the catalog still lists it, its hidden objects are damaged (exit code
// 4, with what to run).
func readError(db *kvstore.Store, cf string, err error) error {
	if err == nil || !errors.Is(err, kvstore.ErrNotFound) || errors.Is(err, kvstore.ErrCorrupt) {
		return err
	}
	if _, oerr := db.OpenColumnFamily(cf); oerr != nil {
		return err // dropped meanwhile: the library's own message says so
	}
	return damagedError{err: fmt.Errorf("column family %q is listed in the catalog but cannot be read: %s", cf, stripPrefixes(err.Error()))}
}
