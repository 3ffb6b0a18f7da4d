package main

import (
	"fmt"
	"os"
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

// TestGoldenRead runs every read command, and the usage errors, against
// the fixture.
func TestGoldenRead(t *testing.T) {
	path := fixture(t)
	runGolden(t, path, []step{
		{name: "ls", args: "ls FILE"},
		{name: "cf-list", args: "cf list FILE"},
		{name: "get", args: "get FILE user:1"},
		{name: "get-escaped", args: "get FILE --hex 62696e00ff"},
		{name: "get-utf8-escaped", args: `get FILE back\slash`},
		{name: "get-empty", args: "get FILE zero"},
		{name: "get-base64", args: "get FILE --base64 dXNlcjoy"},
		{name: "get-stdin", args: "get FILE -", stdin: "user:3"},
		{name: "get-raw", args: "get FILE --hex 62696e00ff --raw"},
		{name: "get-escape", args: "get FILE --hex 62696e00ff --escape"},
		{name: "get-escape-utf8", args: `get FILE back\slash --escape`},
		{name: "get-many-hex", args: "get FILE --hex 757365723a31 62696e00ff"},
		{name: "get-many-table", args: `get FILE user:1 back\slash config`},
		{name: "get-many-missing", args: "get FILE user:1 nope user:2 gone", code: 3},
		{name: "get-many-json", args: "get FILE user:1 user:2 --json"},
		{name: "get-many-escape", args: `get FILE back\slash user:1 --escape`},
		{name: "get-missing", args: "get FILE nope", code: 3},
		{name: "get-missing-cf", args: "get FILE --cf nope k", code: 3},
		{name: "exists", args: "exists FILE user:1"},
		{name: "exists-missing", args: "exists FILE nope", code: 3},
		{name: "ttl-permanent", args: "ttl FILE user:1"},
		{name: "ttl", args: "ttl --cf sessions FILE tok-b"},
		{name: "ttl-expired", args: "ttl FILE --cf sessions tok-old", code: 3},
		{name: "scan", args: "scan FILE"},
		{name: "scan-prefix-limit", args: "scan FILE --prefix user: --limit 2"},
		{name: "scan-range-reverse", args: "scan FILE --start b --end user:3 --reverse --keys-only"},
		{name: "scan-with-ttl", args: "scan FILE --cf sessions --with-ttl"},
		{name: "scan-empty", args: "scan FILE --cf empty"},
		{name: "scan-match", args: "scan FILE --match user:[13]"},
		{name: "scan-match-star", args: "scan FILE --match *i* --keys-only"},
		{name: "scan-match-prefix", args: "scan FILE --match u* --prefix user: --reverse --limit 2"},
		{name: "count", args: "count FILE"},
		{name: "count-cf", args: "count FILE --cf sessions --json"},
		{name: "count-prefix", args: "count FILE --prefix user:"},
		{name: "count-match", args: "count FILE --match *:?"},
		{name: "count-range", args: "count FILE --start b --end user:2"},
		{name: "stats", args: "stats FILE"},
		{name: "check", args: "check FILE"},
		{name: "export-cf", args: "export FILE --cf sessions"},
		{name: "export-prefix", args: "export FILE --prefix tok-"},
		{name: "export-match", args: "export FILE --cf default --match user:?"},
		{name: "export-tsv", args: "export FILE --format tsv"},
		{name: "export-tsv-cf", args: "export FILE --format tsv --cf sessions"},
		{name: "usage-no-args", args: "get", code: 2},
		{name: "usage-too-many", args: "ttl FILE a b", code: 2},
		{name: "usage-flag-not-taken", args: "ls FILE --cf sessions", code: 2},
		{name: "usage-flag-not-taken-hex", args: "stats FILE --hex", code: 2},
		{name: "usage-cf-typo", args: "cf creat FILE x", code: 2},
		{name: "usage-cf-no-subcommand", args: "cf", code: 2},
		{name: "usage-cf-unknown", args: "cf frobnicate FILE", code: 2},
		{name: "usage-timelog-typo", args: "timelog lss FILE", code: 2},
		{name: "usage-expire-at-past", args: "put FILE k v --expire-at 2020-01-01T00:00:00Z", code: 2},
		{name: "usage-expire-at-now", args: "expire FILE user:1 --expire-at 2030-01-02T03:04:05Z", code: 2},
		{name: "usage-bad-format", args: "export FILE --format csv", code: 2},
		{name: "usage-import-cf-jsonl", args: "import FILE --cf x", code: 2},
		{name: "usage-unknown-command", args: "gte FILE k", code: 2},
		{name: "usage-unknown-flag", args: "get FILE k --bogus", code: 2},
		{name: "usage-bad-hex", args: "get FILE --hex zz", code: 2},
		{name: "usage-hex-and-base64", args: "get FILE --hex --base64 00", code: 2},
		{name: "usage-bad-ttl", args: "put FILE k v --ttl soon", code: 2},
		{name: "usage-negative-ttl", args: "put FILE k v --ttl -5m", code: 2},
		{name: "usage-ttl-and-expire-at", args: "put FILE k v --ttl 5m --expire-at 2031-01-01T00:00:00Z", code: 2},
		{name: "usage-put-no-value", args: "put FILE k", code: 2},
		{name: "usage-checkpoint-mode", args: "checkpoint FILE --mode sideways", code: 2},
		{name: "usage-bad-cf-name", args: "get FILE --cf __snkv_catalog k", code: 2},
	})
}

// TestGoldenWrite runs the write commands in a sequence on one fixture,
// each followed by what a read shows of its effect.
func TestGoldenWrite(t *testing.T) {
	path := fixture(t)
	backup := filepath.Join(filepath.Dir(path), "backup.db")
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(path), "value.bin"), []byte("\x00\x01bytes\xfe"), 0o644))
	runGolden(t, path, []step{
		{name: "w-put", args: "put FILE user:4 dave"},
		{name: "w-put-stdin", args: "put FILE --cf sessions tok-c - --ttl 45m", stdin: "from\x00stdin"},
		{name: "w-put-expire-at", args: "put FILE --cf sessions tok-d D --expire-at 2030-01-02T05:00:00Z"},
		{name: "w-put-days", args: "put FILE --cf sessions week W --ttl 7d"},
		{name: "w-ttl-days", args: "ttl FILE --cf sessions week"},
		{name: "w-put-days-hours", args: "put FILE --cf sessions longer L --ttl 1d12h"},
		{name: "w-ttl-days-hours", args: "ttl FILE --cf sessions longer --json"},
		{name: "w-put-hex", args: "put FILE --hex 0001 ff00"},
		{name: "w-put-value-file", args: "put FILE blob --value-file value.bin"},
		{name: "w-get-value-file", args: "get FILE blob --json"},
		{name: "w-put-value-file-missing", args: "put FILE blob --value-file nowhere.bin", code: 1},
		{name: "w-put-value-twice", args: "put FILE blob v --value-file value.bin", code: 2},
		{name: "w-scan-after-put", args: "scan FILE --cf sessions --with-ttl"},
		{name: "w-expire", args: "expire FILE --cf sessions perm 10m"},
		{name: "w-persist", args: "persist FILE --cf sessions tok-a"},
		{name: "w-ttl-after", args: "scan FILE --cf sessions --with-ttl --keys-only"},
		{name: "w-expire-missing", args: "expire FILE --cf sessions nope 10m", code: 3},
		{name: "w-del", args: "del FILE user:1"},
		{name: "w-del-missing", args: "del FILE user:1", code: 3},
		{name: "w-del-many", args: "del FILE user:2 nope user:3 --json", code: 3},
		{name: "w-del-many-after", args: "scan FILE --prefix user: --keys-only"},
		{name: "w-cf-create", args: "cf create FILE logs"},
		{name: "w-cf-create-exists", args: "cf create FILE LOGS", code: 1},
		{name: "w-cf-drop-nonempty", args: "cf drop FILE sessions", code: 1},
		{name: "w-cf-drop-default", args: "cf drop FILE default", code: 1},
		{name: "w-cf-drop-missing", args: "cf drop FILE nope", code: 3},
		{name: "w-cf-drop", args: "cf drop FILE logs"},
		{name: "w-put-missing-cf", args: "put FILE --cf logs k v", code: 3},
		{name: "w-ls-before-purge", args: "ls FILE"},
		{name: "w-purge", args: "purge FILE"},
		{name: "w-ls-after-purge", args: "ls FILE"},
		{name: "w-purge-cf", args: "purge FILE --cf sessions"},
		{name: "w-import", args: "import FILE", stdin: `{"cf":"imported","key":"a","value":"1"}
{"cf":"imported","key_base64":"AP8=","value_base64":"/wA=","expire_ms":1893560645001}
{"cf":"imported","key":"gone","value":"x","expire_ms":1893553445000}

{"cf":"Quiet"}
{"cf":"default","key":"user:9","value":"ivy"}
`},
		{name: "w-import-exported", args: "export FILE --cf imported"},
		{name: "w-import-bad-line", args: "import FILE", code: 1, stdin: `{"cf":"other","key":"a","value":"1"}
{"cf":"other","key":"b","value":1}
`},
		{name: "w-import-unknown-field", args: "import FILE", code: 1, stdin: `{"cf":"other","key":"a","valeu":"1"}
`},
		{name: "w-import-mixed", args: "import FILE", code: 1, stdin: `{"cf":"x1","key":"a","value":"1"}
{"cf":"x2","key":"a","value":"1"}
{"cf":"x1","key":"b","value":"1"}
`},
		{name: "w-import-mixed-batch", args: "import FILE --batch 2", stdin: `{"cf":"x1","key":"a","value":"1"}
{"cf":"x2","key":"a","value":"1"}
{"cf":"x1","key":"b","value":"1"}
`},
		{name: "w-ls-after-import", args: "ls FILE"},
		{name: "w-import-tsv", args: "import FILE --format tsv --cf tsv", stdin: "plain\tvalue\nesc\\x00aped\ttab\\there\\nnewline\ncaf\xc3\xa9\tlater\t1893560645001\nold\tgone\t1893553445000\n"},
		{name: "w-import-tsv-scan", args: "scan FILE --cf tsv --with-ttl"},
		{name: "w-import-tsv-export", args: "export FILE --cf tsv --format tsv"},
		{name: "w-import-tsv-bad", args: "import FILE --format tsv --cf tsv", stdin: "only-one-field\n", code: 1},
		{name: "w-cf-clear", args: "cf clear FILE tsv --json"},
		{name: "w-cf-clear-after", args: "ls FILE"},
		{name: "w-cf-clear-missing", args: "cf clear FILE nope", code: 3},
		{name: "w-check", args: "check FILE"},
		{name: "w-repair-json", args: "repair FILE --json"},
		{name: "w-backup", args: "backup FILE backup.db"},
		{name: "w-backup-exists", args: "backup FILE backup.db", code: 1},
		{name: "w-backup-missing-dir", args: "backup FILE nowhere/backup.db", code: 1},
		{name: "w-create-missing-dir", args: "put nowhere/new.db k v --create", code: 1},
		{name: "w-open-missing-dir", args: "get nowhere/new.db k", code: 1},
	})
	r := cli(t, nil, "ls", backup)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, cli(t, nil, "ls", path).stdout, r.stdout, "the backup holds what the store holds")
}
