package importer

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestPlaceKeyedEdits: a Basic Memory note's observations and an OpenClaw
// section's entries are keyed by their place, yet an insertion writes one
// record wherever it is, a reorder writes none, an edit supersedes the
// one it edits and a deletion retires the one deleted; duplicates of one
// text are told apart. After each change a second import writes nothing.
// Each case runs with the source read once and read twice (plan.go).
func TestPlaceKeyedEdits(t *testing.T) {
	type change struct {
		name                          string
		entries                       []string // the group's entries after the change
		imported, superseded, retired int
		lines                         int // journal lines the import adds
	}
	abc := []string{"alpha one", "beta two", "gamma three"}
	for _, tc := range []struct {
		name    string
		base    []string
		changes []change
	}{
		{"insert at top", abc, []change{{"insert", []string{"new zero", "alpha one", "beta two", "gamma three"}, 1, 0, 0, 1}}},
		{"insert in the middle", abc, []change{{"insert", []string{"alpha one", "new zero", "beta two", "gamma three"}, 1, 0, 0, 1}}},
		{"insert at the end", abc, []change{{"insert", []string{"alpha one", "beta two", "gamma three", "new zero"}, 1, 0, 0, 1}}},
		{"delete one", abc, []change{{"delete", []string{"alpha one", "gamma three"}, 0, 0, 1, 1}}},
		{"edit one", abc, []change{{"edit", []string{"alpha one", "beta 2", "gamma three"}, 1, 1, 0, 1}}},
		{"reorder", abc, []change{{"reorder", []string{"gamma three", "alpha one", "beta two"}, 0, 0, 0, 0}}},
		{"insert at top and edit one", abc, []change{{"insert and edit", []string{"new zero", "alpha one", "beta 2", "gamma three"}, 2, 1, 0, 2}}},
		{"delete one, insert another elsewhere: an edit", abc, []change{{"move", []string{"beta two", "gamma three", "new zero"}, 1, 1, 0, 1}}},
		{"first replaced", abc, []change{{"replace", []string{"new zero", "beta two", "gamma three"}, 1, 1, 0, 1}}},
		{"insert, then edit the inserted", abc, []change{
			{"insert", []string{"new zero", "alpha one", "beta two", "gamma three"}, 1, 0, 0, 1},
			{"edit it", []string{"new 0", "alpha one", "beta two", "gamma three"}, 1, 1, 0, 1},
			{"delete it", abc, 0, 0, 1, 1},
		}},
		{"duplicates", []string{"same text", "same text", "other text"}, []change{
			{"insert a third", []string{"same text", "same text", "same text", "other text"}, 1, 0, 0, 1},
			{"delete two", []string{"other text", "same text"}, 0, 0, 2, 2},
			{"one back", []string{"same text", "other text", "same text"}, 1, 0, 0, 1},
		}},
	} {
		for _, run := range []struct {
			format string
			budget int
		}{{"basic-memory", 0}, {"openclaw", 0}, {"basic-memory", -1}, {"openclaw", -1}} {
			format := run.format
			t.Run(format+"/"+tc.name+"/budget"+itoa(run.budget), func(t *testing.T) {
				src := t.TempDir()
				write := func(entries []string) {
					name, data := placeSource(format, entries)
					must(t, os.WriteFile(filepath.Join(src, name), []byte(data), 0o644))
				}
				opts := repoFor(t, format, src)
				opts.ItemBudget = run.budget
				write(tc.base)
				rep, err := importNow(context.Background(), opts)
				must(t, err)
				if rep.Imported != len(tc.base)+placeExtra(format) {
					t.Fatalf("first import: %+v", rep)
				}
				for _, c := range tc.changes {
					write(c.entries)
					before := len(lines(t, opts))
					rep, err := importNow(context.Background(), opts)
					must(t, err)
					if rep.Imported != c.imported || rep.Superseded != c.superseded || rep.Retired != c.retired {
						t.Fatalf("%s: imported %d superseded %d retired %d, want %d %d %d", c.name,
							rep.Imported, rep.Superseded, rep.Retired, c.imported, c.superseded, c.retired)
					}
					if got := len(lines(t, opts)) - before; got != c.lines {
						t.Fatalf("%s: %d lines written, want %d", c.name, got, c.lines)
					}
					want := slices.Clone(c.entries)
					sort.Strings(want)
					var got []string
					for _, s := range active(t, opts) {
						if !strings.HasPrefix(s, "Espresso") {
							got = append(got, s)
						}
					}
					if !slices.Equal(got, want) {
						t.Fatalf("%s: active\n got %q\nwant %q", c.name, got, want)
					}
					again, err := importNow(context.Background(), opts)
					must(t, err)
					if again.Imported != 0 || again.Superseded != 0 || again.Retired != 0 {
						t.Fatalf("%s: the same source again: %+v", c.name, again)
					}
				}
			})
		}
	}
}

// placeSource is a source of format with one group holding entries: a
// Basic Memory note's observations, an OpenClaw MEMORY.md section.
func placeSource(format string, entries []string) (name, data string) {
	var b strings.Builder
	switch format {
	case "basic-memory":
		b.WriteString("---\ntitle: Espresso\npermalink: espresso\n---\n# Espresso\n\n## Observations\n")
		for _, e := range entries {
			b.WriteString("- [fact] " + e + "\n")
		}
		return "espresso.md", b.String()
	default:
		b.WriteString("# Memory\n\n## Preferences\n")
		for _, e := range entries {
			b.WriteString("- " + e + "\n")
		}
		return "MEMORY.md", b.String()
	}
}

// placeExtra is what a placeSource imports besides its entries (the note).
func placeExtra(format string) int {
	if format == "basic-memory" {
		return 1
	}
	return 0
}
