package main

import (
	"fmt"
	"path/filepath"
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
