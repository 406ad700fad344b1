package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseDuration parses a JWT_EXPIRES_IN value the way Open WebUI's parse_duration does
// (COMPAT §2.2): one or more <number><unit> pairs, summed, with units ms, s, m, h, d, w and
// an optional fraction ("1.5h"). "-1" and "0" mean no expiry; so does any total of zero
// ("0s"), because upstream treats a zero timedelta as "no exp claim".
//
// Hearth is stricter than upstream in two ways: the whole string must be pairs (upstream's
// findall skips garbage between them) and negative pairs are rejected (a token that is
// already expired when issued is never what an admin meant).
func ParseDuration(s string) (d time.Duration, noExpiry bool, err error) {
	s = strings.TrimSpace(s)
	if s == "-1" || s == "0" {
		return 0, true, nil
	}
	pairs, err := durationPairs(s)
	if err != nil {
		return 0, false, err
	}
	var total time.Duration
	for _, p := range pairs {
		if total > math.MaxInt64-p {
			return 0, false, errors.New("duration too large")
		}
		total += p
	}
	if total == 0 {
		return 0, true, nil
	}
	return total, false, nil
}

// validAdminJWTExpiry mirrors the admin endpoint's check
// ^(-1|0|(-?\d+(\.\d+)?)(ms|s|m|h|d|w))$ — a single pair only — on top of ParseDuration.
func validAdminJWTExpiry(s string) error {
	if s == "-1" || s == "0" {
		return nil
	}
	pairs, err := durationPairs(s)
	if err != nil {
		return err
	}
	if len(pairs) != 1 {
		return fmt.Errorf("%q: exactly one <number><unit> pair (ms, s, m, h, d, w), -1 or 0 expected", s)
	}
	_, _, err = ParseDuration(s)
	return err
}

// durationPairs splits s into its <number><unit> pairs, each converted to a Duration.
func durationPairs(s string) ([]time.Duration, error) {
	if s == "" {
		return nil, errors.New("empty duration")
	}
	var out []time.Duration
	for i := 0; i < len(s); {
		start := i
		if s[i] == '-' {
			return nil, fmt.Errorf("%q: negative durations are not allowed (use -1 for no expiry)", s)
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return nil, fmt.Errorf("%q: number expected at offset %d", s, start)
		}
		if i < len(s) && s[i] == '.' {
			i++
			fracStart := i
			for i < len(s) && isDigit(s[i]) {
				i++
			}
			if i == fracStart {
				return nil, fmt.Errorf("%q: digits expected after '.'", s)
			}
		}
		num := s[start:i]
		var unit time.Duration
		switch {
		case strings.HasPrefix(s[i:], "ms"):
			unit, i = time.Millisecond, i+2
		case strings.HasPrefix(s[i:], "s"):
			unit, i = time.Second, i+1
		case strings.HasPrefix(s[i:], "m"):
			unit, i = time.Minute, i+1
		case strings.HasPrefix(s[i:], "h"):
			unit, i = time.Hour, i+1
		case strings.HasPrefix(s[i:], "d"):
			unit, i = 24*time.Hour, i+1
		case strings.HasPrefix(s[i:], "w"):
			unit, i = 7*24*time.Hour, i+1
		default:
			return nil, fmt.Errorf("%q: unit (ms, s, m, h, d, w) expected after %s", s, num)
		}
		f, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", s, err)
		}
		ns := f * float64(unit)
		if ns >= math.MaxInt64 { // also catches +Inf
			return nil, fmt.Errorf("%q: duration too large", s)
		}
		out = append(out, time.Duration(ns))
	}
	return out, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
