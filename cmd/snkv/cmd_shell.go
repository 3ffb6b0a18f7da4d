package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

const shellLong = `Open the store once and run commands on it, one a line, as on the command
line but without 'snkv' and without FILE: 'get user:1', 'scan --prefix
user: --limit 5', 'cf list', 'timelog range cpu --start 10'. An encrypted
store asks for its password (or takes it from --password-file, --key-file
or the environment) once, when the shell opens it. The store is opened for
writing when the file is writable, read-only otherwise.

On a terminal the line can be edited (arrows, Home/End, Ctrl-A/E/K/U/W,
Alt-arrows by word) and Up/Down walk the history, which is kept in
~/.snkv_history (SNKV_HISTORY names another file; set but empty keeps it
for the session only); a line that gives a secret as a flag's value is
never kept. Ctrl-C clears the line being typed, or stops the command that
runs (the shell goes on); Ctrl-D on an empty line, 'exit' or 'quit' ends
the shell ('exit N' with exit code N, from 0 to 255). A line typed on a
terminal holds at most 4096 characters: a longer one is refused, not run
cut short. Off a terminal, the shell reads its commands from stdin, with no
prompt: 'snkv shell app.db < commands.txt'.

Arguments are split as a POSIX shell splits them, without expansions:
'single' and "double" quotes, a backslash before a character; a line
starting with # is a comment. stdin is the shell's own input, so inside
it a value cannot come from '-' (use --value-file, and import --in). The
flags that set how the store is opened (--create, --adopt, --file-mode,
--busy-timeout, --max-value-size and the secret's) are given to 'snkv
shell', not to the commands in it. encrypt, rekey and decrypt do not run
in the shell (the store is open): run them on their own.

Each command's exit code shows as "(exit N)" after its message when it is
not 0 (2 for a line that cannot be split). Reading from a terminal, the
shell's own exit code is 0; reading stdin, it is the last command's;
'exit N' sets it either way.`

// notInShell are the commands the shell does not run: those that change
// how the store is sealed while the shell holds it open, the shell itself,
// and completion scripts.
var notInShell = []string{"encrypt", "rekey", "decrypt", "shell", "completion"}

// sessionFlags are the global flags that set how the store is opened: the
// shell takes them, the commands in it do not.
var sessionFlags = []string{"create", "adopt", "file-mode", "busy-timeout", "max-value-size", "password-file", "key-file", "password-prompt"}

func (a *app) shellCommand() *cobra.Command {
	return takes(&cobra.Command{
		Use:   "shell FILE",
		Short: "Run commands on one store interactively, with line editing and history",
		Long:  shellLong,
		Example: `  snkv shell app.db
  snkv shell secret.db --key-file app.key
  snkv shell app.db < commands.txt`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runShell(args[0])
		},
	}, "adopt,max-value-size")
}

// shell is a session: the store it opened, and how it reads lines.
type shell struct {
	a    *app
	db   *kvstore.Store
	path string
	// lastCode is the exit code of the last command run.
	lastCode int
	// exitCode is the code 'exit N' asked for, if exitAsked.
	exitCode  int
	exitAsked bool

	// mu guards cancel, the cancellation of the command that runs.
	mu     sync.Mutex
	cancel context.CancelFunc
	quit   bool // SIGTERM or SIGHUP came: end after the command
}

// runShell opens the store at path once and runs the commands read from
// stdin on it.
func (a *app) runShell(path string) error {
	write := true
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) && checkWritable(path) != nil {
		write = false
	}
	db, err := a.open(path, write)
	if err != nil {
		return err
	}
	defer db.Close()
	if a.stopSignals != nil {
		// Opened (Ctrl-C at the password prompt ends the shell): from now
		// on Ctrl-C stops the command that runs, not the shell.
		a.stopSignals()
	}
	s := &shell{a: a, db: db, path: path}
	stopSignals := s.watchSignals()
	defer stopSignals()
	if !write {
		fmt.Fprintf(a.err, "snkv: note: %s is not writable: the shell opened it read-only\n", path)
	}
	var code int
	if a.stdinIsTerminal() {
		// Each command's failure was shown; the session itself went well.
		err = s.interactive()
	} else {
		err, code = s.script(), s.lastCode
	}
	if err != nil {
		return err
	}
	if s.exitAsked {
		code = s.exitCode
	}
	if code != exitOK {
		return silentExit{code}
	}
	return nil
}

// watchSignals cancels the command that runs on Ctrl-C, and ends the
// shell after it on SIGTERM or SIGHUP.
func (s *shell) watchSignals() (stop func()) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-ch:
				s.mu.Lock()
				if sig != os.Interrupt {
					s.quit = true
				}
				if s.cancel != nil {
					s.cancel()
				}
				s.mu.Unlock()
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// ended reports whether a signal asked the shell to end.
func (s *shell) ended() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.quit
}

// script runs the commands of stdin, a line each, without a prompt.
func (s *shell) script() error {
	r := bufio.NewReaderSize(s.a.in, 1<<16)
	for !s.ended() {
		line, err := readLine(r, 1<<20)
		if len(line) > 0 && !s.runLine(string(line)) {
			return nil
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the commands: %w", err)
		}
	}
	return nil
}

