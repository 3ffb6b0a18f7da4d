package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
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
	// stdout is the process's stdout when out writes to it (through a
	// buffer that run flushes), for the terminal test; nil otherwise.
	stdout *os.File
	outBuf *bufio.Writer
	// rawOut is the stream out buffers, for the shell's commands.
	rawOut io.Writer

	// storePath is the store the command opened, for messages.
	storePath string
	// escapeOut is --escape: binary-safe ASCII escaping everywhere.
	escapeOut bool

	cf       string // --cf
	json     bool   // --json
	create   bool   // --create
	adopt    bool   // --adopt
	hexIn    bool   // --hex
	base64In bool   // --base64
	// fileMode is --file-mode (0: the library's default).
	fileMode os.FileMode
	// maxValue is --max-value-size (0: the library's default).
	maxValue int
	// noHeader is --no-header: tables without their header row.
	noHeader bool
	// busyTimeout is --busy-timeout (0: the library's default, 5 s).
	busyTimeout time.Duration

	// clock is the time every expiry decision of the command uses: fixed
	// when the command starts, so that a TTL shown, exported or imported is
	// exact to the millisecond and a whole export sees one "now".
	clock *kvstore.ManualClock
	// clockErr reports a bad nowEnv value when a command starts.
	clockErr error

	// ctx is the command's context (Ctrl-C), for a password prompt.
	ctx context.Context
	// secret says where the secret of an encrypted store comes from
	// (--password-file, --key-file, --password-prompt, the environment).
	secret secretFlags
	// encrypting: the command encrypts the store, so a secret flag names
	// the secret to set, and a store without encryption takes it.
	encrypting bool
	// needEncrypted names what a command does that needs an encrypted
	// store ("re-key", "decrypt"): a store without encryption is refused.
	needEncrypted string
	// onEncrypted, when set, runs when the store turns out to be
	// encrypted, before its secret is read (export refuses there unless
	// told to write plaintext).
	onEncrypted func() error
	// unlocked: the store was opened with its secret.
	unlocked bool
	// checking: the command is check, whose messages never say to run
	// check.
	checking bool

	// session is the store the shell opened, at sessionPath: every command
	// the shell runs works on it, and it stays open between them.
	session     *kvstore.Store
	sessionPath string
	// stopSignals gives up run's handling of Ctrl-C and SIGTERM, for the
	// shell, which handles them per command.
	stopSignals func()
}

func newApp(in io.Reader, out, errw io.Writer) *app {
	a := &app{in: in, out: out, err: errw, rawOut: out}
	if f, ok := out.(*os.File); ok {
		a.stdout = f
	}
	// Output is buffered (a scan of millions of keys would otherwise make
	// a system call per line) and flushed when the command ends, before
	// any error message, and by commands that wait (timelog tail -f).
	a.outBuf = bufio.NewWriterSize(out, 1<<16)
	a.out = a.outBuf
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
	a.ctx = context.Background()
	return a
}

// flushOut writes what is buffered for stdout.
func (a *app) flushOut() error { return a.outBuf.Flush() }

// nowMs is the command's time in milliseconds since the Unix epoch.
func (a *app) nowMs() int64 { return a.clock.Now().UnixMilli() }

