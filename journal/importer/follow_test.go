package importer

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
)

// active is the text of every record of opts' agent no record supersedes
// (removal records left out), sorted.
func active(t *testing.T, opts Options) []string {
	t.Helper()
	var recs []journal.Record
	retired := map[string]bool{}
	for _, l := range lines(t, opts) {
		r, err := journal.Parse([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
		for _, s := range r.Supersedes {
			retired[s] = true
		}
	}
	var out []string
	for _, r := range recs {
		if !retired[r.UUID] && !isRemoval(&r) {
			out = append(out, r.Text)
		}
	}
	sort.Strings(out)
	return out
}

const followNote = `---
title: Espresso
permalink: espresso
---
# Espresso

## Observations
- [setting] grind setting 18 #grinder
- [fact] dose 18 g
- [fact] ratio 1:2

## Relations
- pairs_with [[Milk]]
`

// TestImportFollowsAChangingSource: a keyed item edited in the source
// supersedes its earlier import, one removed is retired (by default where
// the source shows it is gone, with Prune where only absence tells), and
// what does not change writes nothing; the report counts each.
func TestImportFollowsAChangingSource(t *testing.T) {
	type step struct {
		name  string
		files map[string]string // written before the import; "" removes the file
		prune bool
		scope journal.Scope
		// the report's counts
		imported, superseded, retired int
		want                          []string // active texts after, nil: not checked
	}
	mem0 := func(states ...string) string {
		var b strings.Builder
		b.WriteString("[")
		for i, s := range states {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(s)
		}
		b.WriteString("]")
		return b.String()
	}
	m := func(id, text, state string) string {
		return `{"id":"` + id + `","memory":"` + text + `","created_at":"2026-03-01T10:00:00Z","state":"` + state + `"}`
	}
	for _, tc := range []struct {
		name, format string
		steps        []step
	}{
		{"basic-memory", "basic-memory", []step{
			{name: "first import", files: map[string]string{"espresso.md": followNote}, imported: 4,
				want: []string{"Espresso\n- pairs_with [[Milk]]", "dose 18 g", "grind setting 18 #grinder", "ratio 1:2"}},
			{name: "same again", imported: 0},
			{name: "observation edited", files: map[string]string{"espresso.md": strings.Replace(followNote, "setting 18", "setting 16", 1)},
				imported: 1, superseded: 1,
				want: []string{"Espresso\n- pairs_with [[Milk]]", "dose 18 g", "grind setting 16 #grinder", "ratio 1:2"}},
			{name: "observation removed, note kept: retired by default",
				files:    map[string]string{"espresso.md": strings.Replace(strings.Replace(followNote, "setting 18", "setting 16", 1), "- [fact] ratio 1:2\n", "", 1)},
				imported: 0, retired: 1,
				want: []string{"Espresso\n- pairs_with [[Milk]]", "dose 18 g", "grind setting 16 #grinder"}},
			{name: "note deleted, no prune: kept", files: map[string]string{"espresso.md": "", "other.md": "---\ntitle: Other\n---\n# Other\n"}, imported: 1,
				want: []string{"Espresso\n- pairs_with [[Milk]]", "Other", "dose 18 g", "grind setting 16 #grinder"}},
			{name: "note deleted, prune in another scope: kept", scope: journal.ScopeShared, prune: true, imported: 1, superseded: 1}, // the shared version replaces the private one
			{name: "note deleted, prune: retired", prune: true, retired: 3, want: []string{"Other"}},
			{name: "prune again: nothing", prune: true},
			{name: "note back: a new version", files: map[string]string{"espresso.md": followNote}, imported: 4, superseded: 4, // the four removal records
				want: []string{"Espresso\n- pairs_with [[Milk]]", "Other", "dose 18 g", "grind setting 18 #grinder", "ratio 1:2"}},
			{name: "unparsable source: prune not applied", prune: true,
				files: map[string]string{"espresso.md": "---\ntitle: [unclosed\n---\n"}, imported: 0, retired: 0,
				want: []string{"Espresso\n- pairs_with [[Milk]]", "Other", "dose 18 g", "grind setting 18 #grinder", "ratio 1:2"}},
		}},
		{"openclaw", "openclaw", []step{
			{name: "first import", files: map[string]string{"MEMORY.md": "# Memory\n\n## Preferences\n- dark mode\n- tabs, not spaces\n\n## Decisions\n- ship on Fridays\n"},
				imported: 3, want: []string{"dark mode", "ship on Fridays", "tabs, not spaces"}},
			{name: "entry edited", files: map[string]string{"MEMORY.md": "# Memory\n\n## Preferences\n- dark mode\n- spaces, not tabs\n\n## Decisions\n- ship on Fridays\n"},
				imported: 1, superseded: 1, want: []string{"dark mode", "ship on Fridays", "spaces, not tabs"}},
			{name: "entry removed, section kept: retired", files: map[string]string{"MEMORY.md": "# Memory\n\n## Preferences\n- dark mode\n\n## Decisions\n- ship on Fridays\n"},
				retired: 1, want: []string{"dark mode", "ship on Fridays"}},
			{name: "section removed, no prune: kept", files: map[string]string{"MEMORY.md": "# Memory\n\n## Preferences\n- dark mode\n"},
				want: []string{"dark mode", "ship on Fridays"}},
			{name: "section removed, prune: retired", prune: true, retired: 1, want: []string{"dark mode"}},
		}},
		{"mem0", "mem0", []step{
			{name: "first import", files: map[string]string{"memories.json": mem0(m("1", "likes tea", "active"), m("2", "lives in Oslo", "active"), m("3", "has a cat", "active"))},
				imported: 3, want: []string{"has a cat", "likes tea", "lives in Oslo"}},
			{name: "update", files: map[string]string{"memories.json": mem0(m("1", "likes green tea", "active"), m("2", "lives in Oslo", "active"), m("3", "has a cat", "active"))},
				imported: 1, superseded: 1, want: []string{"has a cat", "likes green tea", "lives in Oslo"}},
			{name: "deleted state: retired by default", files: map[string]string{"memories.json": mem0(m("1", "likes green tea", "active"), m("2", "lives in Oslo", "deleted"), m("3", "has a cat", "active"))},
				retired: 1, want: []string{"has a cat", "likes green tea"}},
			{name: "gone from get_all, no prune: kept", files: map[string]string{"memories.json": mem0(m("1", "likes green tea", "active"))},
				want: []string{"has a cat", "likes green tea"}},
			{name: "gone from get_all, prune: retired", prune: true, retired: 1, want: []string{"likes green tea"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			opts := repoFor(t, tc.format, src)
			for _, s := range tc.steps {
				for name, data := range s.files {
					p := filepath.Join(src, name)
					if data == "" {
						must(t, os.Remove(p))
						continue
					}
					must(t, os.WriteFile(p, []byte(data), 0o644))
				}
				o := opts
				o.Prune = s.prune
				if s.scope != "" {
					o.Scope = s.scope
				}
				rep, err := importNow(context.Background(), o)
				if err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				if rep.Imported != s.imported || rep.Superseded != s.superseded || rep.Retired != s.retired {
					t.Fatalf("%s: imported %d superseded %d retired %d, want %d %d %d (%+v)", s.name,
						rep.Imported, rep.Superseded, rep.Retired, s.imported, s.superseded, s.retired, rep)
				}
				if s.want != nil {
					got := active(t, opts)
					if !slices.Equal(got, s.want) {
						t.Fatalf("%s: active\n got %q\nwant %q", s.name, got, s.want)
					}
				}
			}
		})
	}
}

// TestUnkeyedImportsAreRecognised: records an earlier importer wrote for
// Basic Memory observations and OpenClaw entries, when they had no key
// (identity: the note or file and the content; source.context file:line),
// count as imported: importing the same source with keys writes nothing,
// and nothing is retired.
func TestUnkeyedImportsAreRecognised(t *testing.T) {
	for _, format := range []string{"basic-memory", "openclaw"} {
		t.Run(format, func(t *testing.T) {
			keyed := formats[format]
			legacy := func(root string, out *Source) error {
				each := out.each
				defer func() { out.each = each }()
				out.each = func(it *Item) {
					if it.LegacyKey != "" {
						it.Key, it.Keyed, it.LegacyKey = it.LegacyKey, false, ""
					}
					if each != nil {
						each(it)
					} else {
						out.Items = append(out.Items, it)
					}
				}
				return keyed(root, out)
			}
			formats[format] = legacy
			opts := repoFor(t, format, fixture(format))
			rep, err := importNow(context.Background(), opts)
			formats[format] = keyed
			must(t, err)
			if rep.Imported < 2 {
				t.Fatalf("legacy import: %+v", rep)
			}
			before := lines(t, opts)
			for _, prune := range []bool{false, true} {
				o := opts
				o.Prune = prune
				rep, err = importNow(context.Background(), o)
				must(t, err)
				if rep.Imported != 0 || rep.Retired != 0 || rep.Superseded != 0 {
					t.Fatalf("keyed import over a legacy one (prune %v): %+v", prune, rep)
				}
			}
			if after := lines(t, opts); !slices.Equal(after, before) {
				t.Fatalf("the journal changed: %d lines, was %d", len(after), len(before))
			}
		})
	}
}
