package journal_test

import (
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
)

// TestEntitySlug: one stem rule for the cache's and compaction's entity
// pages. The two once disagreed on names outside ASCII and on long names:
// compaction kept "zoë" as a file name and cut at 80 bytes with nothing to
// tell two cut names apart; the cache's rule, [a-z0-9-] and a hash of the
// exact name where the base loses anything, won.
func TestEntitySlug(t *testing.T) {
	for in, want := range map[string]string{
		"@Shaun":      "shaun",
		"Acme Corp":   "acme-corp",
		"acme-corp":   "acme-corp",
		"[[Q3 Plan]]": "q3-plan",
		"#moon_shot":  "moon-shot",
	} {
		if got := journal.EntitySlug(in); got != want {
			t.Errorf("EntitySlug(%q) = %q, want %q", in, got, want)
		}
	}
	for in, prefix := range map[string]string{
		"Zoë":                    "zo-",
		"日本":                     "entity-",
		"!!!":                    "entity-",
		strings.Repeat("a", 100): strings.Repeat("a", 64) + "-",
	} {
		got := journal.EntitySlug(in)
		if !strings.HasPrefix(got, prefix) || len(got) != len(prefix)+journal.SlugHashLen {
			t.Errorf("EntitySlug(%q) = %q, want %q and %d hex digits", in, got, prefix, journal.SlugHashLen)
		}
		if strings.Trim(got, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			t.Errorf("EntitySlug(%q) = %q: not [a-z0-9-]", in, got)
		}
	}
	if journal.EntitySlug("Zoë") == journal.EntitySlug("Zoé") {
		t.Error("two names share a hashed slug")
	}
}
