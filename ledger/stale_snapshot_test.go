package ledger

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A git merge (the exchange's own, left running by a daemon killed -9, or a
// person's git pull) can replace a journal with the union of both sides and
// move HEAD between the moment the Committer hashes the work tree and the
// moment it takes the index lock. The Committer must not then commit what it
// hashed before: on the merge commit that would delete the other host's
// lines from history, and every host merging it deletes them from its
// journal (issue 20, TestManyHostsOneMemory losing a record).
func TestCommitDoesNotCommitAJournalReplacedSinceItWasRead(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replace func(t *testing.T, dir, rel, content string)
	}{
		{"git replaces the file (new inode)", func(t *testing.T, dir, rel, content string) {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.WriteFile(p+".new", []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(p+".new", p); err != nil {
				t.Fatal(err)
			}
		}},
		{"git removes and recreates the file", func(t *testing.T, dir, rel, content string) {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			write(t, dir, rel, content)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := newRepo(t)
			appendLine(t, dir, "a", "committed before", day)
			c := committer(t, dir)
			if _, err := c.CommitNow(context.Background(), ""); err != nil {
				t.Fatal(err)
			}
			appendLine(t, dir, "a", "appended here", day)
			rel := "agents/a/memory/journal/2026-11-20.jsonl"
			ours, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
			if err != nil {
				t.Fatal(err)
			}
			theirs := `{"agent":"a","kind":"observation","scope":"private","text":"from the other host","ts":"2026-11-20T10:00:00Z","uuid":"mem_20261120T100000Z_a_otherhost-0001"}` + "\n"
			merged := string(ours) + theirs
			c.afterSnapshot = func() {
				// What git merge does meanwhile: write the union as a new
				// file, update the index, move HEAD.
				tc.replace(t, dir, rel, merged)
				git(t, dir, "add", rel)
				git(t, dir, "commit", "-q", "-m", "merge from the other host")
			}
			if _, err := c.CommitNow(context.Background(), ""); err != nil {
				t.Fatal(err)
			}
			if got := git(t, dir, "show", "HEAD:"+rel); !strings.Contains(got, "from the other host") {
				t.Fatalf("the commit dropped the other host's line that HEAD held:\n%s", got)
			}
			// And the work tree is committed as it is.
			c.afterSnapshot = nil
			if res, err := c.CommitNow(context.Background(), ""); err != nil || res.Commit != "" {
				t.Fatalf("work tree not committed as it is: %+v %v", res, err)
			}
		})
	}
}
