package importer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
)

// repoFor is a memory repository layout for agent a in a temp dir.
func repoFor(t testing.TB, format, src string) Options {
	t.Helper()
	root := t.TempDir()
	jd := filepath.Join(root, "agents", "a", "memory", "journal")
	if err := os.MkdirAll(jd, 0o755); err != nil {
		t.Fatal(err)
	}
	return Options{Format: format, Path: src, Agent: "a", Root: root, JournalDir: jd,
		LockFile: filepath.Join(root, ".memsync", "import", "a.lock"), Now: time.Now}
}

// lines is every journal line of opts' agent, sorted.
func lines(t testing.TB, opts Options) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(opts.JournalDir, "*.jsonl"))
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			t.Fatalf("%s ends in a torn line", f)
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if l != "" {
				out = append(out, l)
			}
		}
	}
	sort.Strings(out)
	return out
}

// importNow is Import with opts.Journals listed as the command lists
// them (here: the day files of the journal directory).
func importNow(ctx context.Context, opts Options) (*Report, error) {
	opts.Journals = func() ([]string, error) { return filepath.Glob(filepath.Join(opts.JournalDir, "*.jsonl")) }
	return Import(ctx, opts)
}

func fixture(format string) string {
	return filepath.Join("..", "..", "testdata", "import", format)
}

// TestImportCancelledMidwayCompletesOnRerun: an import stopped after some
// records leaves whole lines only, and running it again writes exactly
// the rest: the journal ends as one uninterrupted import leaves it.
func TestImportCancelledMidwayCompletesOnRerun(t *testing.T) {
	for _, format := range Formats() {
		t.Run(format, func(t *testing.T) {
			src := fixture(format)
			whole := repoFor(t, format, src)
			whole.IncludePrivate = true // the jsonl fixture is alice's, private
			if _, err := importNow(context.Background(), whole); err != nil {
				t.Fatal(err)
			}
			want := lines(t, whole)
			if len(want) < 2 {
				t.Fatalf("fixture too small: %d records", len(want))
			}
			for stopAt := 1; stopAt < len(want); stopAt++ {
				opts := repoFor(t, format, src)
				opts.IncludePrivate = true
				ctx, cancel := context.WithCancel(context.Background())
				opts.Progress = func(done, total int) {
					if done == stopAt {
						cancel()
					}
				}
				_, err := importNow(ctx, opts)
				cancel()
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("stop at %d: %v, want cancelled", stopAt, err)
				}
				if got := lines(t, opts); len(got) > stopAt {
					t.Fatalf("stop at %d: %d lines written", stopAt, len(got))
				}
				opts.Progress = nil
				rep, err := importNow(context.Background(), opts)
				if err != nil {
					t.Fatal(err)
				}
				if got := lines(t, opts); !slices.Equal(got, want) {
					t.Fatalf("stop at %d, re-run (%+v):\n got %q\nwant %q", stopAt, rep, got, want)
				}
			}
		})
	}
}

// TestImportEditedSource: an edited source adds only what changed; an
// edited item with an identity supersedes its earlier import, dated after it.
func TestImportEditedSource(t *testing.T) {
	src := t.TempDir()
	if err := os.CopyFS(src, os.DirFS(fixture("vault"))); err != nil {
		t.Fatal(err)
	}
	opts := repoFor(t, "vault", src)
	if _, err := importNow(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	before := lines(t, opts)
	obs := filepath.Join(src, "vault", "obs-2026-02-15-001.md")
	data, _ := os.ReadFile(obs)
	edited := strings.Replace(string(data), "dropped 12%", "dropped 14%", 1)
	if err := os.WriteFile(obs, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := importNow(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	after := lines(t, opts)
	if rep.Imported != 1 || len(after) != len(before)+1 || rep.Superseded != 1 {
		t.Fatalf("edited source: %+v, %d lines before, %d after", rep, len(before), len(after))
	}
	var old, new journal.Record
	for _, l := range after {
		r, err := journal.Parse([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.Contains(r.Text, "dropped 12%"):
			old = r
		case strings.Contains(r.Text, "dropped 14%"):
			new = r
		}
	}
	if !slices.Equal(new.Supersedes, []string{old.UUID}) || !new.TS.After(old.TS) {
		t.Fatalf("new version %+v does not supersede %s after it", new, old.UUID)
	}
	// A third run: nothing.
	if rep, err := importNow(context.Background(), opts); err != nil || rep.Imported != 0 || len(lines(t, opts)) != len(after) {
		t.Fatalf("third import: %+v %v", rep, err)
	}
	// Touching an undated source (a new mtime) imports nothing either.
	oc := repoFor(t, "openclaw", t.TempDir())
	if err := os.CopyFS(oc.Path, os.DirFS(fixture("openclaw"))); err != nil {
		t.Fatal(err)
	}
	if _, err := importNow(context.Background(), oc); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(3 * time.Hour)
	if err := os.Chtimes(filepath.Join(oc.Path, "MEMORY.md"), later, later); err != nil {
		t.Fatal(err)
	}
	if rep, err := importNow(context.Background(), oc); err != nil || rep.Imported != 0 {
		t.Fatalf("touched MEMORY.md: %+v %v", rep, err)
	}
}

// TestImportDryRunWritesNothing: --dry-run reports and writes nothing.
func TestImportDryRunWritesNothing(t *testing.T) {
	opts := repoFor(t, "vault", fixture("vault"))
	opts.DryRun = true
	rep, err := importNow(context.Background(), opts)
	if err != nil || rep.Imported != 3 || rep.Verified != 1 {
		t.Fatalf("dry run: %+v %v", rep, err)
	}
	if got := lines(t, opts); len(got) != 0 {
		t.Fatalf("dry run wrote %d lines", len(got))
	}
}
