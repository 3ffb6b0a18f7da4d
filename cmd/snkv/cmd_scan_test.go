package main

import (
	"testing"
)

// TestScan lists ranges, prefixes and glob patterns in key order.
func TestScan(t *testing.T) {
	path := fixture(t)
	runGolden(t, path, []step{
		{name: "scan", args: "scan FILE"},
		{name: "scan-prefix-limit", args: "scan FILE --prefix user: --limit 2"},
		{name: "scan-range-reverse", args: "scan FILE --start b --end user:3 --reverse --keys-only"},
		{name: "scan-with-ttl", args: "scan FILE --cf sessions --with-ttl"},
		{name: "scan-empty", args: "scan FILE --cf empty"},
		{name: "scan-match", args: "scan FILE --match user:[13]"},
		{name: "scan-match-star", args: "scan FILE --match *i* --keys-only"},
		{name: "usage-scan-start-after-end", args: "scan FILE --start z --end a", code: 2},
		{name: "scan-start-is-end", args: "scan FILE --start user:1 --end user:1"},
		{name: "scan-tsv", args: "scan FILE --format tsv"},
		{name: "scan-tsv-ttl", args: "scan FILE --cf sessions --with-ttl --format tsv"},
		{name: "scan-tsv-keys-only", args: "scan FILE --keys-only --format tsv --reverse"},
		{name: "scan-no-header", args: "scan FILE --prefix user: --no-header"},
		{name: "usage-scan-tsv-json", args: "scan FILE --format tsv --json", code: 2},
		{name: "usage-scan-bad-format", args: "scan FILE --format csv", code: 2},
		{name: "scan-match-prefix", args: "scan FILE --match u* --prefix user: --reverse --limit 2"},
	})
}
