package ledger

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/memsync"
)

func collect(t testing.TB, dir string) []memsync.Memory {
	t.Helper()
	var out []memsync.Memory
	err := HistoryRecords(dir, nil)(context.Background(), func(m memsync.Memory) error {
		out = append(out, m)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func uuids(ms []memsync.Memory) string {
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.UUID)
	}
	return strings.Join(ids, " ")
}

func TestHistoryRecoversDeletedAndRewrittenJournals(t *testing.T) {
	dir := newRepo(t)
	c := committer(t, dir)
	ctx := context.Background()
	gone := appendLine(t, dir, "a", "in a journal deleted later", day)
	kept := appendLine(t, dir, "a", "stays", day.Add(24*time.Hour))
	write(t, dir, "agents/a/memory/journal/archive/2026-11-01.jsonl",
		`{"uuid":"arch1","ts":"2026-11-01T00:00:00Z","agent":"a","kind":"fact","text":"archived"}`+"\n"+
			`{"uuid":"forged","ts":"2026-11-01T00:00:00Z","agent":"b","kind":"fact","text":"b in a's archive"}`+"\n"+
			"not json\n")
	if _, err := c.CommitNow(ctx, ""); err != nil {
		t.Fatal(err)
	}
	// Rewrite one journal (dropping a line), delete another.
	path := filepath.Join(dir, "agents/a/memory/journal/2026-11-21.jsonl")
	rewritten := appendLine(t, dir, "a", "dropped by a rewrite", day.Add(24*time.Hour))
	if _, err := c.CommitNow(ctx, ""); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(data), "\n")
	os.WriteFile(path, []byte(lines[0]), 0o644)
	os.Remove(filepath.Join(dir, "agents/a/memory/journal/2026-11-20.jsonl"))
	if _, err := c.CommitNow(ctx, ""); err != nil {
		t.Fatal(err)
	}
	// A person's commit in between, and an unrelated file, change nothing.
	write(t, dir, "notes.md", "x\n")
	git(t, dir, "add", "notes.md")
	git(t, dir, "commit", "-q", "-m", "notes")

	got := collect(t, dir)
	// Oldest commit first; archive before journals; each blob once.
	want := strings.Join([]string{"arch1", gone, kept, kept, rewritten}, " ")
	if uuids(got) != want {
		t.Fatalf("history yields\n%s\nwant\n%s", uuids(got), want)
	}
	if got[0].Path != "agents/a/memory/journal/archive/2026-11-01.jsonl" || got[0].Line != 1 ||
		got[1].Path != "agents/a/memory/journal/2026-11-20.jsonl" || got[4].Line != 2 {
		t.Fatalf("paths: %+v", got)
	}
	// The same answer every time.
	if again := collect(t, dir); uuids(again) != want {
		t.Fatalf("second walk %s", uuids(again))
	}
}

func TestHistoryOfAnEmptyRepository(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	if got := collect(t, dir); len(got) != 0 {
		t.Fatal(got)
	}
	if err := HistoryRecords(t.TempDir(), nil)(context.Background(), func(memsync.Memory) error { return nil }); err == nil {
		t.Fatal("no error for a directory without git")
	}
}

// Merges are walked parents first, whatever their order on disk, and a
// blob shared by both branches is read once.
func TestHistoryWalksMergesInOrder(t *testing.T) {
	dir := newRepo(t)
	c := committer(t, dir)
	ctx := context.Background()
	base := appendLine(t, dir, "a", "base", day)
	if _, err := c.CommitNow(ctx, ""); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "checkout", "-q", "-b", "side")
	side := appendLine(t, dir, "b", "on the side branch", day)
	if _, err := c.CommitNow(ctx, ""); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "checkout", "-q", "main")
	mainLine := appendLine(t, dir, "c", "on main", day)
	if _, err := c.CommitNow(ctx, ""); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "merge", "-q", "--no-edit", "side")
	got := uuids(collect(t, dir))
	for _, id := range []string{base, side, mainLine} {
		if strings.Count(got, id) != 1 {
			t.Fatalf("%s appears %d times in %s", id, strings.Count(got, id), got)
		}
	}
	if !strings.HasPrefix(got, base+" ") {
		t.Fatalf("the root commit's records should come first: %s", got)
	}
}

func TestHistoryStopsWhenTheConsumerFails(t *testing.T) {
	dir := newRepo(t)
	for i := 0; i < 3; i++ {
		appendLine(t, dir, "a", fmt.Sprint(i), day)
	}
	if _, err := committer(t, dir).CommitNow(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	stop := fmt.Errorf("enough")
	n := 0
	err := HistoryRecords(dir, nil)(context.Background(), func(memsync.Memory) error {
		n++
		return stop
	})
	if n != 1 || err == nil || !strings.Contains(err.Error(), "enough") {
		t.Fatalf("n=%d err=%v", n, err)
	}
}
