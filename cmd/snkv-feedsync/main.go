package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// errUsage is a command line that names no role or a bad flag.
var errUsage = errors.New("usage: snkv-feedsync server -store S -listen ADDR | device -store D -push URL [-cf C] [-prefix P] [-name N] [-resnapshot]")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "snkv-feedsync:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// run runs the role args name until ctx ends (nil then) or it fails. It
// writes its progress to out, one line at a time.
func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	store := fs.String("store", "", "the store's file")
	switch args[0] {
	case "server":
		listen := fs.String("listen", "127.0.0.1:8377", "the address to listen on")
		if err := fs.Parse(args[1:]); err != nil || *store == "" || fs.NArg() > 0 {
			return fmt.Errorf("%w (%v)", errUsage, err)
		}
		return runServer(ctx, ServerOptions{Store: *store, Listen: *listen, Out: out})
	case "device":
		push := fs.String("push", "", "the server's push URL")
		cf := fs.String("cf", "default", "the column family to push")
		prefix := fs.String("prefix", "", "push only the keys with this prefix")
		name := fs.String("name", "feedsync", "the consumer's name in the device's store, and the source's name on the server")
		resnap := fs.Bool("resnapshot", false, "start again from a snapshot of the column family (after ErrCompacted or ErrEpoch)")
		batch := fs.Int("batch", 512, "the most changes in one push")
		if err := fs.Parse(args[1:]); err != nil || *store == "" || *push == "" || fs.NArg() > 0 {
			return fmt.Errorf("%w (%v)", errUsage, err)
		}
		return runDevice(ctx, DeviceOptions{Store: *store, Push: *push, CF: *cf, Prefix: []byte(*prefix),
			Name: *name, Resnapshot: *resnap, Batch: *batch, Out: out})
	default:
		return fmt.Errorf("%w (unknown role %q)", errUsage, args[0])
	}
}
