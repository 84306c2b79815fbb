package importer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestImportReadsOnceOrTwiceAlike: a source whose items fit in the item
// budget is read once, a larger one twice (from the start, or from the
// item that overflows it), and the journal is the same line for line.
func TestImportReadsOnceOrTwiceAlike(t *testing.T) {
	for _, format := range Formats() {
		t.Run(format, func(t *testing.T) {
			var want []string
			for _, tc := range []struct {
				budget, reads int
			}{{0, 1}, {-1, 2}, {700, 2}} {
				reads := 0
				real := formats[format]
				formats[format] = func(root string, out *Source) error {
					reads++
					return real(root, out)
				}
				opts := repoFor(t, format, fixture(format))
				opts.IncludePrivate = true // the jsonl fixture is alice's, private
				opts.ItemBudget = tc.budget
				rep, err := importNow(context.Background(), opts)
				formats[format] = real
				must(t, err)
				if reads != tc.reads || rep.Imported < 2 {
					t.Fatalf("budget %d: %d reads, want %d (%+v)", tc.budget, reads, tc.reads, rep)
				}
				got := lines(t, opts)
				if want == nil {
					want = got
				} else if !slices.Equal(got, want) {
					t.Fatalf("budget %d: the journal differs\n got %q\nwant %q", tc.budget, got, want)
				}
			}
		})
	}
}

// TestImportRefusesASourceChangedBetweenReads: Import reads the source
// twice (the plan, then the records); a source that reads differently
// the second time (an item edited, one added, one gone) stops the import
// with errSourceChanged, every line written whole, and the import run
// again ends the journal as one import of the source as it now is.
func TestImportRefusesASourceChangedBetweenReads(t *testing.T) {
	const base = "---\ntitle: Espresso\npermalink: espresso\n---\n# Espresso\n\n## Observations\n- [fact] one\n- [fact] two\n- [fact] three\n"
	for _, tc := range []struct {
		name, second string
	}{
		{"an item edited", strings.Replace(base, "two", "2", 1)},
		{"an item added", base + "- [fact] four\n"},
		{"an item gone", strings.Replace(base, "- [fact] three\n", "", 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			note := filepath.Join(src, "espresso.md")
			must(t, os.WriteFile(note, []byte(base), 0o644))
			reads := 0
			real := formats["basic-memory"]
			formats["basic-memory"] = func(root string, out *Source) error {
				reads++
				if reads == 2 {
					must(t, os.WriteFile(note, []byte(tc.second), 0o644))
				}
				return real(root, out)
			}
			opts := repoFor(t, "basic-memory", src)
			opts.ItemBudget = -1 // read twice, however small
			_, err := importNow(context.Background(), opts)
			formats["basic-memory"] = real
			if !errors.Is(err, errSourceChanged) {
				t.Fatalf("import over a changing source: %v, want errSourceChanged", err)
			}
			lines(t, opts) // whole lines only
			rep, err := importNow(context.Background(), opts)
			must(t, err)
			if len(rep.Unparsable) != 0 {
				t.Fatalf("re-run: %+v", rep)
			}
			clean := repoFor(t, "basic-memory", src)
			_, err = importNow(context.Background(), clean)
			must(t, err)
			if got, want := active(t, opts), active(t, clean); !slices.Equal(got, want) {
				t.Fatalf("after the re-run: active\n got %q\nwant %q", got, want)
			}
		})
	}
}
