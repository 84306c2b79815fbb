package memsync

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseSince reads a lower time bound as search, list and the web view
// take it: an RFC 3339 time, a date (UTC midnight), "today" or
// "yesterday" (UTC midnight of that day), or an age before now in Go
// duration syntax, whole days ("7d") or whole weeks ("2w").
func ParseSince(s string, now time.Time) (time.Time, error) {
	now = now.UTC()
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "today":
		return midnight, nil
	case "yesterday":
		return midnight.AddDate(0, 0, -1), nil
	}
	if weeks, ok := strings.CutSuffix(s, "w"); ok {
		if n, err := strconv.Atoi(weeks); err == nil && n >= 0 {
			return now.AddDate(0, 0, -7*n), nil
		}
	}
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
	return time.Time{}, fmt.Errorf("%q is not a time: give a date (%s), today, yesterday, an age (36h, 7d, 2w) or an RFC 3339 time", s, now.Format("2006-01-02"))
}
