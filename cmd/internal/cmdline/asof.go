package cmdline

import (
	"fmt"
	"time"
)

// ParseAsOf reads an --as-of (or an MCP tool's as_of): an RFC 3339 time,
// in UTC; empty means now.
func ParseAsOf(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return now.UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time (e.g. 2026-11-20T09:00:00Z)", s)
	}
	return t.UTC(), nil
}
