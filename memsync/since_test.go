package memsync

import (
	"strings"
	"testing"
	"time"
)

// TestParseSince takes the bounds a person types: dates, words, ages.
func TestParseSince(t *testing.T) {
	now := time.Date(2026, 12, 2, 15, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"2026-11-30", time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)},
		{"2026-11-30T08:00:00+01:00", time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)},
		{"today", time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)},
		{"yesterday", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		{"Yesterday", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		{"7d", now.AddDate(0, 0, -7)},
		{"2w", now.AddDate(0, 0, -14)},
		{"36h", now.Add(-36 * time.Hour)},
	} {
		got, err := ParseSince(tc.in, now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("ParseSince(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"soon", "-3d", "last tuesday", ""} {
		_, err := ParseSince(bad, now)
		if err == nil {
			t.Errorf("ParseSince(%q): no error", bad)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "2006-01-02") || !strings.Contains(msg, "2026-12-02") {
			t.Errorf("ParseSince(%q): %q: want today's date as the example, not Go's layout", bad, msg)
		}
	}
}
