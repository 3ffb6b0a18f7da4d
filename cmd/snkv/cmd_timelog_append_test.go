package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTimelogAppend appends from the arguments and from stdin, to a log of handles and to a values log, creating them with --create.
func TestTimelogAppend(t *testing.T) {
	path := logFixture(t)
	runGolden(t, path, []step{
		{name: "tlw-append-missing", args: "timelog append FILE mem 1 10", code: 3},
		{name: "tlw-append-create", args: "timelog append FILE mem 1 10 --create"},
		{name: "tlw-append-stdin", args: "timelog append FILE mem --json", stdin: "2 20\n3\t30\n\n4 40\r\n"},
		{name: "tlw-append-bad-handle", args: "timelog append FILE mem 5 x", code: 2},
		{name: "tlw-append-bad-line", args: "timelog append FILE mem", stdin: "6 60\n7\n", code: 2},
		{name: "tlw-append-half", args: "timelog append FILE mem 5", code: 2},
		{name: "tlw-range", args: "timelog range FILE mem"},
		{name: "tlw-values-create", args: "timelog append FILE ev --create --values --time-unit s 2030-01-02T03:04:05Z disk-full"},
		{name: "tlw-values-existing", args: "timelog append FILE mem --create --values 9 x", code: 2},
		{name: "tlw-values-stdin", args: "timelog append FILE ev", stdin: "1893553446\tnaïve\ttab\n1893553447 two words\n"},
		{name: "tlw-values-range", args: "timelog range FILE ev --time-unit s"},
		{name: "tlw-values-json", args: "timelog range FILE ev --reverse --json"},
		{name: "tlw-values-tail", args: "timelog tail FILE ev -n 2 --escape"},
		{name: "tlw-delete-before-rfc3339", args: "timelog delete-before FILE mem --time-unit ms 1970-01-01T00:00:00.003Z --json"},
		{name: "tlw-usage-bad-ts", args: "timelog append FILE mem soon 1", code: 2},
		{name: "tlw-append-negative", args: "timelog append FILE mem -5 50"},
		{name: "tlw-append-negative-json", args: "timelog append FILE mem --json -7 70"},
		{name: "tlw-range-negative", args: "timelog range FILE mem --start -10 --end 0"},
		{name: "tlw-delete-before-negative", args: "timelog delete-before FILE mem -6"},
	})
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
