package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	sqlite3 "modernc.org/sqlite/lib"
)

// versionText is what --version prints: the module's version (a release
// tag for 'go install ...@version', "(devel)" and the commit for a build
// from a checkout), the SQLite version compiled in, with the driver that
// carries it, and the Go toolchain and platform.
func versionText() string {
	mod, driver := "(unknown)", "modernc.org/sqlite"
	var commit string
	var modified bool
	if bi, ok := debug.ReadBuildInfo(); ok {
		mod = bi.Main.Path + " " + bi.Main.Version
		for _, d := range bi.Deps {
			if d.Path == "modernc.org/sqlite" {
				driver += " " + d.Version
			}
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "snkv: %s", mod)
	if commit != "" {
		fmt.Fprintf(&b, ", commit %.12s", commit)
		if modified {
			b.WriteString(" (modified)")
		}
	}
	fmt.Fprintf(&b, "\nSQLite %s (%s, pure Go)\n%s %s/%s", sqlite3.SQLITE_VERSION, driver, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return b.String()
}
