package main

import (
	"testing"
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
	})
}
