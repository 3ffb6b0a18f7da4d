package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStripPrefixes removes the packages' prefixes where the layers of a
// wrapped error repeat them, and names a log the way the CLI does.
func TestStripPrefixes(t *testing.T) {
	for in, want := range map[string]string{
		"snkv: open column family: snkv: not found":                                         "open column family: not found",
		"snkv: default: put: snkv: store is read-only":                                      "default: put: store is read-only",
		`timelog: "big": timelog: busy: the write was accepted`:                             `time-series log "big": busy: the write was accepted`,
		`line 3: timelog: "a \"b\"": timelog: closed`:                                       `line 3: time-series log "a \"b\"": closed`,
		`time-series log "cpu" is open for writing`:                                         `time-series log "cpu" is open for writing`,
		`timelog: unknown subcommand "lss"`:                                                 `timelog: unknown subcommand "lss"`,
		`time-series log "x": snkv: timelog: corrupt`:                                       `time-series log "x": corrupt`,
		`snkv: sessions: iterate: snkv: database is corrupt: key "perm": checksum mismatch`: `sessions: iterate: database is corrupt: key "perm": checksum mismatch`,
	} {
		require.Equal(t, want, stripPrefixes(in), in)
	}
}
