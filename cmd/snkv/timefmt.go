package main

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// A timelog stores timestamps as opaque int64 values: the command prints
// them as raw integers and reads integers. --time-unit names the unit the
// application uses (seconds, milliseconds, microseconds or nanoseconds
// since the Unix epoch); with it the command also shows each timestamp in
// RFC 3339 and accepts RFC 3339 bounds.

// timeUnits maps the values of --time-unit to units per second.
var timeUnits = map[string]int64{"s": 1, "ms": 1e3, "us": 1e6, "ns": 1e9}

// parseTimeUnit reads --time-unit: "" (raw integers only) or a unit,
// returned as units per second (0 for "").
func parseTimeUnit(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	k, ok := timeUnits[s]
	if !ok {
		return 0, usagef("bad --time-unit %q: want s, ms, us or ns", s)
	}
	return k, nil
}

// parseTimestamp reads the bound given to flag: an int64, or with a time
// unit (perSec > 0) an RFC 3339 time converted to that unit. A time between
// two units is rounded up, so that a record counts as inside [start, end)
// exactly when its instant is.
//
// flag names the flag ("start": --start) or, in capitals, the argument
// ("TS") the value came from, for messages.
func parseTimestamp(flag, s string, perSec int64) (int64, error) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, nil
	}
	if flag != strings.ToUpper(flag) {
		flag = "--" + flag
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, usagef("bad %s %q: want an integer timestamp (or an RFC 3339 time with --time-unit)", flag, s)
	}
	if perSec == 0 {
		return 0, usagef("%s %q: an RFC 3339 time needs --time-unit (s, ms, us or ns: the unit of the log's timestamps)", flag, s)
	}
	sec, nsec := t.Unix(), int64(t.Nanosecond())
	nsPerUnit := int64(1e9) / perSec
	if sec > (math.MaxInt64-perSec)/perSec || sec < math.MinInt64/perSec+1 {
		return 0, usagef("%s %q: out of the range of int64 timestamps in that unit", flag, s)
	}
	v := sec*perSec + nsec/nsPerUnit
	if nsec%nsPerUnit != 0 {
		v++
	}
	return v, nil
}

// Years an RFC 3339 time can show.
var (
	minShown = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	maxShown = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
)

// formatTimestamp shows ts, counted in units of 1/perSec second since the
// Unix epoch, as an RFC 3339 time in UTC; "" when it falls outside the
// years 0000 to 9999.
func formatTimestamp(ts, perSec int64) string {
	sec, rem := ts/perSec, ts%perSec
	if rem < 0 {
		sec--
		rem += perSec
	}
	if sec < minShown || sec > maxShown {
		return ""
	}
	return time.Unix(sec, rem*(int64(1e9)/perSec)).UTC().Format(time.RFC3339Nano)
}
