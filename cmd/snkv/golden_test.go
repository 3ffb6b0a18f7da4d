package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// step is one command of a golden test: its arguments (FILE stands for the
// store), an optional stdin and the exit code it must end with.
type step struct {
	name  string
	args  string
	stdin string
	code  int
}

// runSteps runs the steps of testdata/steps/<test name>.txt in order
// against the store at path (see runGolden). The file holds a line a step,
// NAME EXIT ARGS: the golden file's name (testdata/golden/NAME.txt), the
// exit code the command must end with, and its arguments (FILE stands for
// the store). A step's standard input follows it, either on one line as a
// Go string literal after "< ", or as the lines up to END after a line
// "<<END". Lines starting with # outside an input are comments. subst
// holds more pairs of a word in ARGS and what it stands for, as runGolden
// takes them.
func runSteps(t *testing.T, path string, subst ...string) {
	t.Helper()
	runGolden(t, path, readSteps(t, filepath.Join("testdata", "steps", t.Name()+".txt")), subst...)
}

// readSteps parses a steps file (see runSteps).
func readSteps(t *testing.T, file string) []step {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var steps []step
	ls := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i := 0; i < len(ls); i++ {
		l := ls[i]
		where := fmt.Sprintf("%s:%d", file, i+1)
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case l == "<<END":
			require.NotEmpty(t, steps, "%s: an input before any step", where)
			j := i + 1
			for j < len(ls) && ls[j] != "END" {
				j++
			}
			require.Less(t, j, len(ls), "%s: no END", where)
			steps[len(steps)-1].stdin = strings.Join(ls[i+1:j], "\n") + "\n"
			i = j
		case strings.HasPrefix(l, "< "):
			require.NotEmpty(t, steps, "%s: an input before any step", where)
			in, err := strconv.Unquote(l[2:])
			require.NoError(t, err, where)
			steps[len(steps)-1].stdin = in
		default:
			f := strings.SplitN(l, " ", 3)
			require.Len(t, f, 3, "%s: not NAME EXIT ARGS", where)
			code, err := strconv.Atoi(f[1])
			require.NoError(t, err, "%s: the exit code", where)
			steps = append(steps, step{name: f[0], code: code, args: f[2]})
		}
	}
	require.NotEmpty(t, steps, file)
	return steps
}

// runGolden runs steps in order against the store at path and compares
// each one's stdout, stderr and exit code with its golden file.
func runGolden(t *testing.T, path string, steps []step, subst ...string) {
	t.Helper()
	subst = append([]string{"FILE", path}, subst...)
	for _, s := range steps {
		args := strings.Fields(s.args)
		for i, a := range args {
			for j := 0; j < len(subst); j += 2 {
				a = strings.ReplaceAll(a, subst[j], subst[j+1])
			}
			args[i] = a
		}
		var in *strings.Reader
		if s.stdin != "" {
			in = strings.NewReader(s.stdin)
		}
		var r result
		if in != nil {
			r = cliDir(t, filepath.Dir(path), t0, in, args...)
		} else {
			r = cliDir(t, filepath.Dir(path), t0, nil, args...)
		}
		requireClean(t, r)
		stdout, stderr := r.stdout, r.stderr
		for j := len(subst) - 2; j >= 0; j -= 2 {
			stdout = strings.ReplaceAll(stdout, subst[j+1], subst[j])
			stderr = strings.ReplaceAll(stderr, subst[j+1], subst[j])
		}
		got := fmt.Sprintf("$ snkv %s\n%s--- stderr\n%s--- exit %d\n", s.args, stdout, stderr, r.code)
		golden(t, s.name+".txt", got)
		require.Equal(t, s.code, r.code, "%s: exit code of snkv %s\nstderr: %s", s.name, s.args, r.stderr)
	}
}
