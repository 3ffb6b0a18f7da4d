package main

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseTimestamp(t *testing.T) {
	for _, c := range []struct {
		in     string
		perSec int64
		want   int64
	}{
		{"42", 0, 42},
		{"-9223372036854775808", 0, math.MinInt64},
		{"9223372036854775807", 1e3, math.MaxInt64},
		{"1970-01-01T00:00:01Z", 1, 1},
		{"1970-01-01T00:00:01Z", 1e3, 1000},
		{"1970-01-01T00:00:01.5Z", 1, 2}, // rounded up: [start, end) holds the same instants
		{"1969-12-31T23:59:59.5Z", 1, 0}, // up, also before the epoch
		{"1970-01-01T00:00:00.000001Z", 1e3, 1},
		{"2030-01-02T03:04:05.123456789Z", 1e9, 1893553445123456789},
		{"2030-01-02T04:04:05+01:00", 1e3, 1893553445000},
	} {
		got, err := parseTimestamp("start", c.in, c.perSec)
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, got, "%s in 1/%d s", c.in, c.perSec)
	}
	for _, c := range []struct {
		in     string
		perSec int64
	}{
		{"soon", 1e3},
		{"2030-01-02T03:04:05Z", 0},   // no unit: refused, not guessed
		{"2300-01-01T00:00:00Z", 1e9}, // past int64 nanoseconds
		{"1600-01-01T00:00:00Z", 1e9}, //
		{"9223372036854775808", 0},    // past int64
	} {
		_, err := parseTimestamp("start", c.in, c.perSec)
		var u usageError
		require.True(t, errors.As(err, &u), "%s: a usage error, got %v", c.in, err)
	}
}

func TestFormatTimestamp(t *testing.T) {
	require.Equal(t, "2030-01-02T03:04:05Z", formatTimestamp(1893553445, 1))
	require.Equal(t, "2030-01-02T03:04:05.001Z", formatTimestamp(1893553445001, 1e3))
	require.Equal(t, "1969-12-31T23:59:59.999999Z", formatTimestamp(-1, 1e6))
	require.Equal(t, "1677-09-21T00:12:43.145224192Z", formatTimestamp(math.MinInt64, 1e9))
	require.Equal(t, "", formatTimestamp(math.MaxInt64, 1), "past year 9999")
	require.Equal(t, "", formatTimestamp(math.MinInt64, 1e3), "before year 0")
	for _, unit := range []int64{1, 1e3, 1e6, 1e9} {
		for _, ts := range []int64{0, 1, -1, 1893553445, -1893553445, 9999999999} {
			s := formatTimestamp(ts, unit)
			back, err := parseTimestamp("start", s, unit)
			require.NoError(t, err)
			require.Equal(t, ts, back, "%d in 1/%d s round-trips through %s", ts, unit, s)
		}
	}
}