const rootLong = `snkv inspects and operates snkv stores: SQLite files written by the
github.com/snkv-go/snkv key-value library.

Every command takes the store FILE first, then its own arguments; flags may
come anywhere. --cf selects the column family (default: "default"). With
SNKV_DB set, FILE comes from it and is left out of the arguments. A flag a
command does not use is refused.

Read commands (ls, get, exists, ttl, scan, count, cf list, stats, check,
export, backup, and timelog ls, count, range, tail, stats) open the store
read-only: they never write to it, and are safe to run next to an
application that has it open. They also work on a file you may not write.
Write commands need write access to the file and its directory (for the
-wal and -shm files).

An encrypted store needs its password or key: --password-file PATH (its
first line), --key-file PATH (32 raw bytes or 64 hex digits), SNKV_PASSWORD
or SNKV_KEY (hex), or, when stdin is a terminal, a prompt with no echo. A
secret is never taken as a flag's value. 'snkv encrypt', 'rekey' and
'decrypt' set, change and remove encryption; 'export' of an encrypted
store writes plaintext only with --plaintext.

A missing FILE is never created unless you pass --create. A SQLite database
of another application is refused; --adopt turns it into a store, adding
snkv's tables beside the existing ones.

Keys and values are given as arguments (as text; with --hex or --base64
decoded first), with --value-file, or as '-' to read them from stdin.
Tables show keys and values as text: valid UTF-8 as it is, a backslash as
\\, anything that cannot be shown safely as \xNN; --escape shows every
byte that is not printable ASCII as \xNN. 'get' of one key writes its
exact bytes when stdout is not a terminal. --json prints JSON (one object
per line for listings); there a key or value that is valid UTF-8 is a
string, unless base64 is shorter than the escaped string; that, and
anything else, is base64 under "key_base64" / "value_base64".
Listings stream, in bounded memory.

Exit codes:
  0  success
  1  error
  2  usage error (unknown command or flag, wrong arguments, bad encoding)
  3  the key, the column family or the time-series log does not exist
  4  the store is damaged ('snkv check' lists what, 'snkv repair' mends
     hidden objects)
  5  the store is encrypted and no password or key was given, or not the
     right one`

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
				if s := closest(args[0], cmd.SuggestionsFor(args[0])); s != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", s)
				}
				return usageError{fmt.Errorf("%s", msg)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			a.ctx = cmd.Context()
			if err := checkRefusedSecretFlags(cmd); err != nil {
				return err
			}
			if a.session != nil {
				if err := checkSessionFlags(cmd); err != nil {
					return err
				}
			}
			if err := checkGlobals(cmd); err != nil {
				return err
			}
			if a.hexIn && a.base64In {
				return usagef("--hex and --base64 exclude each other")
			}
			if a.busyTimeout < 0 || a.busyTimeout > kvstore.MaxBusyTimeout {
				return usagef("--busy-timeout %v: want a duration from 0s to %v", a.busyTimeout, kvstore.MaxBusyTimeout)
			}
			return a.clockErr
		},
		Version: versionText(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SuggestionsMinimumDistance = 2
	root.SetIn(a.in)
	root.SetOut(a.out)
	root.SetErr(a.err)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{redactFlagError(err)} })

	pf := root.PersistentFlags()
	pf.StringVar(&a.cf, "cf", kvstore.DefaultColumnFamily, "column family `NAME`")
	pf.BoolVar(&a.json, "json", false, "print JSON (JSON Lines for listings) instead of tables")
	pf.BoolVar(&a.create, "create", false, "create FILE as a new store if it does not exist")
	pf.BoolVar(&a.adopt, "adopt", false, "turn a SQLite database of another application into a store")
	pf.BoolVar(&a.hexIn, "hex", false, "keys, values and bounds given as arguments are hex")
	pf.BoolVar(&a.base64In, "base64", false, "keys, values and bounds given as arguments are base64")
	pf.BoolVar(&a.noHeader, "no-header", false, "print tables without their header row")
	pf.DurationVar(&a.busyTimeout, "busy-timeout", 0, "how long to wait for a lock another program holds, as `DURATION` (default 5s; 0s: the default)")
	pf.BoolVar(&a.escapeOut, "escape", false, "show keys and values with every byte that is not printable ASCII as \\xNN")
	pf.Var(sizeFlag{&a.maxValue}, "max-value-size", "the largest value the command writes or reads in, in bytes or with a KiB, MiB or GiB suffix (default 10MiB, the library's)")
	pf.Var(fileModeFlag{&a.fileMode}, "file-mode", "permission bits (octal) of every file the command creates: a new store and its -wal/-shm, a backup, an export (default 0600)")
	a.addSecretFlags(root)
	_ = root.RegisterFlagCompletionFunc("cf", a.completeCF)

	root.AddGroup(
		&cobra.Group{ID: groupRead, Title: "Read commands (open the store read-only):"},
		&cobra.Group{ID: groupWrite, Title: "Write commands:"},
	)
	for _, reg := range commands() {
		c := reg.build(a)
		if reg.group != "" {
			c.GroupID = reg.group
			takes(c, reg.flags)
		}
		root.AddCommand(c)
	}
	switch path := os.Getenv(dbEnv); {
	case a.session != nil:
		givenBy(root, a.sessionPath, "the shell works on "+a.sessionPath+": leave FILE out")
	case path != "":
		defaultStore(root, path)
	}
	return root
}

