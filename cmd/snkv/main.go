package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
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
	app.stopSignals = stop
	root := app.rootCommand()
	root.SetArgs(negativesPositional(root, args))
	return app.finish(ctx, root.ExecuteContext(ctx))
}

// finish ends a command that returned err under ctx: it writes what is
// buffered for stdout, reports err on stderr, and returns the exit code.
func (a *app) finish(ctx context.Context, err error) int {
	if ferr := a.flushOut(); err == nil && ferr != nil {
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
	fmt.Fprintf(a.err, "snkv: %s\n", a.message(err))
	if code == exitUsage {
		fmt.Fprintf(a.err, "Run 'snkv help' or 'snkv COMMAND --help' for usage.\n")
	}
	return code
}
