package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTimelogAppend appends from the arguments and from stdin, to a log of handles and to a values log, creating them with --create.
func TestTimelogAppend(t *testing.T) {
	runSteps(t, logFixture(t))
}

// recordLines is stdin of n records "TS HANDLE", made as it is read (a
// test of millions of records holds none of them).
type recordLines struct {
	n, i int
	buf  []byte
}

func (r *recordLines) Read(p []byte) (int, error) {
	for len(r.buf) < len(p) && r.i < r.n {
		r.buf = strconv.AppendInt(r.buf, 1_700_000_000_000+int64(r.i), 10)
		r.buf = append(r.buf, ' ')
		r.buf = strconv.AppendInt(r.buf, int64(r.i), 10)
		r.buf = append(r.buf, '\n')
		r.i++
	}
	if len(r.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// TestTimelogAppendMany loads more records from stdin than the sealed
// queue of the log holds (it stopped at about 209k records with a "busy"
// error, while 4,096 more than it reported were stored): every record is
// stored, and the count reported is the count stored. 300k records; 3M
// without -short.
func TestTimelogAppendMany(t *testing.T) {
	n := 3_000_000
	if testing.Short() {
		n = 300_000
	}
	path := filepath.Join(t.TempDir(), "many.db")
	r := cli(t, &recordLines{n: n}, "timelog", "append", path, "big", "--create", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, fmt.Sprintf(`{"appended":%d,"log":"big"}`+"\n", n), r.stdout)
	r = cli(t, nil, "timelog", "count", path, "big")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, fmt.Sprintf("%d\n", n), r.stdout)
	r = cli(t, nil, "timelog", "tail", path, "big", "-n", "1", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, fmt.Sprintf(`{"log":"big","ts":%d,"handle":%d}`+"\n", 1_700_000_000_000+int64(n-1), n-1), r.stdout)
}

// TestTimelogWriteBadLogName: a name no log can have is a usage error
// (exit 2) for every command that writes a log, as for the ones that read
// it and for append --create; without --create it was reported as a
// missing log (exit 3).
func TestTimelogWriteBadLogName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.db")
	r := cli(t, nil, "timelog", "append", path, "ok", "1", "1", "--create")
	require.Equal(t, 0, r.code, r.stderr)
	for _, name := range []string{"", strings.Repeat("x", 241)} {
		for _, args := range [][]string{
			{"append", path, name, "1", "1"},
			{"delete-before", path, name, "1"},
			{"compact", path, name},
			{"count", path, name},
		} {
			r := cli(t, nil, append([]string{"timelog"}, args...)...)
			require.Equal(t, 2, r.code, "%s %.10q: %s", args[0], name, r.stderr)
			require.Contains(t, r.stderr, "bad log name")
		}
	}
}