// globalFlags are the flags every command parses (the root's, and
// timelog's --time-unit for its subcommands); each command names the ones
// it uses, and refuses the others.
var globalFlags = []string{"cf", "json", "create", "adopt", "hex", "base64", "escape", "no-header", "time-unit", "file-mode", "max-value-size", "busy-timeout", "password-file", "key-file", "password-prompt"}

// takes records the global flags c uses (a comma-separated list; --create,
// --file-mode, --busy-timeout and the flags that give an encrypted store's
// secret are taken by every command that opens a store, so they are not
// listed).
func takes(c *cobra.Command, flags string) *cobra.Command {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations["globals"] = flags + ",create,file-mode,busy-timeout,password-file,key-file,password-prompt"
	return c
}

// checkGlobals refuses a global flag that cmd does not use, rather than
// ignoring it: 'snkv ls --cf sessions' lists every column family, which is
// not what was asked.
func checkGlobals(cmd *cobra.Command) error {
	taken := strings.Split(cmd.Annotations["globals"], ",")
	for _, name := range globalFlags {
		f := cmd.Flags().Lookup(name)
		if f != nil && f.Changed && !slices.Contains(taken, name) {
			return usagef("%s does not take --%s (see 'snkv %s --help')", cmdName(cmd), name, cmdName(cmd))
		}
	}
	return nil
}

// group makes c a group of subcommands: run alone or with a name that is
// none of them, it fails with the list of its subcommands and, for a
// misspelt one, the closest ("did you mean ...").
func group(c *cobra.Command) *cobra.Command {
	c.Args = cobra.ArbitraryArgs
	c.SuggestionsMinimumDistance = 2
	c.RunE = func(cmd *cobra.Command, args []string) error {
		var names []string
		for _, sub := range cmd.Commands() {
			if sub.IsAvailableCommand() {
				names = append(names, sub.Name())
			}
		}
		list := strings.Join(names, ", ")
		if len(args) == 0 {
			return usagef("%s: missing subcommand (%s)", cmdName(cmd), list)
		}
		msg := fmt.Sprintf("%s: unknown subcommand %q", cmdName(cmd), args[0])
		if s := closest(args[0], cmd.SuggestionsFor(args[0])); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		return usagef("%s; the subcommands are %s", msg, list)
	}
	return c
}

// closest returns the candidate nearest to typed in edit distance (the
// first of equals), or "" when there is none.
func closest(typed string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(typed), strings.ToLower(c)); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// cmdName is the command's path without the program's name ("cf drop").
func cmdName(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// args returns a cobra argument check that reports a usage error unless
// the command has between min and max arguments (max < 0: no limit).
func nargs(min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < min:
			return usagef("%s: missing arguments (usage: %s)", cmdName(cmd), cmd.UseLine())
		case max >= 0 && len(args) > max:
			return usagef("%s: too many arguments (usage: %s)", cmdName(cmd), cmd.UseLine())
		}
		return nil
	}
}

// completeCF completes --cf with the column families of the store named by
// the first argument, opened read-only.
func (a *app) completeCF(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	args = withDefaultStore(args)
	if len(args) == 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	db, err := openForCompletion(args[0])
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
