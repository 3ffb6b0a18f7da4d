package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

// nowEnv names an environment variable that fixes the command's clock, for
// tests of TTL behaviour only: an RFC 3339 time or milliseconds since the
// Unix epoch. It is deliberately left out of the help and of docs/cli.md.
const nowEnv = "SNKV_CLI_NOW"

// app holds what every command shares: the streams, the global flags and
// the clock.
type app struct {
	in       io.Reader
	out, err io.Writer

	cf       string // --cf
	json     bool   // --json
	create   bool   // --create
	adopt    bool   // --adopt
	hexIn    bool   // --hex
	base64In bool   // --base64

	// clock is the time every expiry decision of the command uses: fixed
	// when the command starts, so that a TTL shown, exported or imported is
	// exact to the millisecond and a whole export sees one "now".
	clock *kvstore.ManualClock
	// clockErr reports a bad nowEnv value when a command starts.
	clockErr error
}

func newApp(in io.Reader, out, errw io.Writer) *app {
	a := &app{in: in, out: out, err: errw}
	now := time.Now()
	if v := os.Getenv(nowEnv); v != "" {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			now = time.UnixMilli(ms)
		} else if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			now = t
		} else {
			a.clockErr = fmt.Errorf("bad %s value %q: want RFC 3339 or Unix milliseconds", nowEnv, v)
		}
	}
	a.clock = kvstore.NewManualClock(now)
	return a
}

// nowMs is the command's time in milliseconds since the Unix epoch.
func (a *app) nowMs() int64 { return a.clock.Now().UnixMilli() }

const rootLong = `snkv inspects and operates snkv stores: SQLite files written by the
github.com/snkv-go/snkv key-value library.

Every command takes the store FILE first, then its own arguments; flags may
come anywhere. --cf selects the column family (default: "default").

Read commands (ls, get, exists, ttl, scan, cf list, stats, check, export,
backup, timelog) open the store read-only: they never write to it, and are
safe to run next to an application that has it open. They also work on a
file you may not write. Write commands need write access to the file and its
directory (for the -wal and -shm files).

A missing FILE is never created unless you pass --create. A SQLite database
of another application is refused; --adopt turns it into a store, adding
snkv's tables beside the existing ones.

Keys and values are given as arguments (as text; with --hex or --base64
decoded first), with --value-file, or as '-' to read them from stdin.
Binary keys and values are shown escaped: printable ASCII as is, a
backslash as \\, any other byte as \xNN. --json prints JSON (one object per
line for listings); there a key or value that is valid UTF-8 is a string,
anything else is base64 under "key_base64" / "value_base64".

Exit codes:
  0  success
  1  error
  2  usage error (unknown command or flag, wrong arguments, bad encoding)
  3  the key, the column family or the time-series log does not exist`

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "snkv",
		Short:         "Inspect and operate snkv stores",
		Long:          rootLong,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				msg := fmt.Sprintf("unknown command %q", args[0])
				if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
					msg += fmt.Sprintf(" (did you mean %q?)", s[0])
				}
				return usageError{fmt.Errorf("%s", msg)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if a.hexIn && a.base64In {
				return usagef("--hex and --base64 exclude each other")
			}
			return a.clockErr
		},
	}
	root.SetIn(a.in)
	root.SetOut(a.out)
	root.SetErr(a.err)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })

	pf := root.PersistentFlags()
	pf.StringVar(&a.cf, "cf", kvstore.DefaultColumnFamily, "column family `NAME`")
	pf.BoolVar(&a.json, "json", false, "print JSON (JSON Lines for listings) instead of tables")
	pf.BoolVar(&a.create, "create", false, "create FILE as a new store if it does not exist")
	pf.BoolVar(&a.adopt, "adopt", false, "turn a SQLite database of another application into a store")
	pf.BoolVar(&a.hexIn, "hex", false, "keys, values and bounds given as arguments are hex")
	pf.BoolVar(&a.base64In, "base64", false, "keys, values and bounds given as arguments are base64")
	_ = root.RegisterFlagCompletionFunc("cf", a.completeCF)

	root.AddGroup(
		&cobra.Group{ID: "read", Title: "Read commands (open the store read-only):"},
		&cobra.Group{ID: "write", Title: "Write commands:"},
	)
	for _, c := range []*cobra.Command{
		a.lsCommand(), a.getCommand(), a.existsCommand(), a.ttlCommand(), a.scanCommand(),
		a.statsCommand(), a.checkCommand(), a.exportCommand(), a.backupCommand(),
	} {
		c.GroupID = "read"
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{
		a.putCommand(), a.delCommand(), a.expireCommand(), a.persistCommand(),
		a.purgeCommand(), a.checkpointCommand(), a.vacuumCommand(), a.importCommand(),
		a.repairCommand(), a.upgradeCommand(),
	} {
		c.GroupID = "write"
		root.AddCommand(c)
	}
	root.AddCommand(a.cfCommand(), a.timelogCommand())
	return root
}

// args returns a cobra argument check that reports a usage error unless
// the command has between min and max arguments (max < 0: no limit).
func nargs(min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < min:
			return usagef("%s: missing arguments (usage: %s)", cmd.Name(), cmd.UseLine())
		case max >= 0 && len(args) > max:
			return usagef("%s: too many arguments (usage: %s)", cmd.Name(), cmd.UseLine())
		}
		return nil
	}
}

// completeCF completes --cf with the column families of the store named by
// the first argument, opened read-only.
func (a *app) completeCF(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	db, err := kvstore.Open(args[0], kvstore.Options{ReadOnly: true})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer db.Close()
	names, _ := db.ListColumnFamilies()
	return names, cobra.ShellCompDirectiveNoFileComp
}

// cfChanged reports whether --cf was given (commands that act on every
// column family unless told otherwise).
func cfChanged(cmd *cobra.Command) bool {
	f := cmd.Flags().Lookup("cf")
	return f != nil && f.Changed
}
