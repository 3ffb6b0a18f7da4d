package main

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// splitLine splits a line of the shell into arguments, as a POSIX shell
// does without its expansions: blanks separate arguments; 'single quotes'
// keep everything inside as it is; "double quotes" keep everything but
// \" and \\, which stand for " and \; outside quotes a backslash keeps the
// next character as it is. A line that starts with # is a comment.
func splitLine(line string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inArg := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		case c == '#' && !inArg:
			return args, nil
		case c == '\'':
			inArg = true
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("a ' is not closed")
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inArg = true
			closed := false
			for i++; i < len(line); i++ {
				if line[i] == '"' {
					closed = true
					break
				}
				if line[i] == '\\' && i+1 < len(line) && (line[i+1] == '"' || line[i+1] == '\\') {
					i++
				}
				cur.WriteByte(line[i])
			}
			if !closed {
				return nil, errors.New(`a " is not closed`)
			}
		case c == '\\':
			inArg = true
			if i+1 < len(line) {
				i++
				cur.WriteByte(line[i])
			}
		default:
			inArg = true
			cur.WriteByte(c)
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}

// historyMax is how many lines the shell's history keeps.
const historyMax = 1000

// history is the shell's history of lines (the most recent last), kept in
// a file between sessions: term.Terminal's History.
type history struct {
	lines []string
	path  string // "" keeps it for the session only
}

// historyPath is the file of the history: $SNKV_HISTORY (set but empty:
// none), else ~/.snkv_history.
func historyPath() string {
	if p, ok := os.LookupEnv("SNKV_HISTORY"); ok {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".snkv_history")
}

// loadHistory reads the history file, if there is one.
func loadHistory(path string) *history {
	h := &history{path: path}
	if path == "" {
		return h
	}
	f, err := os.Open(path)
	if err != nil {
		return h
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		h.lines = append(h.lines, sc.Text())
	}
	if len(h.lines) > historyMax {
		h.lines = h.lines[len(h.lines)-historyMax:]
	}
	return h
}

// Add records a line: not an empty one, not the one just before again,
// and never one that gives a secret as a flag's value (the command refuses
// it, and the history must not keep it).
func (h *history) Add(line string) {
	line = strings.TrimSpace(line)
	if line == "" || (len(h.lines) > 0 && h.lines[len(h.lines)-1] == line) || givesSecret(line) || strings.ContainsAny(line, "\n\r") {
		return
	}
	h.lines = append(h.lines, line)
	if len(h.lines) > historyMax {
		h.lines = slices.Delete(h.lines, 0, len(h.lines)-historyMax)
	}
}

// Len is the number of lines kept.
func (h *history) Len() int { return len(h.lines) }

// At is the line idx steps back (0: the most recent).
func (h *history) At(idx int) string { return h.lines[len(h.lines)-1-idx] }

// save writes the history to its file, readable by its owner only.
func (h *history) save() error {
	if h.path == "" {
		return nil
	}
	return os.WriteFile(h.path, []byte(strings.Join(h.lines, "\n")+"\n"), 0o600)
}

// givesSecret reports whether a line holds a refused secret flag
// (--password, --key, ...), whose value must not reach the history.
func givesSecret(line string) bool {
	args, err := splitLine(line)
	if err != nil {
		return strings.Contains(line, "--password") || strings.Contains(line, "--key") || strings.Contains(line, "--new-")
	}
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && slices.Contains(refusedSecretFlags, name) {
			return true
		}
	}
	return false
}
