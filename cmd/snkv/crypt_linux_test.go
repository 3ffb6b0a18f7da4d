//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// terminal is a command run with a pseudo-terminal as its stdin, and a
// test that types on it: the terminal's other side.
type terminal struct {
	t           *testing.T
	master, tty *os.File
	cmd         *exec.Cmd
	stdout      bytes.Buffer
	errPath     string // the command's stderr, a file the test reads as it grows
	seen        int    // how much of stderr the prompts answered so far cover
	done        chan error

	mu     sync.Mutex
	echoed bytes.Buffer // what the terminal echoed back
	copied chan struct{}
}

// onPTY starts the binary with args and extra environment variables env,
// its stdin a new pseudo-terminal.
func onPTY(t *testing.T, env []string, args ...string) *terminal {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	require.NoError(t, unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	s := &terminal{t: t, master: m, tty: tty, errPath: filepath.Join(t.TempDir(), "stderr"), done: make(chan error, 1), copied: make(chan struct{})}
	errFile, err := os.Create(s.errPath)
	require.NoError(t, err)
	defer errFile.Close()
	s.cmd = snkvCmd(t0, args...)
	s.cmd.Env = append(s.cmd.Env, env...)
	s.cmd.Stdin, s.cmd.Stdout, s.cmd.Stderr = tty, &s.stdout, errFile
	require.NoError(t, s.cmd.Start())
	go func() { s.done <- s.cmd.Wait() }()
	go func() {
		defer close(s.copied)
		buf := make([]byte, 256)
		for {
			n, err := m.Read(buf)
			s.mu.Lock()
			s.echoed.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		_ = tty.Close()
		_ = m.Close()
	})
	return s
}

// stderr is what the command wrote on stderr so far.
func (s *terminal) stderr() string {
	b, err := os.ReadFile(s.errPath)
	require.NoError(s.t, err)
	return string(b)
}

// answer waits for prompt on stderr and for the terminal's echo to be
// off, then types password and Enter.
func (s *terminal) answer(prompt, password string) {
	s.t.Helper()
	s.waitFor(fmt.Sprintf("prompt %q", prompt), func() bool {
		i := strings.Index(s.stderr()[s.seen:], prompt)
		if i < 0 {
			return false
		}
		tio, err := unix.IoctlGetTermios(int(s.tty.Fd()), unix.TCGETS)
		require.NoError(s.t, err)
		if tio.Lflag&unix.ECHO != 0 {
			return false
		}
		s.seen += i + len(prompt)
		return true
	})
	_, err := io.WriteString(s.master, password+"\n")
	require.NoError(s.t, err)
}

// waitFor polls ready until it reports true, failing the test if the
// command ends first or 30 seconds pass without what (named in the
// failure).
func (s *terminal) waitFor(what string, ready func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ready() {
		select {
		case err := <-s.done:
			s.t.Fatalf("the command ended (%v) before its %s; stderr: %s", err, what, s.stderr())
		default:
		}
		require.True(s.t, time.Now().Before(deadline), "no %s; stderr: %q", what, s.stderr())
		time.Sleep(5 * time.Millisecond)
	}
}

// wait waits for the command to end and returns what it printed and its
// exit code; what the terminal echoed must hold none of secrets.
func (s *terminal) wait(secrets ...string) result {
	s.t.Helper()
	var err error
	select {
	case err = <-s.done:
	case <-time.After(60 * time.Second):
		s.t.Fatalf("the command did not end; stderr: %s", s.stderr())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(s.t, err)
	}
	_ = s.tty.Close()
	<-s.copied
	r := result{s.stdout.String(), s.stderr(), code}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pw := range secrets {
		require.NotContains(s.t, s.echoed.String(), pw, "the terminal echoed the password")
		require.NotContains(s.t, r.stdout, pw)
		require.NotContains(s.t, r.stderr, pw)
	}
	return r
}

// TestPasswordPrompt gives the password on a terminal: encrypt asks for
// the new one twice, other commands ask once, rekey asks for the current
// one and twice for the new one; nothing typed is echoed.
func TestPasswordPrompt(t *testing.T) {
	path, plain := markedFixture(t)

	// Two different answers: nothing changes.
	s := onPTY(t, nil, with([]string{"encrypt", path}, cheapKDF...)...)
	s.answer("New password for "+path+": ", "first typing")
	s.answer("Repeat the new password: ", "second typing")
	r := s.wait("first typing", "second typing")
	require.Equal(t, exitError, r.code, r.stderr)
	require.Contains(t, r.stderr, "the two passwords differ: nothing was changed")
	require.Equal(t, result{marker, "", 0}, cli(t, nil, "get", path, "marked"))

	s = onPTY(t, nil, with([]string{"encrypt", path}, cheapKDF...)...)
	s.answer("New password for "+path+": ", "typed secret")
	s.answer("Repeat the new password: ", "typed secret")
	r = s.wait("typed secret")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, path+": encrypted with a password (Argon2id, 1 pass, 8 KiB, 1 thread)\n", r.stdout)

	s = onPTY(t, nil, "get", path, "marked")
	s.answer("Password for "+path+": ", "typed secret")
	require.Equal(t, result{marker, "Password for " + path + ": \n", 0}, s.wait("typed secret"))

	s = onPTY(t, nil, "get", path, "marked")
	s.answer("Password for "+path+": ", "not the secret")
	r = s.wait("not the secret")
	require.Equal(t, exitAuth, r.code)
	require.Contains(t, r.stderr, "the password does not open the store")

	// --password-prompt asks even when the environment has a password.
	s = onPTY(t, []string{passwordEnv + "=ignored"}, "export", path, "--plaintext", "--password-prompt")
	s.answer("Password for "+path+": ", "typed secret")
	r = s.wait("typed secret")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, plain, r.stdout)

	s = onPTY(t, nil, with([]string{"rekey", path}, cheapKDF...)...)
	s.answer("Password for "+path+": ", "typed secret")
	s.answer("New password for "+path+": ", "newer secret")
	s.answer("Repeat the new password: ", "newer secret")
	r = s.wait("typed secret", "newer secret")
	require.Equal(t, 0, r.code, r.stderr)
	r = cliEnv(t, []string{passwordEnv + "=newer secret"}, "get", path, "marked")
	require.Equal(t, result{marker, "", 0}, r)
}

