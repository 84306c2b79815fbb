package memsync

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseSince reads a lower time bound as search, list and the web view
// take it: an RFC 3339 time, a date (UTC midnight), or an age before now
// in Go duration syntax or whole days ("7d").
func ParseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.UTC().AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.UTC().Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time, a date (2006-01-02) or an age (36h, 7d)", s)
}
