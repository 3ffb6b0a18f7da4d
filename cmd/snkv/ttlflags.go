package main

import (
	"strconv"
	"strings"
	"time"
)

// parseDuration reads a TTL: a Go duration ("90s", "1h30m") or a number
// of days ("7d").
func parseDuration(s string) (time.Duration, error) {
	orig := s
	var days time.Duration
	if ds, rest, ok := strings.Cut(s, "d"); ok {
		n, err := strconv.ParseFloat(ds, 64)
		if err != nil || n <= 0 || n >= 100000 {
			return 0, usagef("bad duration %q: want for example 90s, 30m, 2h45m, 7d or 1d12h", orig)
		}
		days = time.Duration(n * float64(24*time.Hour))
		if rest == "" {
			return days, nil
		}
		s = rest
	}
	d, err := time.ParseDuration(s)
	if err != nil || (days > 0 && d < 0) {
		return 0, usagef("bad duration %q: want for example 90s, 30m, 2h45m, 7d or 1d12h", orig)
	}
	if d += days; d <= 0 {
		return 0, usagef("bad duration %q: a TTL must be positive", orig)
	}
	return d, nil
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

// expiryFlags reads --ttl and --expire-at (at most one of them). An
// --expire-at that is not after the command's clock is a usage error: the
// key would be gone at once.
func (a *app) expiryFlags(ttlFlag, atFlag string) (expiry, error) {
	var e expiry
	var err error
	switch {
	case ttlFlag != "" && atFlag != "":
		return e, usagef("--ttl and --expire-at exclude each other")
	case ttlFlag != "":
		e.ttl, err = parseDuration(ttlFlag)
	case atFlag != "":
		e.at, err = parseExpireAt(atFlag)
		if err == nil && !e.at.After(a.clock.Now()) {
			err = usagef("--expire-at %s is not in the future (now is %s): the key would expire at once; 'snkv del' deletes a key", atFlag, a.clock.Now().UTC().Format(time.RFC3339))
		}
	}
	return e, err
}

func (e expiry) none() bool { return e.ttl == 0 && e.at.IsZero() }
