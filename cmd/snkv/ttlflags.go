package main

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// maxDays is the longest TTL in whole days: the longest Go duration is
// 106751 days and some hours (2562047 hours).
const maxDays = math.MaxInt64 / int64(24*time.Hour)

// durationSyntax is the form of a Go duration without its sign.
var durationSyntax = regexp.MustCompile(`^(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)

// parseDuration reads a TTL: a Go duration ("90s", "1h30m"), a number of
// days ("7d", "1.5d"), or days and a duration ("1d12h"), from a
// millisecond (the store's resolution) up to the longest Go duration,
// 106751d (2562047h) whichever unit it is written in.
func parseDuration(s string) (time.Duration, error) {
	bad := usagef("bad duration %q: want for example 90s, 30m, 2h45m, 7d or 1d12h", s)
	tooLong := usagef("bad duration %q: longer than the longest TTL (about %d days, %dh)", s, maxDays, math.MaxInt64/int64(time.Hour))
	rest := s
	var days time.Duration
	if ds, after, ok := strings.Cut(s, "d"); ok {
		n, err := strconv.ParseFloat(ds, 64)
		switch {
		case err != nil || n <= 0 || strings.ContainsAny(ds, "eE+-") || math.IsInf(n, 0):
			return 0, bad
		case n*float64(24*time.Hour) >= math.MaxInt64:
			return 0, tooLong
		}
		days, rest = time.Duration(n*float64(24*time.Hour)), after
	}
	var d time.Duration
	if rest != "" || days == 0 {
		var err error
		if d, err = time.ParseDuration(rest); err != nil {
			if durationSyntax.MatchString(rest) {
				return 0, tooLong // well formed, too large for a duration
			}
			return 0, bad
		}
		if days > 0 && d < 0 {
			return 0, bad
		}
	}
	switch {
	case d > math.MaxInt64-days:
		return 0, tooLong
	case d+days <= 0:
		return 0, usagef("bad duration %q: a TTL must be positive", s)
	}
	return d + days, nil
}

// parseExpireAt reads an absolute expiry time in RFC 3339.
func parseExpireAt(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, usagef("bad --expire-at %q: want RFC 3339, for example 2030-01-02T15:04:05Z", s)
	}
	return t, nil
}

// expiry is when a command should make a key expire: after a TTL or at an
// instant (neither: no expiry).
type expiry struct {
	ttl time.Duration
	at  time.Time
}

// expiryFlags reads --ttl (or the DURATION argument, given as ttlArg) and
// --expire-at, at most one of them. Given empty, either is refused (a
// script with an unset variable must not make a key permanent), and so is
// an expiry the key would reach at once: an --expire-at that is not after
// the command's clock, or a TTL under a millisecond, the store's
// resolution.
func (a *app) expiryFlags(cmd *cobra.Command, ttlArg *string, ttlFlag, atFlag string) (expiry, error) {
	var e expiry
	var err error
	for _, f := range []struct{ name, val string }{{"ttl", ttlFlag}, {"expire-at", atFlag}} {
		if cmd.Flags().Changed(f.name) && f.val == "" {
			return e, usagef("--%s is empty: give a %s, or leave --%s out", f.name, map[string]string{"ttl": "duration (90s, 30m, 7d)", "expire-at": "time (RFC 3339)"}[f.name], f.name)
		}
	}
	if ttlArg != nil {
		if *ttlArg == "" {
			return e, usagef("DURATION is empty: give a duration (90s, 30m, 7d)")
		}
		if ttlFlag != "" {
			return e, usagef("give the duration as an argument or with --ttl, not both")
		}
		ttlFlag = *ttlArg
	}
	now := a.clock.Now()
	switch {
	case ttlFlag != "" && atFlag != "":
		return e, usagef("--ttl and --expire-at exclude each other")
	case ttlFlag != "":
		if e.ttl, err = parseDuration(ttlFlag); err == nil && e.ttl < time.Millisecond {
			err = usagef("a TTL of %s is shorter than a millisecond, the store's resolution: the key would expire at once; 'snkv del' deletes a key", ttlFlag)
		}
	case atFlag != "":
		e.at, err = parseExpireAt(atFlag)
		if err == nil && !e.at.After(now) {
			err = usagef("--expire-at %s is not in the future (now is %s): the key would expire at once; 'snkv del' deletes a key", atFlag, now.UTC().Format(time.RFC3339))
		}
	}
	return e, err
}

func (e expiry) none() bool { return e.ttl == 0 && e.at.IsZero() }
