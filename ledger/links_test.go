package ledger

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOwnedFilesFollowNoLink: a journal directory that is a symbolic link
// out of the repository contributes nothing to a commit. The old listing
// followed it, so auto-commit put outside files into the repository.
func TestOwnedFilesFollowNoLink(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	mem := filepath.Join(root, "agents", "a", "memory")
	if err := os.MkdirAll(filepath.Join(mem, "journal"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mem, "journal", "2026-11-21.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "2026-11-20.jsonl"), []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(mem, "journal", "archive")); err != nil {
		t.Fatal(err)
	}
	got, err := ownedFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "agents/a/memory/journal/2026-11-21.jsonl" {
		t.Fatalf("owned files %v, want the journal only", got)
	}
}
