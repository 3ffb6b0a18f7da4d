package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// dbEnv names the environment variable of the default store: when it is
// set, every command takes its FILE from it, and FILE is left out of the
// arguments.
const dbEnv = "SNKV_DB"

// defaultStore makes every command under c that takes FILE first take it
// from path instead. This is the one place where a FILE given anyway is
// refused, for every command: by the count of arguments where it is
// fixed, and, before that, when the first argument names a file (see
// namesFile), which is how a FILE given to a command that takes any number
// of keys (get, del) is told from a key.
func defaultStore(c *cobra.Command, path string) {
	givenBy(c, path, fmt.Sprintf("%s=%s gives FILE: leave it out, or unset %s to name the file", dbEnv, path, dbEnv))
}

// givenBy makes every command under c that takes FILE first take path,
// and refuses a FILE given anyway with the message why (what gives FILE).
func givenBy(c *cobra.Command, path, why string) {
	for _, sub := range c.Commands() {
		givenBy(sub, path, why)
	}
	use := strings.Fields(c.Use)
	if len(use) < 2 || use[1] != "FILE" || c.RunE == nil {
		return
	}
	c.Use = strings.Join(append(use[:1:1], use[2:]...), " ")
	// A command whose next argument is a file of its own (backup's DEST)
	// is checked by the count alone.
	fileNext := len(use) > 2 && use[2] == "DEST"
	check, run := c.Args, c.RunE
	c.Args = func(cmd *cobra.Command, args []string) error {
		refuse := func(err error) error {
			return usagef("%s (%s)", err, why)
		}
		if len(args) > 0 && !fileNext && namesFile(args[0]) {
			return refuse(fmt.Errorf("%s: too many arguments: %q names a file (usage: %s)", cmdName(cmd), args[0], cmd.UseLine()))
		}
		if err := check(cmd, append([]string{path}, args...)); err != nil {
			return refuse(err)
		}
		return nil
	}
	c.RunE = func(cmd *cobra.Command, args []string) error {
		return run(cmd, append([]string{path}, args...))
	}
}

// storeSuffixes are the file name endings of SQLite databases.
var storeSuffixes = []string{".db", ".db3", ".sqlite", ".sqlite3", ".snkv"}

// namesFile reports whether the first argument of a command, with SNKV_DB
// set, is a FILE given by habit rather than a key, a name or a timestamp:
// the name of a regular file that exists, or a name ending like a
// database file's (".db", ".sqlite", ...), so that a mistyped file name
// is caught too. A key that is such a name is given with --hex or
// --base64.
func namesFile(arg string) bool {
	if arg == "-" || arg == "" {
		return false
	}
	lower := strings.ToLower(arg)
	for _, s := range storeSuffixes {
		if strings.HasSuffix(lower, s) {
			return true
		}
	}
	fi, err := os.Stat(arg)
	return err == nil && fi.Mode().IsRegular()
}

// withDefaultStore puts the store of SNKV_DB, when it is set, in front of
// the arguments a completion function sees (the command's own FILE).
func withDefaultStore(args []string) []string {
	if path := os.Getenv(dbEnv); path != "" {
		return append([]string{path}, args...)
	}
	return args
}
