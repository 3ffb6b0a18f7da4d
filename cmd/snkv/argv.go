package main

import (
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// negativeNumber is an argument that is a negative number: a timestamp
// or a bound of a time-series log, never a flag (no flag of snkv is a
// digit).
var negativeNumber = regexp.MustCompile(`^-[0-9]`)

// negativesPositional rewrites a command line so that arguments that are
// negative numbers reach the command as arguments ("timelog append FILE
// LOG -5 10", "timelog delete-before FILE LOG -1"), where the flag parser
// would take "-5" for the shorthand flags -5: it moves the command's
// arguments, from the first such one on, after a "--", keeping their
// order, and leaves every flag and flag value before it. A command line
// that has a "--" already, or that names no command, is left as it is.
func negativesPositional(root *cobra.Command, args []string) []string {
	if slices.Contains(args, "--") {
		return args
	}
	cmd, _, err := root.Find(args)
	if err != nil || cmd == root {
		return args
	}
	lookup := func(name string) *pflag.Flag {
		if f := cmd.Flags().Lookup(name); f != nil {
			return f
		}
		return cmd.InheritedFlags().Lookup(name)
	}
	lookupShort := func(c string) *pflag.Flag {
		if f := cmd.Flags().ShorthandLookup(c); f != nil {
			return f
		}
		return cmd.InheritedFlags().ShorthandLookup(c)
	}
	takesValue := func(f *pflag.Flag) bool { return f != nil && f.NoOptDefVal == "" }
	path := strings.Fields(cmd.CommandPath())[1:]
	var flags, positional []string
	first := -1 // index in positional of the first negative number
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case negativeNumber.MatchString(a):
			if first < 0 {
				first = len(positional)
			}
			positional = append(positional, a)
		case strings.HasPrefix(a, "--") && len(a) > 2:
			flags = append(flags, a)
			if !strings.Contains(a, "=") && takesValue(lookup(a[2:])) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			flags = append(flags, a)
			// -n 5: the last letter of a group takes the next argument.
			if takesValue(lookupShort(a[len(a)-1:])) && !strings.Contains(a, "=") && i+1 < len(args) && len(a) == 2 {
				i++
				flags = append(flags, args[i])
			}
		default:
			positional = append(positional, a)
		}
	}
	if first < 0 {
		return args
	}
	// The command's own name and its parents' stay in front of "--".
	words := 0
	for words < len(path) && words < len(positional) && positional[words] == path[words] {
		words++
	}
	if first < words {
		return args
	}
	out := append(slices.Clone(positional[:words]), flags...)
	out = append(out, positional[words:first]...)
	out = append(out, "--")
	return append(out, positional[first:]...)
}