// TestPasswordPromptInterrupted stops a command waiting for a password
// with Ctrl-C: it ends (exit code 1, saying so) and gives the terminal its
// echo back.
func TestPasswordPromptInterrupted(t *testing.T) {
	path := fixture(t)
	r := cli(t, nil, with([]string{"encrypt", path, "--password-file", secretFile(t, "pw")}, cheapKDF...)...)
	require.Equal(t, 0, r.code, r.stderr)
	s := onPTY(t, nil, "get", path, "user:1")
	for {
		tio, err := unix.IoctlGetTermios(int(s.tty.Fd()), unix.TCGETS)
		require.NoError(t, err)
		if tio.Lflag&unix.ECHO == 0 && strings.Contains(s.stderr(), "Password for") {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, s.cmd.Process.Signal(os.Interrupt))
	r = s.wait()
	require.Equal(t, exitError, r.code)
	require.Contains(t, r.stderr, "snkv: interrupted: no password was given")
	tio, err := unix.IoctlGetTermios(int(s.master.Fd()), unix.TCGETS)
	require.NoError(t, err)
	require.NotZero(t, tio.Lflag&unix.ECHO, "the terminal was left without echo")
}

// TestEncryptInterrupted stops an encryption part way (SIGINT once the
// conversion writes): the store opens with the new key and reads every
// value, and encrypt run again finishes it.
func TestEncryptInterrupted(t *testing.T) {
	n := 200_000
	path := plainStore(t, n)
	keyFile := secretFile(t, strings.Repeat("k", 32))
	converting := func(int) bool {
		fi, err := os.Stat(path + "-wal")
		return err == nil && fi.Size() > 256<<10
	}
	cmd, stdout, stderr, done := started(t, converting, "encrypt", path, "--key-file", keyFile)
	code := interruptAndWait(t, cmd, done)
	if code == 0 {
		t.Logf("the encryption ended before the signal: %s", stdout)
	} else {
		require.Equal(t, exitError, code, stderr.String())
		require.Contains(t, stderr.String(), "interrupted: the encryption stopped at a batch boundary; the store opens with the new key, and 'snkv encrypt "+path+"' run again with it finishes")
	}
	r := cli(t, nil, "count", path, "--key-file", keyFile)
	require.Equal(t, result{fmt.Sprintf("%d\n", n), "", 0}, r)
	r = cli(t, nil, "count", path)
	require.Equal(t, exitAuth, r.code, "a store part encrypted opens without its key")

	r = cli(t, nil, "encrypt", path, "--key-file", keyFile)
	require.Equal(t, result{path + ": encrypted already; the key given opens it\n", "", 0}, r)
	r = cli(t, nil, "check", path, "--key-file", keyFile)
	require.Equal(t, 0, r.code, r.stderr)
	requireSealed(t, path, "value 199999")
	r = cli(t, nil, "get", path, "k0199999", "--key-file", keyFile)
	require.Equal(t, result{"value 199999", "", 0}, r)
}