// interactive runs the commands typed on the terminal, with line editing
// and history.
func (s *shell) interactive() error {
	in := s.a.in.(*os.File)
	fd := int(in.Fd())
	hist := loadHistory(historyPath())
	defer func() {
		if err := hist.save(); err != nil {
			fmt.Fprintf(s.a.err, "snkv: note: the history was not saved: %v\n", err)
		}
	}()
	// The terminal is written through stdin's descriptor, which is the
	// terminal, so that the line being edited never mixes with stdout.
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{&ctrlCReader{r: in}, in}, "snkv> ")
	t.History = hist
	fmt.Fprintf(s.a.err, "snkv shell on %s: 'help' lists the commands, 'exit' or Ctrl-D ends\n", s.path)
	for !s.ended() {
		if w, h, err := term.GetSize(fd); err == nil && w > 0 && h > 0 {
			_ = t.SetSize(w, h) // a terminal without a size keeps 80 columns
		}
		state, err := term.MakeRaw(fd)
		if err != nil {
			return fmt.Errorf("the terminal: %w", err)
		}
		line, err := t.ReadLine()
		_ = term.Restore(fd, state)
		if errors.Is(err, io.EOF) {
			fmt.Fprintln(s.a.err)
			return nil
		}
		if err != nil && !errors.Is(err, term.ErrPasteIndicator) {
			return fmt.Errorf("reading the line: %w", err)
		}
		if utf8.RuneCountInString(line) >= terminalLineMax {
			// The editor dropped what came after: the line is not the one
			// typed, and run cut short it could store a cut value.
			fmt.Fprintf(s.a.err, "snkv: the line reached %d characters, the most a line typed on a terminal holds, and the rest was dropped: nothing was run (give a long value with --value-file, or run the commands from a file: 'snkv shell FILE < commands.txt')\n(exit %d)\n", terminalLineMax, exitUsage)
			s.lastCode = exitUsage
			continue
		}
		if !s.runLine(line) {
			return nil
		}
	}
	return nil
}

// terminalLineMax is the most characters term.Terminal keeps in a line:
// it drops each one typed or pasted after that.
const terminalLineMax = 4096

// ctrlCReader passes the terminal's input through, turning Ctrl-C into
// End, Ctrl-U and Enter: the line being typed is dropped and a new prompt
// shown (term.Terminal itself ends its ReadLine on Ctrl-C).
type ctrlCReader struct {
	r       io.Reader
	pending []byte
}

func (c *ctrlCReader) Read(p []byte) (int, error) {
	if len(c.pending) == 0 {
		buf := make([]byte, len(p))
		n, err := c.r.Read(buf)
		for _, b := range buf[:n] {
			if b == 3 {
				c.pending = append(c.pending, 5, 21, '\r')
			} else {
				c.pending = append(c.pending, b)
			}
		}
		if len(c.pending) == 0 {
			return 0, err
		}
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// runLine runs one line; false when it ends the shell.
func (s *shell) runLine(line string) bool {
	args, err := splitLine(line)
	if err != nil {
		s.lastCode = exitUsage
		fmt.Fprintf(s.a.err, "snkv: %v\n(exit %d)\n", err, s.lastCode)
		return true
	}
	if len(args) == 0 {
		return true
	}
	switch args[0] {
	case "exit", "quit", ".exit", ".quit":
		if len(args) > 1 {
			// exit N, as a POSIX shell has it.
			s.exitAsked = true
			n, err := strconv.Atoi(args[1])
			if len(args) > 2 || err != nil || n < 0 || n > 255 {
				fmt.Fprintf(s.a.err, "snkv: %s %q: want one exit code, from 0 to 255\n", args[0], strings.Join(args[1:], " "))
				n = exitUsage
			}
			s.exitCode = n
		}
		return false
	}
	s.lastCode = s.exec(args)
	if s.lastCode != exitOK {
		fmt.Fprintf(s.a.err, "(exit %d)\n", s.lastCode)
	}
	return true
}

// exec runs one command on the session's store and returns its exit code.
func (s *shell) exec(args []string) int {
	a := newApp(stdinOfShell{}, s.a.rawOut, s.a.err)
	a.session, a.sessionPath, a.unlocked = s.db, s.path, s.a.unlocked
	a.maxValue, a.busyTimeout, a.fileMode = s.a.maxValue, s.a.busyTimeout, s.a.fileMode
	if a.clockErr == nil && os.Getenv(nowEnv) == "" {
		// The store's clock, which the shell moves to now before each
		// command: every command still reads one fixed now.
		s.a.clock.Set(time.Now())
	}
	a.clock = s.a.clock
	root := a.rootCommand()
	root.CompletionOptions.DisableDefaultCmd = true
	for _, c := range root.Commands() {
		if slices.Contains(notInShell, c.Name()) {
			name := c.Name()
			c.Hidden, c.Args = true, cobra.ArbitraryArgs
			c.RunE = func(*cobra.Command, []string) error { return usagef("%s", shellUsage(name)) }
		}
	}
	root.SetArgs(negativesPositional(root, args))
	ctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	s.cancel = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cancel = nil
		s.mu.Unlock()
		cancel()
	}()
	return a.finish(ctx, root.ExecuteContext(ctx))
}

// checkSessionFlags refuses, inside the shell, a flag that sets how the
// store is opened: the shell opened it already.
func checkSessionFlags(cmd *cobra.Command) error {
	for _, name := range sessionFlags {
		if name == "create" && cmdName(cmd) == "timelog append" {
			continue // there it creates the log, in the store the shell opened
		}
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			return usagef("--%s sets how the store is opened: give it to 'snkv shell', which opened the store", name)
		}
	}
	return nil
}

// stdinOfShell is the stdin of a command the shell runs: the shell's own
// input, which a command may not read.
type stdinOfShell struct{}

func (stdinOfShell) Read([]byte) (int, error) {
	return 0, errors.New("stdin is the shell's input: give a value with --value-file, and import with --in")
}

// shellUsage is what the shell says of a command it does not run.
func shellUsage(name string) string {
	return fmt.Sprintf("%s does not run in the shell (the store is open): run 'snkv %s FILE' on its own", name, name)
}
