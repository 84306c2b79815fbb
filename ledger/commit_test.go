package ledger

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
)

// git runs the git command line in dir as a person would, failing the test
// on error.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := gitErr(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func gitErr(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Person", "GIT_AUTHOR_EMAIL=person@example.com",
		"GIT_COMMITTER_NAME=Person", "GIT_COMMITTER_EMAIL=person@example.com", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func needGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git command line not installed")
	}
}

// newRepo makes a work tree with a first commit by a person (a README).
func newRepo(t testing.TB) string {
	t.Helper()
	needGit(t)
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write(t, dir, "README.md", "memory repository\n")
	git(t, dir, "add", "README.md")
	git(t, dir, "commit", "-q", "-m", "init")
	return dir
}

func write(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendLine(t testing.TB, root, agent, text string, ts time.Time) string {
	t.Helper()
	rec := &journal.Record{TS: ts, Agent: agent, Kind: journal.KindObservation, Text: text}
	if _, err := journal.Append(filepath.Join(root, "agents", agent, "memory", "journal"), rec, journal.AppendOptions{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	return rec.UUID
}

func committer(t testing.TB, root string) *Committer {
	t.Helper()
	c, err := NewCommitter(CommitterOptions{Root: root, Now: func() time.Time { return time.Unix(1800000000, 0).UTC() }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func lsTree(t testing.TB, dir, rev string) []string {
	t.Helper()
	out := strings.Fields(git(t, dir, "ls-tree", "-r", "--name-only", rev))
	sort.Strings(out)
	return out
}

var day = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

func TestCommitOnlyOwnedPaths(t *testing.T) {
	dir := newRepo(t)
	appendLine(t, dir, "a", "first", day)
	appendLine(t, dir, "a", "second", day.Add(24*time.Hour))
	write(t, dir, "agents/a/memory/journal/archive/2026-11-01.jsonl", `{"ts":"2026-11-01T00:00:00Z","agent":"a","kind":"fact","text":"old"}`+"\n")
	write(t, dir, "agents/a/memory/MEMORY.md", "# Memory\n")
	write(t, dir, "agents/a/memory/entities/shaun.md", "# Shaun\n")
	// Never committed: host-local state, generated cache, temporaries, other files.
	write(t, dir, "agents/a/memory/sync/state.json", "{}\n")
	write(t, dir, "agents/a/memory/sync/outbox.jsonl", "\n")
	write(t, dir, "agents/a/memory/cache/GRAPHITI_FACTS.md", "# facts\n")
	write(t, dir, "agents/a/memory/journal/2026-11-20.jsonl.compact.tmp", "x\n")
	write(t, dir, "agents/a/memory/.MEMORY.md.compact.tmp", "x\n")
	write(t, dir, "agents/a/memory/notes.txt", "mine\n")
	write(t, dir, ".memsync/graph.db", "db")
	write(t, dir, "agents/bad name/memory/journal/2026-11-20.jsonl", "{}\n")

	res, err := committer(t, dir).CommitNow(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"agents/a/memory/MEMORY.md",
		"agents/a/memory/entities/shaun.md",
		"agents/a/memory/journal/2026-11-20.jsonl",
		"agents/a/memory/journal/2026-11-21.jsonl",
		"agents/a/memory/journal/archive/2026-11-01.jsonl",
	}
	if fmt.Sprint(res.Files) != fmt.Sprint(want) || res.Commit == "" {
		t.Fatalf("result %+v, want files %v", res, want)
	}
	if got := lsTree(t, dir, "HEAD"); fmt.Sprint(got) != fmt.Sprint(append([]string{"README.md"}, want...)) {
		t.Fatalf("HEAD tree %v", got)
	}
	if got := strings.TrimSpace(git(t, dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%H")); got != "memsync <memsync@localhost>|memsync <memsync@localhost>|"+res.Commit {
		t.Fatalf("author %q", got)
	}
	git(t, dir, "fsck", "--strict", "--no-progress")
	// git agrees the owned files are committed and the index is right.
	status := git(t, dir, "status", "--porcelain", "--untracked-files=all")
	for _, w := range want {
		if strings.Contains(status, w+"\n") {
			t.Fatalf("git status still lists %s:\n%s", w, status)
		}
	}
	for _, u := range []string{"sync/state.json", "cache/GRAPHITI_FACTS.md", ".memsync/graph.db", "notes.txt"} {
		if !strings.Contains(status, "?? ") || !strings.Contains(status, u) {
			t.Fatalf("git status should list %s as untracked:\n%s", u, status)
		}
	}
	if strings.TrimSpace(git(t, dir, "diff", "--cached", "--name-only")) != "" {
		t.Fatal("index differs from HEAD after a commit")
	}
	if !strings.Contains(git(t, dir, "reflog", "-1"), "commit: memsync: record memory of a") {
		t.Fatalf("reflog: %s", git(t, dir, "reflog", "-1"))
	}

	// Nothing new: no commit.
	res, err = committer(t, dir).CommitNow(context.Background(), "")
	if err != nil || res.Commit != "" {
		t.Fatalf("second commit: %+v, %v", res, err)
	}
}

func TestCommitFirstCommitAndDeletion(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "trunk")
	appendLine(t, dir, "a", "first", day)
	appendLine(t, dir, "b", "first", day)
	c := committer(t, dir)
	if _, err := c.CommitNow(context.Background(), "first"); err != nil {
		t.Fatal(err)
	}
	if got := git(t, dir, "rev-list", "--count", "trunk"); strings.TrimSpace(got) != "1" {
		t.Fatalf("commits on the unborn branch: %s", got)
	}
	if err := os.Remove(filepath.Join(dir, "agents/b/memory/journal/2026-11-20.jsonl")); err != nil {
		t.Fatal(err)
	}
	res, err := c.CommitNow(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Files) != "[agents/b/memory/journal/2026-11-20.jsonl]" {
		t.Fatalf("files %v", res.Files)
	}
	if got := lsTree(t, dir, "HEAD"); fmt.Sprint(got) != "[agents/a/memory/journal/2026-11-20.jsonl]" {
		t.Fatalf("tree after deletion: %v", got)
	}
	if s := git(t, dir, "status", "--porcelain"); s != "" {
		t.Fatalf("status: %s", s)
	}
	git(t, dir, "fsck", "--strict", "--no-progress")
}

func TestCommitWaitsForTheNewline(t *testing.T) {
	dir := newRepo(t)
	appendLine(t, dir, "a", "whole", day)
	path := filepath.Join(dir, "agents/a/memory/journal/2026-11-20.jsonl")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString(`{"ts":"2026-11-20T11:00:00Z","agent":"a","kind":"fact","te`)
	c := committer(t, dir)
	if _, err := c.CommitNow(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	blob := git(t, dir, "show", "HEAD:agents/a/memory/journal/2026-11-20.jsonl")
	if strings.Count(blob, "\n") != 1 || strings.Contains(blob, "te\n") || !strings.HasSuffix(blob, "\n") {
		t.Fatalf("committed %q", blob)
	}
	if !strings.Contains(git(t, dir, "status", "--porcelain"), "2026-11-20.jsonl") {
		t.Fatal("git should see the partial line as an uncommitted change")
	}
	f.WriteString(`xt":"done"}` + "\n")
	res, err := c.CommitNow(context.Background(), "")
	if err != nil || res.Commit == "" {
		t.Fatalf("%+v %v", res, err)
	}
	if blob := git(t, dir, "show", "HEAD:agents/a/memory/journal/2026-11-20.jsonl"); strings.Count(blob, "\n") != 2 {
		t.Fatalf("committed %q", blob)
	}
	if s := git(t, dir, "status", "--porcelain"); s != "" {
		t.Fatalf("status: %s", s)
	}
}

func TestCommitSkipsWhenGitIsBusy(t *testing.T) {
	dir := newRepo(t)
	appendLine(t, dir, "a", "x", day)
	head := git(t, dir, "rev-parse", "HEAD")
	lock := filepath.Join(dir, ".git", "index.lock")
	write(t, dir, ".git/index.lock", "")
	_, err := committer(t, dir).CommitNow(context.Background(), "")
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("err %v, want ErrLocked", err)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatal("the person's index.lock was removed")
	}
	os.Remove(lock)
	write(t, dir, ".git/refs/heads/main.lock", "")
	if _, err := committer(t, dir).CommitNow(context.Background(), ""); !errors.Is(err, ErrLocked) {
		t.Fatalf("ref lock held: err %v", err)
	}
	if _, err := os.Stat(lock); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("our index.lock was left behind")
	}
	os.Remove(filepath.Join(dir, ".git/refs/heads/main.lock"))
	write(t, dir, ".git/MERGE_HEAD", head)
	if _, err := committer(t, dir).CommitNow(context.Background(), ""); !errors.Is(err, ErrLocked) {
		t.Fatalf("merge in progress: err %v", err)
	}
	os.Remove(filepath.Join(dir, ".git/MERGE_HEAD"))
	if git(t, dir, "rev-parse", "HEAD") != head {
		t.Fatal("HEAD moved while git was busy")
	}
	if res, err := committer(t, dir).CommitNow(context.Background(), ""); err != nil || res.Commit == "" {
		t.Fatalf("after the lock went: %+v %v", res, err)
	}
}

// A person's staged work stays staged and is not committed by memsync; the
// person's next commit does not undo memsync's.
func TestCommitLeavesAPersonsStagedWorkAlone(t *testing.T) {
	dir := newRepo(t)
	write(t, dir, "notes.md", "draft\n")
	git(t, dir, "add", "notes.md")
	write(t, dir, "README.md", "changed, not staged\n")
	appendLine(t, dir, "a", "x", day)
	res, err := committer(t, dir).CommitNow(context.Background(), "")
	if err != nil || res.Commit == "" {
		t.Fatal(res, err)
	}
	if got := lsTree(t, dir, "HEAD"); fmt.Sprint(got) != "[README.md agents/a/memory/journal/2026-11-20.jsonl]" {
		t.Fatalf("memsync committed %v", got)
	}
	if got := git(t, dir, "status", "--porcelain"); got != " M README.md\nA  notes.md\n" {
		t.Fatalf("status %q", got)
	}
	// The person commits their work on top; memsync's lines stay.
	appendLine(t, dir, "a", "y", day)
	git(t, dir, "commit", "-q", "-m", "person's notes")
	if got := lsTree(t, dir, "HEAD"); fmt.Sprint(got) != "[README.md agents/a/memory/journal/2026-11-20.jsonl notes.md]" {
		t.Fatalf("after the person's commit %v", got)
	}
	if n := strings.Count(git(t, dir, "show", "HEAD:agents/a/memory/journal/2026-11-20.jsonl"), "\n"); n != 1 {
		t.Fatalf("person's commit changed the journal: %d lines", n)
	}
	// memsync goes on from the person's HEAD.
	res, err = committer(t, dir).CommitNow(context.Background(), "")
	if err != nil || res.Commit == "" {
		t.Fatal(res, err)
	}
	if parent := strings.TrimSpace(git(t, dir, "log", "-1", "--format=%s", "HEAD~1")); parent != "person's notes" {
		t.Fatalf("parent %q", parent)
	}
	if got := git(t, dir, "status", "--porcelain"); got != " M README.md\n" {
		t.Fatalf("status %q", got)
	}
	git(t, dir, "fsck", "--strict", "--no-progress")
}

func TestCommitOnAHEADThatMoved(t *testing.T) {
	dir := newRepo(t)
	appendLine(t, dir, "a", "x", day)
	r, err := openRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h, err := r.readHead()
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "other.md", "x\n")
	git(t, dir, "add", "other.md")
	git(t, dir, "commit", "-q", "-m", "moved")
	if err := r.updateRef(h, h.commit, "x", day); !errors.Is(err, errHeadMoved) {
		t.Fatalf("stale HEAD: %v", err)
	}
	// A person committing the journal first leaves memsync nothing to do.
	git(t, dir, "add", "agents")
	git(t, dir, "commit", "-q", "-m", "person took the journal")
	if res, err := committer(t, dir).CommitNow(context.Background(), ""); err != nil || res.Commit != "" {
		t.Fatalf("%+v %v", res, err)
	}
	// Detached HEAD: memsync does not commit on it (the next checkout of a
	// branch would leave that commit behind); see detached_test.go.
	git(t, dir, "checkout", "-q", "--detach")
	appendLine(t, dir, "a", "y", day)
	head := git(t, dir, "rev-parse", "HEAD")
	if res, err := committer(t, dir).CommitNow(context.Background(), ""); !errors.Is(err, ErrDetached) || res.Commit != "" {
		t.Fatal(res, err)
	}
	if got := git(t, dir, "rev-parse", "HEAD"); got != head {
		t.Fatalf("detached HEAD moved from %s to %s", head, got)
	}
}

// A person commits in a loop while agents append and the Committer runs on
// a short interval: every commit of both lands, the repository stays sound,
// and in the end every journal line is committed.
func TestCommitterRunsBesideAPerson(t *testing.T) {
	dir := newRepo(t)
	c, err := NewCommitter(CommitterOptions{Root: dir, Interval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()

	var wg sync.WaitGroup
	wg.Add(2)
	var uuids []string
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			uuids = append(uuids, appendLine(t, dir, "a", fmt.Sprintf("line %d", i), day))
			time.Sleep(200 * time.Microsecond)
		}
	}()
	personCommits := 0
	go func() {
		defer wg.Done()
		for i := 0; i < 15; i++ {
			write(t, dir, fmt.Sprintf("person/%d.md", i), "x\n")
			// The person retries when memsync holds the lock, as people do.
			for {
				if _, err := gitErr(dir, "add", fmt.Sprintf("person/%d.md", i)); err != nil {
					time.Sleep(time.Millisecond)
					continue
				}
				if out, err := gitErr(dir, "commit", "-q", "-m", fmt.Sprintf("person %d", i)); err != nil {
					if strings.Contains(out, "index.lock") || strings.Contains(out, ".lock") {
						time.Sleep(time.Millisecond)
						continue
					}
					t.Errorf("person commit: %v\n%s", err, out)
				}
				break
			}
			personCommits++
		}
	}()
	wg.Wait()
	time.Sleep(50 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	git(t, dir, "fsck", "--strict", "--no-progress")
	log := git(t, dir, "log", "--format=%an %s")
	if n := strings.Count(log, "Person person "); n != personCommits {
		t.Fatalf("%d person commits in the log, %d made:\n%s", n, personCommits, log)
	}
	if !strings.Contains(log, "memsync memsync: record memory of a") {
		t.Fatalf("no memsync commit:\n%s", log)
	}
	blob := git(t, dir, "show", "HEAD:agents/a/memory/journal/2026-11-20.jsonl")
	for _, u := range uuids {
		if !strings.Contains(blob, u) {
			t.Fatalf("%s not committed", u)
		}
	}
	if s := git(t, dir, "status", "--porcelain"); s != "" {
		t.Fatalf("status after the final commit: %q", s)
	}
}

func TestOwned(t *testing.T) {
	for rel, want := range map[string]bool{
		"agents/a/memory/MEMORY.md":                        true,
		"agents/a/memory/entities/x.md":                    true,
		"agents/a/memory/journal/2026-01-01.jsonl":         true,
		"agents/a/memory/journal/archive/2026-01-01.jsonl": true,
		"agents/a/memory/journal/.x.jsonl":                 false,
		"agents/a/memory/journal/x.jsonl.compact.tmp":      false,
		"agents/a/memory/sync/state.json":                  false,
		"agents/a/memory/sync/outbox.jsonl":                false,
		"agents/a/memory/cache/GRAPHITI_FACTS.md":          false,
		"agents/a/memory/cache/GRAPHITI_ENTITIES/x.md":     false,
		"agents/a/memory/entities/sub/x.md":                false,
		"agents/-a/memory/MEMORY.md":                       false,
		"agents/a/MEMORY.md":                               false,
		".memsync/graph.db":                                false,
		"MEMORY.md":                                        false,
	} {
		if Owned(rel) != want {
			t.Errorf("Owned(%q) = %v", rel, !want)
		}
	}
}

// While a person's "git commit" waits in the editor, memsync does not move
// HEAD under it (which would make the person's commit fail).
func TestCommitWaitsForAPersonsEditor(t *testing.T) {
	dir := newRepo(t)
	appendLine(t, dir, "a", "x", day)
	write(t, dir, "notes.md", "x\n")
	git(t, dir, "add", "notes.md")
	signal := filepath.Join(t.TempDir(), "editing")
	release := filepath.Join(t.TempDir(), "release")
	editor := filepath.Join(t.TempDir(), "editor.sh")
	write(t, filepath.Dir(editor), filepath.Base(editor),
		fmt.Sprintf("#!/bin/sh\ntouch %s\nwhile [ ! -e %s ]; do sleep 0.01; done\necho 'person message' > \"$1\"\n", signal, release))
	os.Chmod(editor, 0o755)
	cmd := exec.Command("git", "commit", "-q")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_EDITOR="+editor, "GIT_AUTHOR_NAME=Person", "GIT_AUTHOR_EMAIL=p@x",
		"GIT_COMMITTER_NAME=Person", "GIT_COMMITTER_EMAIL=p@x", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(signal); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("editor never started")
		}
	}
	if _, err := committer(t, dir).CommitNow(context.Background(), ""); !errors.Is(err, ErrLocked) {
		t.Fatalf("committed while the person's editor was open: %v", err)
	}
	write(t, filepath.Dir(release), filepath.Base(release), "")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("person's commit failed: %v\n%s", err, out)
	}
	res, err := committer(t, dir).CommitNow(context.Background(), "")
	if err != nil || res.Commit == "" {
		t.Fatalf("after the person's commit: %+v %v", res, err)
	}
	if got := strings.TrimSpace(git(t, dir, "log", "--format=%s", "-2")); got != "memsync: record memory of a\nperson message" {
		t.Fatalf("log %q", got)
	}
}

// Packed refs and objects (after git gc), and a linked worktree (whose .git
// is a file and whose refs live in the common directory).
func TestCommitAfterGCAndInALinkedWorktree(t *testing.T) {
	dir := newRepo(t)
	appendLine(t, dir, "a", "x", day)
	if _, err := committer(t, dir).CommitNow(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "gc", "-q", "--prune=now")
	if _, err := os.Stat(filepath.Join(dir, ".git/refs/heads/main")); !errors.Is(err, os.ErrNotExist) {
		t.Skip("git gc left the branch loose")
	}
	appendLine(t, dir, "a", "y", day)
	res, err := committer(t, dir).CommitNow(context.Background(), "")
	if err != nil || res.Commit == "" {
		t.Fatal(res, err)
	}
	if got := strings.TrimSpace(git(t, dir, "rev-parse", "main")); got != res.Commit {
		t.Fatalf("main at %s, want %s", got, res.Commit)
	}
	if got := uuids(collect(t, dir)); strings.Count(got, " ") != 2 { // x, then x and y
		t.Fatalf("history after gc: %s", got)
	}

	wt := filepath.Join(t.TempDir(), "wt")
	git(t, dir, "worktree", "add", "-q", "-b", "side", wt)
	appendLine(t, wt, "b", "in the linked worktree", day)
	res, err = committer(t, wt).CommitNow(context.Background(), "")
	if err != nil || res.Commit == "" {
		t.Fatal(res, err)
	}
	if got := strings.TrimSpace(git(t, dir, "rev-parse", "side")); got != res.Commit {
		t.Fatalf("side at %s, want %s", got, res.Commit)
	}
	if got := strings.TrimSpace(git(t, dir, "rev-parse", "main")); got == res.Commit {
		t.Fatal("the main worktree's branch moved")
	}
	if s := git(t, wt, "status", "--porcelain"); s != "" {
		t.Fatalf("worktree status %q", s)
	}
	if s := git(t, dir, "status", "--porcelain"); s != "" {
		t.Fatalf("main status %q", s)
	}
	git(t, dir, "fsck", "--strict", "--no-progress")
}
