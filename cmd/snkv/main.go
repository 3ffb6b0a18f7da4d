package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/snkv-go/snkv/kvstore"
)

// Exit codes of the command, documented in docs/cli.md and in the help.
const (
	exitOK       = 0 // success
	exitError    = 1 // any failure not below
	exitUsage    = 2 // bad command line: unknown command or flag, wrong arguments, bad encoding
	exitNotFound = 3 // the key, the column family or the time-series log does not exist
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
	if err == nil {
		return exitOK
	}
	var silent silentExit
	if errors.As(err, &silent) {
		return silent.code
	}
	code := exitCode(err)
	fmt.Fprintf(stderr, "snkv: %s\n", message(err))
	if code == exitUsage {
		fmt.Fprintf(stderr, "Run 'snkv help' or 'snkv COMMAND --help' for usage.\n")
	}
	return code
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
	case errors.Is(err, kvstore.ErrNotFound):
		return exitNotFound
	}
	return exitError
}

// message returns the text shown for err: the library's own wording, which
// already names the column family and the operation.
func message(err error) string {
	return err.Error()
}
