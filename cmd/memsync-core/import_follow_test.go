package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestImportFollowsEditsAndRemovals: a Basic Memory observation edited in
// the source supersedes its earlier import and one removed from a note
// still there is retired, each said in the summary; after a sync, search
// finds the new version and neither the old one nor the removed one.
func TestImportFollowsEditsAndRemovals(t *testing.T) {
	src := t.TempDir()
	if err := os.CopyFS(src, os.DirFS(importFixture("basic-memory"))); err != nil {
		t.Fatal(err)
	}
	note := filepath.Join(src, "coffee-brewing-methods.md")
	repo := initRepo(t, "a")
	iv := invocation{now: time.Now()}
	imp := func(step string, want string, flags ...string) {
		t.Helper()
		r := iv.run(t, append([]string{"import", "basic-memory", src, "--agent", "a", "--repo", repo}, flags...)...)
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Fatalf("%s: exit %d, want %q in\n%s%s", step, r.code, want, r.stdout, r.stderr)
		}
	}
	imp("first import", "imported 6 memories")
	recs := importedRecords(t, repo, "a")
	old, decision := byText(t, recs, "94C"), byText(t, recs, "burr grinder")

	data, err := os.ReadFile(note)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "Water at 94C", "Water at 92C", 1)
	if err := os.WriteFile(note, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	imp("after an edit", "imported 1 memory (superseding 1 earlier versions)")
	removed := strings.Replace(edited, "- [decision] Use the burr grinder for every brew (tested twice)\n", "", 1)
	if err := os.WriteFile(note, []byte(removed), 0o644); err != nil {
		t.Fatal(err)
	}
	imp("a dry run after a removal", "would import 0 memories; would retire 1 removed from the source", "--dry-run")
	imp("after a removal", "imported 0 memories; retired 1 removed from the source")
	imp("once more", "imported 0 memories; skipped")

	if r := iv.run(t, "sync", "--once", "--repo", repo); r.code != 0 {
		t.Fatalf("sync: %d %s", r.code, r.stderr)
	}
	now := byText(t, importedRecords(t, repo, "a"), "92C")
	if _, ok := findHit(searchJSON(t, iv, repo, "a", "Water at 92C extracts well"), now.UUID); !ok {
		t.Error("search does not find the edited observation")
	}
	if _, ok := findHit(searchJSON(t, iv, repo, "a", "Water at 94C extracts well"), old.UUID); ok {
		t.Error("search still finds the version the edit replaced")
	}
	if _, ok := findHit(searchJSON(t, iv, repo, "a", "Use the burr grinder for every brew"), decision.UUID); ok {
		t.Error("search still finds the removed observation")
	}
}
